//! Issue 56's "done when", in a real browser (headless Chromium over WebDriver; skipped with a
//! message without it): the main job recorded to SQLite (`plan-pipeline --store`) shows its
//! timeline with the plan generator's refused call, `collected_information` marked, and the
//! golden prompt rendered; an event-planning run paused in the same store shows the catering
//! question, an answer given in the page is recorded, and after a worker completes the run the
//! open page shows it completed without a reload.

#[path = "../../../agent-ui/tests/all/webdriver.rs"]
mod webdriver;

use agent_contracts::store::RunStatus;
use agent_examples::event_planning::HUMAN_ANSWER;
use std::process::Command;
use std::sync::Arc;

const PIPELINE: &str = env!("CARGO_BIN_EXE_plan-pipeline");
const EVENTS: &str = env!("CARGO_BIN_EXE_event-planning");
const GOLDEN: &str = include_str!("../../../tests/fixtures/plan_generator/expected_user_prompt.md");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_and_a_paused_run_in_the_inspector() {
    // The WebDriver client's reqwest is built with rustls and no provider of its own here.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Some(browser) = webdriver::Browser::start().await else {
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "inspector-{}-{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());

    // The main job, recorded.
    let out = Command::new(PIPELINE)
        .args(["--store", &url])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let recorded = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("=== recorded: run ")?
                .strip_suffix(" (completed) ===")
        })
        .expect("the recorded line")
        .to_owned();
    // An event-planning run, paused at its question.
    let out = Command::new(EVENTS)
        .args(["--store", &url])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let paused = stdout
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.strip_suffix(" is saved, paused"))
        .expect("the run id line")
        .to_owned();

    let store = agent_contracts::store::open(&url).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let inspector = agent_contracts::ui::Inspector::new(Arc::clone(&store));
    tokio::spawn(inspector.serve(listener));

    // The main job: `main_agent`, completed, its refused call marked, the golden prompt.
    browser.open(&format!("{base}/#/")).await;
    let row = browser
        .find(&format!("#runs tr[data-run='{recorded}']"))
        .await;
    let row_text = browser.text(&row).await;
    assert!(
        row_text.contains("completed") && row_text.contains("main_agent"),
        "{row_text}"
    );
    let link = browser
        .find(&format!("#runs tr[data-run='{recorded}'] a"))
        .await;
    browser.click(&link).await;
    let missing = browser
        .find("#timeline li.verdict-refused [data-pointer='/collected_information']")
        .await;
    assert_eq!(
        browser.attribute(&missing, "aria-invalid").await.as_deref(),
        Some("true")
    );
    let verdict = browser.find("#timeline li.verdict-refused .kind").await;
    assert!(
        browser
            .text(&verdict)
            .await
            .contains("run_plan_generator_agent")
    );
    let golden = serde_json::to_string(GOLDEN).unwrap();
    let shown = browser
        .script(&format!(
            "return [...document.querySelectorAll('#timeline li.prompt')].some((li) => \
             li.querySelector('.kind').textContent.endsWith('plan_generator_agent') && \
             li.querySelector('pre.prompt-text').textContent === {golden} && \
             [...li.querySelectorAll('.markdown h3')].some((h) => h.textContent.startsWith('Collected information for')));"
        ))
        .await;
    assert_eq!(shown, true, "the plan generator's golden prompt, rendered");

    // The paused run's transcript is kept beside it: the catering agent's prompt.
    let events = store.events(&paused, 0, 1_000).await.unwrap();
    assert!(
        events.iter().any(|e| e
            .event
            .contains(r#""agent":"catering_agent","kind":"rendered_prompt""#)),
        "{events:?}"
    );

    // The paused run: the catering question, answered in the page.
    browser.open(&format!("{base}/#/run/{paused}")).await;
    let question = browser.find("#question-text").await;
    assert_eq!(
        browser.text(&question).await,
        "Do any guests have dietary restrictions?"
    );
    let area = browser.find("#answer").await;
    browser.type_text(&area, HUMAN_ANSWER).await;
    browser.click(&browser.find("#send").await).await;
    browser.find("#answered").await;
    let stored = store.load(&paused).await.unwrap();
    assert_eq!(stored.status, RunStatus::Answered);
    assert_eq!(stored.answer.as_deref(), Some(HUMAN_ANSWER));

    // A worker completes it; the open page follows without a reload.
    browser
        .script("window.__not_reloaded = true; return true;")
        .await;
    let log = std::fs::File::create(dir.join("worker.log")).unwrap();
    let mut worker = Command::new(EVENTS)
        .args(["--store", &url, "--worker"])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    browser
        .wait_for(
            "the completed run",
            "return document.getElementById('run-status') !== null && document.getElementById('run-status').textContent === 'completed';",
        )
        .await;
    assert_eq!(
        browser
            .script("return window.__not_reloaded === true;")
            .await,
        true
    );
    worker.kill().unwrap();
    worker.wait().unwrap();
    assert_eq!(
        store.load(&paused).await.unwrap().status,
        RunStatus::Finished
    );
    browser.close().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
