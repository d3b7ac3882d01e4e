//! `event-planning --store`: the run pauses and is saved in one process and resumes in
//! another, on SQLite and (when `DATABASE_URL` is set) PostgreSQL.

use agent_examples::event_planning::{HUMAN_ANSWER, PLAN};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_event-planning");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Starts a run that stops at the question; returns its ID.
fn start(url: &str) -> String {
    let out = run(&["--store", url]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(
        "=== [catering_agent] asks the user ===\nDo any guests have dietary restrictions?\n"
    ));
    let run_id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.strip_suffix(" is saved, paused"))
        .expect("the run id line")
        .to_owned();
    assert!(stdout.contains(&format!(
        "resume with: event-planning --store {url} --resume {run_id} --answer TEXT\n"
    )));
    run_id
}

fn resume(url: &str, run_id: &str) -> Output {
    run(&["--store", url, "--resume", run_id, "--answer", HUMAN_ANSWER])
}

async fn flow(url: &str) {
    let run_id = start(url);
    let list = text(&run(&["--store", url, "--list"]).stdout);
    assert!(
        list.contains(&format!("{run_id}  paused  event_planning\n")),
        "{list}"
    );

    let out = resume(url, &run_id);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.ends_with(&format!("=== plan ===\n{PLAN}\n")),
        "{stdout}"
    );

    let again = resume(url, &run_id);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        text(&again.stderr),
        format!("error: run `{run_id}` is finished, not paused: there is nothing to resume\n")
    );
    let unknown = resume(url, "no-such-run");
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(
        text(&unknown.stderr),
        "error: no run `no-such-run` is stored\n"
    );
    let list = text(&run(&["--store", url, "--list"]).stdout);
    assert!(
        list.contains(&format!("{run_id}  finished  event_planning\n")),
        "{list}"
    );

    // Two processes resume one run: it finishes once.
    let run_id = start(url);
    let racers: Vec<_> = (0..2)
        .map(|_| {
            Command::new(BIN)
                .args([
                    "--store",
                    url,
                    "--resume",
                    &run_id,
                    "--answer",
                    HUMAN_ANSWER,
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = racers
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let won = outs.iter().filter(|o| o.status.success()).count();
    assert_eq!(
        won,
        1,
        "{:?}",
        outs.iter().map(|o| text(&o.stderr)).collect::<Vec<_>>()
    );
    let lost = outs.iter().find(|o| !o.status.success()).unwrap();
    assert_eq!(lost.status.code(), Some(1));
    let message = text(&lost.stderr);
    assert!(
        message == format!("error: run `{run_id}` was already claimed by another worker\n")
            || message
                == format!(
                    "error: run `{run_id}` is finished, not paused: there is nothing to resume\n"
                ),
        "{message}"
    );

    // A tampered stored run is refused, and stays paused.
    let run_id = start(url);
    let store = agent_store::open(url).await.unwrap();
    let mut record = store.load(&run_id).await.unwrap();
    record.state = record.state.replacen(r#""hops":3"#, r#""hops":99999"#, 1);
    store.save(&record).await.unwrap();
    let refused = resume(url, &run_id);
    assert_eq!(refused.status.code(), Some(1));
    let message = text(&refused.stderr);
    assert!(
        message.starts_with(&format!(
            "error: stored run `{run_id}` is corrupt: the state's hop count (99999)"
        )),
        "{message}"
    );
    assert!(!message.contains("panicked"));
}

#[tokio::test]
async fn sqlite_flow() {
    let dir = std::env::temp_dir().join(format!("event-planning-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    flow(&url).await;
}

#[tokio::test]
async fn postgres_flow() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: PostgreSQL tests need DATABASE_URL");
        return;
    };
    flow(&url).await;
}
