//! `event-planning --store`: the run pauses and is saved in one process and resumes in
//! another, on SQLite and (when `DATABASE_URL` is set) PostgreSQL.

use agent_contracts::store::CheckpointStore as _;
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
    let answer_done = run(&["--store", url, "--submit-answer", &run_id, "--answer", "x"]);
    assert_eq!(
        text(&answer_done.stderr),
        format!("error: run `{run_id}` is finished, not paused: there is nothing to resume\n")
    );
    let lonely = run(&["--store", url, "--answer", "x"]);
    assert_eq!(
        lonely.status.code(),
        Some(2),
        "`--answer` needs a run to answer"
    );
    let unknown = resume(url, "no-such-run");
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(
        text(&unknown.stderr),
        "error: no run `no-such-run` is stored\n"
    );
    let list = text(&run(&["--store", url, "--list"]).stdout);
    assert!(
        list.contains(&format!("{run_id}  completed  event_planning\n")),
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

    // An answered run (`--submit-answer`, or the inspector's form) runs now with `--resume`
    // alone, with its recorded answer; a paused one wants `--answer`, and an answered one
    // keeps its answer.
    let run_id = start(url);
    let paused = run(&["--store", url, "--resume", &run_id]);
    assert_eq!(paused.status.code(), Some(1));
    assert!(
        text(&paused.stderr).contains(&format!(
            "run `{run_id}` is paused: its question waits for an answer"
        )),
        "{}",
        text(&paused.stderr)
    );
    let submitted = run(&[
        "--store",
        url,
        "--submit-answer",
        &run_id,
        "--answer",
        HUMAN_ANSWER,
    ]);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    for again in [
        run(&["--store", url, "--submit-answer", &run_id, "--answer", "x"]),
        resume(url, &run_id),
    ] {
        assert_eq!(again.status.code(), Some(1));
        assert_eq!(
            text(&again.stderr),
            format!("error: run `{run_id}` is answered, not paused: there is nothing to resume\n")
        );
    }
    let out = run(&["--store", url, "--resume", &run_id]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.ends_with(&format!("=== plan ===\n{PLAN}\n")),
        "{stdout}"
    );
    let list = text(&run(&["--store", url, "--list"]).stdout);
    assert!(
        list.contains(&format!("{run_id}  completed  event_planning\n")),
        "{list}"
    );

    // The run records the fingerprint of each of its 8 contracts; one recorded under a
    // version the store does not keep is refused by name, and stays paused.
    let run_id = start(url);
    let store = agent_contracts::store::open(url).await.unwrap();
    let mut record = store.load(&run_id).await.unwrap();
    let mut fingerprints: std::collections::BTreeMap<String, String> =
        serde_json::from_str(record.contracts.as_deref().unwrap()).unwrap();
    assert_eq!(fingerprints.len(), 8, "{fingerprints:?}");
    assert!(fingerprints.values().all(|f| f.len() == 16));
    fingerprints.insert("budget_agent.input".into(), "00000000000000ff".into());
    record.contracts = Some(serde_json::to_string(&fingerprints).unwrap());
    store.save(&record).await.unwrap();
    let refused = resume(url, &run_id);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).starts_with(&format!(
            "error: run `{run_id}` cannot go on under the current `budget_agent.input` contract: at `$`, "
        )),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(
        store.load(&run_id).await.unwrap().status,
        agent_contracts::store::RunStatus::Paused
    );

    // A tampered stored run is refused, and stays paused.
    let run_id = start(url);
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

    // One corrupt row: `--list` names it on stderr and still lists every other run.
    let store = agent_contracts::store::SqliteStore::open(&url)
        .await
        .unwrap();
    let runs = store.list().await.unwrap();
    let victim = runs[0].as_ref().unwrap().run_id.clone();
    sqlx::query("UPDATE agent_runs SET status = 'bogus' WHERE run_id = ?1")
        .bind(&victim)
        .execute(store.pool())
        .await
        .unwrap();
    let listed = run(&["--store", &url, "--list"]);
    assert!(listed.status.success());
    assert_eq!(
        text(&listed.stderr),
        format!(
            "skipped: stored run `{victim}` is corrupt: its status `bogus` is not a run status\n"
        )
    );
    let stdout = text(&listed.stdout);
    assert_eq!(stdout.lines().count(), runs.len() - 1, "{stdout}");
    assert!(!stdout.contains(&victim));
}

/// A store URL's password never prints: not in a connection error, not in the resume hint,
/// not in a store's `Debug`.
#[tokio::test]
async fn store_url_passwords_never_print() {
    let unknown = run(&["--store", "mysql://app:s3cret-pw@db/runs", "--list"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        text(&unknown.stderr),
        "error: store backend failed: store url `mysql://app:***@db/runs` is none of `sqlite:PATH`, `postgres://...` and `file:DIR`\n"
    );

    let Some((url, schema)) = own_schema("secrets").await else {
        return;
    };
    // The server refuses an unknown role at once (an unreachable host would be retried for
    // the pool's acquire timeout).
    let (_, host) = url.split_once('@').unwrap();
    let unknown_role = format!("postgres://no_such_role:s3cret-pw@{host}&password=s3cret-pw");
    let refused = run(&["--store", &unknown_role]);
    // A store it cannot open is an I/O error.
    assert_eq!(refused.status.code(), Some(2));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.starts_with("error: store backend failed: "),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
    // The test server trusts every local user: any password connects.
    let with_password = url.replacen("://postgres@", "://postgres:s3cret-pw@", 1);
    assert_ne!(
        with_password, url,
        "DATABASE_URL should be postgres://postgres@..."
    );
    let out = run(&["--store", &with_password]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("resume with: event-planning --store postgres://postgres:***@"),
        "{stdout}"
    );
    assert!(!stdout.contains("s3cret-pw") && !text(&out.stderr).contains("s3cret-pw"));
    let store = agent_contracts::store::PostgresStore::connect(&with_password)
        .await
        .unwrap();
    assert!(!format!("{store:?}").contains("s3cret-pw"));
    store.pool().close().await;
    drop_schema(&schema).await;
}

/// A schema of its own on the `DATABASE_URL` server, and a URL whose connections use it
/// (`search_path`), so tests neither see nor change the tables of other runs; `None` without
/// `DATABASE_URL`. Drop the schema with [`drop_schema`].
pub(crate) async fn own_schema(tag: &str) -> Option<(String, String)> {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: PostgreSQL tests need DATABASE_URL");
        return None;
    };
    let schema = format!(
        "{tag}_{}_{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    );
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let sql = format!("CREATE SCHEMA {schema}");
    sqlx::query(&sql).execute(&pool).await.unwrap();
    pool.close().await;
    let join = if url.contains('?') { '&' } else { '?' };
    Some((
        format!("{url}{join}options=-c%20search_path%3D{schema}"),
        schema,
    ))
}

/// Drops a schema [`own_schema`] made.
pub(crate) async fn drop_schema(schema: &str) {
    let url = std::env::var("DATABASE_URL").unwrap();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let sql = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
    sqlx::query(&sql).execute(&pool).await.unwrap();
    pool.close().await;
}

#[tokio::test]
async fn postgres_flow() {
    let Some((url, schema)) = own_schema("flow").await else {
        return;
    };
    flow(&url).await;
    drop_schema(&schema).await;
}
