//! The page in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`,
//! which `.ci/run` installs) driven over WebDriver. It loads the runs, opens a run whose call
//! was refused and finds the missing field marked (`aria-invalid="true"`) and the rendered
//! prompt, shows a model's `<script>` as text, refuses an empty answer with the field named,
//! records an answer, and shows a run completed by a worker without a reload. Skipped, with a
//! message, only when chromium or chromedriver is missing.

use crate::support::{Fixture, start};
use crate::webdriver::Browser;
use agent_contracts_runtime::store::RunStatus;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_in_a_browser() {
    let Some(browser) = Browser::start().await else {
        return;
    };
    let fixture = Fixture::sqlite("browser").await;
    let server = start(fixture.store.clone(), agent_contracts_ui::Access::default()).await;

    // The runs, newest first.
    browser.open(&format!("{}/#/", server.base)).await;
    let first = browser
        .find("#runs tbody tr:first-child td:first-child a")
        .await;
    assert_eq!(browser.text(&first).await, fixture.paused);
    let rows = browser
        .script("return document.querySelectorAll('#runs tbody tr').length;")
        .await;
    assert_eq!(rows, 3);

    // The refused call: the missing field marked where it should have been, the prompt
    // rendered (a heading and a list item, not the markdown's marks).
    let link = browser
        .find(&format!("#runs tr[data-run='{}'] a", fixture.refused))
        .await;
    browser.click(&link).await;
    let missing = browser
        .find("#timeline li.verdict-refused [data-pointer='/collected_information']")
        .await;
    assert_eq!(
        browser.attribute(&missing, "aria-invalid").await.as_deref(),
        Some("true")
    );
    assert!(
        browser
            .text(&missing)
            .await
            .contains("collected_information")
    );
    let verdict = browser.find("#timeline li.verdict-refused").await;
    let text = browser.text(&verdict).await;
    assert!(text.contains("run_plan_generator_agent"), "{text}");
    assert!(text.contains("collected_information"), "{text}");
    let heading = browser.find("#timeline .markdown h3").await;
    assert_eq!(browser.text(&heading).await, "Task");

    // A model's `<script>` is text: shown, never run.
    browser
        .open(&format!("{}/#/run/{}", server.base, fixture.recorded))
        .await;
    browser
        .wait_for(
            "the answer",
            "return document.getElementById('timeline') !== null && document.getElementById('timeline').textContent.includes('<script>alert(1)</script>');",
        )
        .await;
    let scripts = browser
        .script("return document.querySelectorAll('script').length;")
        .await;
    assert_eq!(scripts, 1, "only the page's own script");

    // The paused run: its question, an empty answer refused with the field named, an answer
    // recorded.
    browser
        .open(&format!("{}/#/run/{}", server.base, fixture.paused))
        .await;
    let question = browser.find("#question-text").await;
    assert_eq!(
        browser.text(&question).await,
        "How many guests need catering?"
    );
    let send = browser.find("#send").await;
    browser.click(&send).await;
    let error = browser.find("#answer-error").await;
    browser
        .wait_for(
            "the refusal",
            "return document.getElementById('answer-error').textContent.includes('answer');",
        )
        .await;
    assert!(browser.text(&error).await.starts_with("Refused: answer"));
    let area = browser.find("#answer").await;
    assert_eq!(
        browser.attribute(&area, "aria-invalid").await.as_deref(),
        Some("true")
    );
    assert_eq!(
        fixture.store.load(&fixture.paused).await.unwrap().status,
        RunStatus::Paused
    );
    browser.type_text(&area, "40 guests, two vegetarian").await;
    browser.click(&send).await;
    browser.find("#answered").await;
    let stored = fixture.store.load(&fixture.paused).await.unwrap();
    assert_eq!(stored.status, RunStatus::Answered);
    assert_eq!(stored.answer.as_deref(), Some("40 guests, two vegetarian"));

    // A worker completes the run: the open page says so without a reload.
    browser
        .script("window.__not_reloaded = true; return true;")
        .await;
    let mut record = stored;
    record.status = RunStatus::Finished;
    record.answer = None;
    fixture.store.save(&record).await.unwrap();
    browser
        .wait_for(
            "the completed status",
            "return document.getElementById('run-status') !== null && document.getElementById('run-status').textContent === 'completed';",
        )
        .await;
    assert_eq!(
        browser
            .script("return window.__not_reloaded === true;")
            .await,
        true
    );
    browser.close().await;
    fixture.close().await;
}
