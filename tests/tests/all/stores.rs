//! One suite, run against every store: memory, file, SQLite in a temp dir, and PostgreSQL
//! when `DATABASE_URL` is set (each test in its own schema).

use agent_contracts::store::FileStore;
use agent_contracts::store::{PostgresStore, SqliteStore};
use agent_contracts::{ChatModel, Error, ScriptedModel};
use agent_contracts::{
    model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
};
use agent_contracts::{
    store::CheckpointStore, store::Lease, store::MemoryStore, store::RunRecord, store::RunStatus,
    store::StoreError,
};
use agent_contracts::{workflow::WorkflowOutcome, workflow::WorkflowState};
use agent_examples::event_planning::{self, HUMAN_ANSWER, PLAN, REQUEST};
use std::path::PathBuf;
use std::str::FromStr as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Opens a fresh backend, and another instance on the same data ("another process").
pub(crate) type Opener =
    Box<dyn Fn() -> BoxFuture<'static, Arc<dyn CheckpointStore>> + Send + Sync>;

/// Removes a backend's data after a passing test (a failing one keeps it to look at).
pub(crate) type Cleanup = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

pub(crate) fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "agent-store-{tag}-{}-{n}-{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn remove_dir(dir: PathBuf) -> Cleanup {
    Box::new(move || Box::pin(async move { std::fs::remove_dir_all(dir).unwrap() }))
}

pub(crate) fn memory() -> Option<(Opener, Cleanup)> {
    let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
    let open: Opener = Box::new(move || {
        let store = store.clone();
        Box::pin(async move { store })
    });
    Some((open, Box::new(|| Box::pin(async {}))))
}

pub(crate) fn file() -> Option<(Opener, Cleanup)> {
    // One store value per folder: its lock serializes the tasks of this process.
    let dir = temp_dir("file");
    let store: Arc<dyn CheckpointStore> = Arc::new(FileStore::open(&dir).unwrap());
    let open: Opener = Box::new(move || {
        let store = store.clone();
        Box::pin(async move { store })
    });
    Some((open, remove_dir(dir)))
}

pub(crate) fn sqlite() -> Option<(Opener, Cleanup)> {
    let dir = temp_dir("sqlite");
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let open: Opener = Box::new(move || {
        let url = url.clone();
        Box::pin(async move {
            let store: Arc<dyn CheckpointStore> = Arc::new(SqliteStore::open(&url).await.unwrap());
            store
        })
    });
    Some((open, remove_dir(dir)))
}

pub(crate) fn postgres() -> Option<(Opener, Cleanup)> {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: PostgreSQL tests need DATABASE_URL");
        return None;
    };
    static N: AtomicU32 = AtomicU32::new(0);
    let schema = format!(
        "t{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        agent_contracts::store::now_ms()
    );
    let (url2, schema2) = (url.clone(), schema.clone());
    let open: Opener = Box::new(move || {
        let (url, schema) = (url.clone(), schema.clone());
        Box::pin(async move {
            let store = PostgresStore::connect_in_schema(&url, Some(&schema)).await;
            let store: Arc<dyn CheckpointStore> = Arc::new(store.unwrap());
            store
        })
    });
    Some((open, drop_schema(url2, schema2)))
}

fn drop_schema(url: String, schema: String) -> Cleanup {
    Box::new(move || {
        Box::pin(async move {
            let pool = sqlx::PgPool::connect(&url).await.unwrap();
            let sql = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
            sqlx::query(&sql).execute(&pool).await.unwrap();
            pool.close().await;
        })
    })
}

/// A model that does not answer `stuck_agent`: with no status it never answers (the process
/// "crashes" while it waits), with one it fails with that HTTP status.
struct Stuck {
    inner: ScriptedModel,
    stuck_agent: &'static str,
    status: Option<u16>,
}

impl ChatModel for Stuck {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        if request.agent == self.stuck_agent {
            return match self.status {
                None => Box::pin(std::future::pending()),
                Some(status) => Box::pin(async move {
                    Err(ModelError::Status {
                        status,
                        body: "overloaded".into(),
                        retry_after: None,
                        should_retry: None,
                    })
                }),
            };
        }
        self.inner.complete(request)
    }
}

async fn pause(store: Arc<dyn CheckpointStore>) -> WorkflowState {
    let workflow = event_planning::workflow();
    let model = Arc::new(event_planning::scripted_model());
    let runner = workflow.runner(model).with_store(store);
    match runner.start(REQUEST).await.unwrap() {
        WorkflowOutcome::NeedsInput { state, .. } => state,
        other => panic!("expected a question, got {other:?}"),
    }
}

async fn resume(store: Arc<dyn CheckpointStore>, run_id: &str) -> Result<WorkflowOutcome, Error> {
    let workflow = event_planning::workflow();
    let model = event_planning::script_after_question(ScriptedModel::default());
    let runner = workflow.runner(Arc::new(model)).with_store(store);
    runner.resume_run(run_id, HUMAN_ANSWER).await
}

fn store_error(result: Result<WorkflowOutcome, Error>) -> StoreError {
    match result {
        Err(Error::Store(e)) => e,
        other => panic!("expected a store error, got {other:?}"),
    }
}

async fn pause_and_resume_across_instances(open: Opener) {
    let state = pause(open().await).await;
    let stored = open().await.load(&state.run_id).await.unwrap();
    assert_eq!(stored.status, RunStatus::Paused);
    assert_eq!(stored.workflow, "event_planning");
    // The state is kept as text, byte for byte.
    assert_eq!(stored.state, serde_json::to_string(&state).unwrap());

    let Ok(WorkflowOutcome::Finished { output, .. }) = resume(open().await, &state.run_id).await
    else {
        panic!("expected the plan");
    };
    assert_eq!(output, PLAN);
    let done = open().await.load(&state.run_id).await.unwrap();
    assert_eq!(done.status, RunStatus::Finished);
    assert!(done.sequence > stored.sequence);

    let again = store_error(resume(open().await, &state.run_id).await);
    assert!(
        matches!(
            again,
            StoreError::NotPaused {
                status: RunStatus::Finished,
                ..
            }
        ),
        "{again}"
    );
    assert_eq!(
        again.to_string(),
        format!(
            "run `{}` is finished, not paused: there is nothing to resume",
            state.run_id
        )
    );
    let unknown = store_error(resume(open().await, "no-such-run").await);
    assert_eq!(unknown.to_string(), "no run `no-such-run` is stored");
    let runs = open().await.list().await.unwrap();
    assert_eq!(runs.len(), 1);
}

async fn stale_writer_conflicts(open: Opener) {
    let store = open().await;
    let mut record = RunRecord::new(
        "conflict-run",
        "w",
        RunStatus::Running,
        r#"{"b":1,"a":1.50}"#,
    );
    assert_eq!(store.save(&record).await.unwrap(), 1);
    let stale = store_error(Err(store.save(&record).await.unwrap_err().into()));
    assert!(
        matches!(
            stale,
            StoreError::Conflict {
                expected: 0,
                found: 1,
                ..
            }
        ),
        "{stale}"
    );
    record.sequence = 1;
    assert_eq!(store.save(&record).await.unwrap(), 2);
    let stale = store.save(&record).await.unwrap_err();
    assert_eq!(
        stale.to_string(),
        "run `conflict-run` was saved by another writer: expected sequence 1, found 2"
    );
    let loaded = open().await.load("conflict-run").await.unwrap();
    assert_eq!(loaded.state, r#"{"b":1,"a":1.50}"#);
    assert_eq!(loaded.sequence, 2);
    store.delete("conflict-run").await.unwrap();
    assert!(matches!(
        store.load("conflict-run").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.delete("conflict-run").await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn one_of_many_racing_resumers_wins(open: Opener) {
    let state = pause(open().await).await;
    // Tasks on a multi-threaded runtime, released together.
    let barrier = Arc::new(tokio::sync::Barrier::new(16));
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (store, barrier, run_id) = (open().await, barrier.clone(), state.run_id.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            resume(store, &run_id).await
        }));
    }
    let mut won = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(WorkflowOutcome::Finished { output, .. }) => {
                assert_eq!(output, PLAN);
                won += 1;
            }
            Err(Error::Store(StoreError::AlreadyClaimed { .. }))
            | Err(Error::Store(StoreError::NotPaused { .. })) => {}
            other => panic!("a loser got {other:?}"),
        }
    }
    assert_eq!(won, 1);
    let done = open().await.load(&state.run_id).await.unwrap();
    assert_eq!(done.status, RunStatus::Finished);
}

/// A change to a stored record.
type Edit = Box<dyn Fn(&mut RunRecord)>;

/// Rewrites the stored run (as someone with access to the table would).
async fn tamper(store: &Arc<dyn CheckpointStore>, run_id: &str, edit: impl Fn(&mut RunRecord)) {
    let mut record = store.load(run_id).await.unwrap();
    edit(&mut record);
    store.save(&record).await.unwrap();
}

async fn bad_rows_are_refused(open: Opener) {
    let store = open().await;
    let state = pause(store.clone()).await;
    let id = state.run_id.clone();
    let cases: [(&str, Edit); 4] = [
        (
            "truncated",
            Box::new(|r| r.state.truncate(r.state.len() / 2)),
        ),
        (
            "tampered",
            Box::new(|r| {
                r.state = r
                    .state
                    .replacen(r#""role":"user""#, r#""role":"system""#, 1)
            }),
        ),
        (
            "foreign workflow",
            Box::new(|r| r.workflow = "payroll".into()),
        ),
        (
            "foreign run",
            Box::new(|r| r.state = r.state.replace(&r.run_id, "another-run")),
        ),
    ];
    let original = store.load(&id).await.unwrap();
    for (name, edit) in cases {
        tamper(&store, &id, |r| {
            r.state = original.state.clone();
            r.workflow = original.workflow.clone();
            edit(r);
        })
        .await;
        let refused = store_error(resume(open().await, &id).await);
        assert!(
            matches!(refused, StoreError::Corrupt { .. }),
            "{name}: {refused}"
        );
        assert!(
            refused
                .to_string()
                .starts_with(&format!("stored run `{id}` is corrupt: ")),
            "{name}: {refused}"
        );
        // Refused before the claim: the run is still paused.
        assert_eq!(
            store.load(&id).await.unwrap().status,
            RunStatus::Paused,
            "{name}"
        );
    }
    tamper(&store, &id, |r| {
        r.state = original.state.clone();
        r.workflow = original.workflow.clone();
    })
    .await;
    assert!(matches!(
        resume(open().await, &id).await,
        Ok(WorkflowOutcome::Finished { .. })
    ));
}

async fn crash_resumes_from_last_completed_step(open: Opener) {
    let workflow = event_planning::workflow();
    let model = Stuck {
        inner: event_planning::scripted_model(),
        stuck_agent: "catering_agent",
        status: None,
    };
    let runner = workflow.runner(Arc::new(model)).with_store(open().await);
    let crashed =
        tokio::time::timeout(std::time::Duration::from_millis(300), runner.start(REQUEST));
    assert!(crashed.await.is_err(), "the run should hang at catering");
    drop(runner);

    let runs = listed(&*open().await).await;
    assert_eq!(runs.len(), 1);
    let stored = &runs[0];
    assert_eq!(stored.status, RunStatus::Running);
    let state = workflow.parse_state(&stored.state).unwrap();
    let done: Vec<&str> = (&state.upstream)
        .into_iter()
        .map(|p| p.producer.as_str())
        .collect();
    assert_eq!(done, ["venue_agent", "budget_agent"]);

    // A new process: only catering onward is scripted, so the finished steps are not rerun.
    let question = agent_contracts::Message::assistant(
        r#"{"user_input_needed": true, "user_prompt": "Do any guests have dietary restrictions?"}"#,
    );
    let model = ScriptedModel::default().script("catering_agent", [question]);
    let model = event_planning::script_after_question(model);
    let model = Arc::new(model);
    let recovered = workflow.runner(model.clone()).with_store(open().await);
    let outcome = recovered.recover_run(&stored.run_id).await.unwrap();
    assert!(
        matches!(outcome, WorkflowOutcome::NeedsInput { .. }),
        "{outcome:?}"
    );
    assert!(model.requests_of("venue_agent").is_empty());
    assert!(model.requests_of("budget_agent").is_empty());
    let finished = resume(open().await, &stored.run_id).await;
    assert!(
        matches!(finished, Ok(WorkflowOutcome::Finished { .. })),
        "{finished:?}"
    );
}

/// A model failure worth retrying loses nothing: a resumed run goes back to paused (answer it
/// again), a run between steps stays running (recover it). Any other failure marks it failed.
async fn transient_errors_lose_nothing(open: Opener) {
    let state = pause(open().await).await;
    let id = state.run_id.clone();
    let workflow = event_planning::workflow();
    let failing = |status| Stuck {
        inner: event_planning::script_after_question(ScriptedModel::default()),
        stuck_agent: "catering_agent",
        status: Some(status),
    };
    let runner = workflow
        .runner(Arc::new(failing(503)))
        .with_store(open().await);
    let failed = runner.resume_run(&id, HUMAN_ANSWER).await;
    assert!(
        matches!(&failed, Err(Error::Model(e)) if e.is_retryable()),
        "{failed:?}"
    );
    assert_eq!(
        open().await.load(&id).await.unwrap().status,
        RunStatus::Paused
    );
    assert!(matches!(
        resume(open().await, &id).await,
        Ok(WorkflowOutcome::Finished { .. })
    ));

    // Between steps: venue and budget are done when catering fails.
    let model = Stuck {
        inner: event_planning::scripted_model(),
        stuck_agent: "catering_agent",
        status: Some(529),
    };
    let runner = workflow.runner(Arc::new(model)).with_store(open().await);
    assert!(runner.start(REQUEST).await.is_err());
    let runs = listed(&*open().await).await;
    let stored = runs.iter().find(|r| r.run_id != id).unwrap();
    assert_eq!(stored.status, RunStatus::Running);
    let question = agent_contracts::Message::assistant(
        r#"{"user_input_needed": true, "user_prompt": "Do any guests have dietary restrictions?"}"#,
    );
    let model = ScriptedModel::default().script("catering_agent", [question]);
    let recovered = workflow.runner(Arc::new(model)).with_store(open().await);
    assert!(matches!(
        recovered.recover_run(&stored.run_id).await,
        Ok(WorkflowOutcome::NeedsInput { .. })
    ));

    // A request the provider refuses fails the same way every time: the run is failed.
    let state = pause(open().await).await;
    let runner = workflow
        .runner(Arc::new(failing(400)))
        .with_store(open().await);
    assert!(
        runner
            .resume_run(&state.run_id, HUMAN_ANSWER)
            .await
            .is_err()
    );
    let stored = open().await.load(&state.run_id).await.unwrap();
    assert_eq!(stored.status, RunStatus::Failed);
}

/// Rows edited in the table itself (`edit` runs `UPDATE ... SET <its argument>` on the run):
/// a status or sequence no run record has is refused.
async fn raw_rows(
    store: &dyn CheckpointStore,
    edit: impl Fn(&'static str) -> BoxFuture<'static, ()>,
) {
    let record = RunRecord::new("raw-run", "event_planning", RunStatus::Paused, "{}");
    store.save(&record).await.unwrap();
    let good = RunRecord::new("good-run", "event_planning", RunStatus::Paused, "{}");
    store.save(&good).await.unwrap();
    let edits = [
        ("status = 'bogus'", "its status `bogus` is not a run status"),
        (
            "status = 'paused', sequence = -1",
            "its sequence (-1) is negative",
        ),
    ];
    for (set, reason) in edits {
        edit(set).await;
        let refused = store.load("raw-run").await.unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("stored run `raw-run` is corrupt: {reason}")
        );
        // Listed in its place, named, beside the good rows.
        let runs = store.list().await.unwrap();
        assert_eq!(runs.len(), 2);
        let bad: Vec<String> = runs
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(bad, [format!("stored run `raw-run` is corrupt: {reason}")]);
        assert!(
            runs.iter()
                .any(|r| matches!(r, Ok(r) if r.run_id == "good-run"))
        );
    }
}

/// Every stored run, all readable.
async fn listed(store: &dyn CheckpointStore) -> Vec<RunRecord> {
    let runs = store.list().await.unwrap();
    runs.into_iter().map(Result::unwrap).collect()
}

#[tokio::test]
async fn sqlite_raw_rows_are_refused() {
    let dir = temp_dir("raw");
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let pool = store.pool().clone();
    raw_rows(&store, |set| {
        let pool = pool.clone();
        Box::pin(async move {
            let sql = format!("UPDATE agent_runs SET {set} WHERE run_id = 'raw-run'");
            sqlx::query(&sql).execute(&pool).await.unwrap();
        })
    })
    .await;
    // SQLite keeps a value of any type: one that does not decode is that row's error too.
    sqlx::query("UPDATE agent_runs SET sequence = 'seven' WHERE run_id = 'raw-run'")
        .execute(store.pool())
        .await
        .unwrap();
    let refused = store.load("raw-run").await.unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("stored run `raw-run` is corrupt: its row does not decode: "),
        "{refused}"
    );
    let runs = store.list().await.unwrap();
    assert!(
        matches!(&runs[..], [Err(StoreError::Corrupt { run_id, .. }), Ok(_)] | [Ok(_), Err(StoreError::Corrupt { run_id, .. })] if run_id == "raw-run")
    );
    store.pool().close().await;
    remove_dir(dir)().await;
}

/// A SQLite file of schema version 1 (before leases) is upgraded in place: its runs keep
/// their data and gain no owner, no lease and no takeover.
#[tokio::test]
async fn sqlite_version_1_is_upgraded() {
    let dir = temp_dir("upgrade");
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
        .unwrap()
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    for ddl in [
        "CREATE TABLE agent_store_schema (version BIGINT NOT NULL)",
        "INSERT INTO agent_store_schema (version) VALUES (1)",
        "CREATE TABLE agent_runs (run_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, \
         status TEXT NOT NULL, sequence BIGINT NOT NULL, state TEXT NOT NULL, \
         created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL)",
        "INSERT INTO agent_runs VALUES ('old-run', 'event_planning', 'paused', 3, '{}', 5, 6)",
    ] {
        sqlx::query(ddl).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let store = SqliteStore::open(&url).await.unwrap();
    let old = store.load("old-run").await.unwrap();
    assert_eq!(
        (old.status, old.sequence, old.created_ms),
        (RunStatus::Paused, 3, 5)
    );
    assert_eq!(
        (old.owner, old.lease_until_ms, old.takeovers, old.answer),
        (None, 0, 0, None)
    );
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM agent_store_schema ORDER BY version")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(versions, [1, agent_contracts::store::SCHEMA_VERSION]);
    store.pool().close().await;
    // Opened again, nothing is added twice.
    let again = SqliteStore::open(&url).await.unwrap();
    assert_eq!(again.load("old-run").await.unwrap().sequence, 3);
    again.pool().close().await;
    remove_dir(dir)().await;
}

/// A claim whose commit fails (a full disk; here a deferred constraint, checked at commit)
/// is not won, although the `UPDATE ... RETURNING` handed the row back: the run stays paused.
#[tokio::test]
async fn sqlite_claim_is_not_won_when_its_commit_fails() {
    let dir = temp_dir("commit");
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let record = RunRecord::new("claimed-run", "event_planning", RunStatus::Paused, "{}");
    store.save(&record).await.unwrap();
    for ddl in [
        "CREATE TABLE parent (id INTEGER PRIMARY KEY)",
        "CREATE TABLE child (pid INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TRIGGER fail_commit AFTER UPDATE ON agent_runs BEGIN INSERT INTO child VALUES (1); END",
    ] {
        sqlx::query(ddl).execute(store.pool()).await.unwrap();
    }
    let failed = store.claim("claimed-run", 1, &lease()).await.unwrap_err();
    assert!(failed.is_retryable(), "{failed}");
    assert!(
        failed.to_string().contains("FOREIGN KEY constraint failed"),
        "{failed}"
    );
    let stored = store.load("claimed-run").await.unwrap();
    assert_eq!((stored.status, stored.sequence), (RunStatus::Paused, 1));

    sqlx::query("DROP TRIGGER fail_commit")
        .execute(store.pool())
        .await
        .unwrap();
    let claimed = store.claim("claimed-run", 1, &lease()).await.unwrap();
    assert_eq!((claimed.status, claimed.sequence), (RunStatus::Running, 2));
    store.pool().close().await;
    remove_dir(dir)().await;
}

#[tokio::test]
async fn postgres_raw_rows_are_refused() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: PostgreSQL tests need DATABASE_URL");
        return;
    };
    let schema = format!(
        "raw{}_{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    );
    let store = PostgresStore::connect_in_schema(&url, Some(&schema))
        .await
        .unwrap();
    let pool = store.pool().clone();
    raw_rows(&store, |set| {
        let (pool, schema) = (pool.clone(), schema.clone());
        Box::pin(async move {
            let sql = format!("UPDATE {schema}.agent_runs SET {set} WHERE run_id = 'raw-run'");
            sqlx::query(&sql).execute(&pool).await.unwrap();
        })
    })
    .await;
    drop_schema(url, schema)().await;
}

/// A resume whose future is dropped mid-step (a cancelled call, a timeout) puts the run back
/// to paused, so the answer can be given again.
async fn dropped_resume_goes_back_to_paused(open: Opener) {
    let state = pause(open().await).await;
    let workflow = event_planning::workflow();
    let model = Stuck {
        inner: event_planning::script_after_question(ScriptedModel::default()),
        stuck_agent: "catering_agent",
        status: None,
    };
    let runner = workflow.runner(Arc::new(model)).with_store(open().await);
    let resumed = runner.resume_run(&state.run_id, HUMAN_ANSWER);
    let dropped = tokio::time::timeout(std::time::Duration::from_millis(200), resumed).await;
    assert!(dropped.is_err(), "the resume should hang at catering");
    let store = open().await;
    let mut status = RunStatus::Running;
    for _ in 0..100 {
        status = store.load(&state.run_id).await.unwrap().status;
        if status == RunStatus::Paused {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(status, RunStatus::Paused);
    assert!(matches!(
        resume(open().await, &state.run_id).await,
        Ok(WorkflowOutcome::Finished { .. })
    ));
}

/// A run whose workers died after their claims (their leases ended, no step saved) as often
/// as the limit allows is failed by the next claim, naming its step and the attempts, and is
/// never claimed again; a run one death short of the limit is driven.
async fn a_run_past_its_attempt_limit_fails(open: Opener) {
    let workflow = event_planning::workflow();
    let queue = workflow
        .runner(ScriptedModel::default())
        .with_store(open().await);
    let doomed = queue.enqueue(REQUEST).await.unwrap();
    let store = open().await;
    let die = |n: u64| Lease::new(format!("dead-{n}"), Duration::ZERO);
    for n in 1..=3 {
        let claimed = store.claim_next("event_planning", &die(n)).await;
        assert_eq!(claimed.unwrap().unwrap().attempts, n);
    }
    let limited = || {
        workflow
            .runner(event_planning::scripted_model())
            .with_store(store.clone())
            .with_max_attempts(3)
    };
    let error = limited().run_next().await.unwrap_err();
    assert!(
        matches!(&error, Error::AttemptsExhausted { agent, attempts: 3, run_id }
            if agent == "venue_agent" && *run_id == doomed),
        "{error}"
    );
    let failed = store.load(&doomed).await.unwrap();
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(failed.error, Some(error.to_string()));
    assert!(limited().run_next().await.unwrap().is_none());

    let lucky = queue.enqueue(REQUEST).await.unwrap();
    for n in 1..=2 {
        store.claim_next("event_planning", &die(n)).await.unwrap();
    }
    let Some(WorkflowOutcome::NeedsInput { state, .. }) = limited().run_next().await.unwrap()
    else {
        panic!("the third attempt is driven");
    };
    assert_eq!(state.run_id, lucky);
    let paused = store.load(&lucky).await.unwrap();
    assert_eq!((paused.attempts, paused.error), (0, None));
}

fn lease() -> Lease {
    Lease::new("test-worker", Duration::from_secs(60))
}

/// Store level: a claimed run is held by its lease; once the lease ends another worker takes
/// it over (counted), and the stale owner's renewals and saves are refused.
async fn leases_expire_and_runs_are_taken_over(open: Opener) {
    let store = open().await;
    let queued = RunRecord::new("leased-run", "event_planning", RunStatus::Queued, "{}");
    store.save(&queued).await.unwrap();
    let other = RunRecord::new("other-workflow", "payroll", RunStatus::Queued, "{}");
    store.save(&other).await.unwrap();
    let a = Lease::new("worker-a", Duration::from_millis(300));
    let b = Lease::new("worker-b", Duration::from_millis(300));

    let held = store
        .claim_next("event_planning", &a)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.run_id, "leased-run");
    assert_eq!(
        (held.status, held.sequence, held.takeovers),
        (RunStatus::Running, 2, 0)
    );
    assert_eq!(held.owner.as_deref(), Some("worker-a"));
    assert!(held.lease_until_ms >= agent_contracts::store::now_ms() + 200);
    assert_eq!(store.claim_next("event_planning", &b).await.unwrap(), None);
    store.renew("leased-run", &a).await.unwrap();
    let refused = store.renew("leased-run", &b).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "run `leased-run` is no longer leased to `worker-b`: another worker took it over"
    );

    tokio::time::sleep(Duration::from_millis(400)).await;
    let taken = store
        .claim_next("event_planning", &b)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((taken.sequence, taken.takeovers), (3, 1));
    assert_eq!(taken.owner.as_deref(), Some("worker-b"));
    assert!(matches!(
        store.renew("leased-run", &a).await,
        Err(StoreError::LeaseLost { .. })
    ));
    let stale = {
        let mut value = held;
        value.status = RunStatus::Finished;
        value
    };
    assert!(matches!(
        store.save(&stale).await,
        Err(StoreError::Conflict {
            expected: 2,
            found: 3,
            ..
        })
    ));
    // A save keeps the takeover count; a finished run is held by no one and is not runnable.
    let done = {
        let mut value = taken;
        value.status = RunStatus::Finished;
        value.owner = None;
        value.lease_until_ms = 0;
        value
    };
    store.save(&done).await.unwrap();
    let stored = store.load("leased-run").await.unwrap();
    assert_eq!(
        (stored.status, stored.takeovers, stored.owner),
        (RunStatus::Finished, 1, None)
    );
    assert!(matches!(
        store.renew("no-such-run", &a).await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(store.claim_next("event_planning", &b).await.unwrap(), None);
    assert_eq!(
        store
            .claim_next("payroll", &b)
            .await
            .unwrap()
            .unwrap()
            .run_id,
        "other-workflow"
    );
}

/// 16 workers race on `claim_next` over 40 queued runs: every run is claimed exactly once.
async fn racing_workers_claim_each_run_once(open: Opener) {
    let store = open().await;
    for n in 0..40 {
        let record = RunRecord::new(
            format!("race-{n:02}"),
            "event_planning",
            RunStatus::Queued,
            "{}",
        );
        store.save(&record).await.unwrap();
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(16));
    let mut tasks = Vec::new();
    for worker in 0..16 {
        let (store, barrier) = (open().await, barrier.clone());
        tasks.push(tokio::spawn(async move {
            let lease = Lease::new(format!("worker-{worker}"), Duration::from_secs(60));
            barrier.wait().await;
            let mut won = Vec::new();
            while let Some(run) = store.claim_next("event_planning", &lease).await.unwrap() {
                assert_eq!(run.owner.as_deref(), Some(lease.owner.as_str()));
                won.push(run.run_id);
            }
            won
        }));
    }
    let mut claimed = Vec::new();
    for task in tasks {
        claimed.extend(task.await.unwrap());
    }
    claimed.sort();
    let expected: Vec<String> = (0..40).map(|n| format!("race-{n:02}")).collect();
    assert_eq!(claimed, expected);
}

/// A worker that dies mid-step (its future dropped, its lease no longer renewed) leaves its
/// run to the next worker, which goes on from the last completed step; the answer is
/// submitted without running the run, and a worker finishes it.
async fn a_dead_workers_run_is_finished_by_another(open: Opener) {
    let workflow = event_planning::workflow();
    let short = || Lease::new("w", Duration::from_millis(300));
    let queue = workflow
        .runner(ScriptedModel::default())
        .with_store(open().await);
    let run_id = queue.enqueue(REQUEST).await.unwrap();
    assert_eq!(
        open().await.load(&run_id).await.unwrap().status,
        RunStatus::Queued
    );

    let stuck = Stuck {
        inner: event_planning::scripted_model(),
        stuck_agent: "catering_agent",
        status: None,
    };
    let dying = workflow
        .runner(stuck)
        .with_store(open().await)
        .with_lease(Lease::new("dying", Duration::from_millis(300)));
    let died = tokio::time::timeout(Duration::from_millis(400), dying.run_next()).await;
    assert!(died.is_err(), "the worker should hang at catering");
    drop(dying);
    let stranded = open().await.load(&run_id).await.unwrap();
    assert_eq!(
        (stranded.status, stranded.owner.as_deref()),
        (RunStatus::Running, Some("dying"))
    );

    let question = agent_contracts::Message::assistant(
        r#"{"user_input_needed": true, "user_prompt": "Do any guests have dietary restrictions?"}"#,
    );
    let model = Arc::new(ScriptedModel::default().script("catering_agent", [question]));
    let next = workflow
        .runner(model.clone())
        .with_store(open().await)
        .with_lease(short());
    let mut outcome = None;
    for _ in 0..50 {
        outcome = next.run_next().await.unwrap();
        if outcome.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        matches!(outcome, Some(WorkflowOutcome::NeedsInput { .. })),
        "{outcome:?}"
    );
    assert!(model.requests_of("venue_agent").is_empty());
    let paused = open().await.load(&run_id).await.unwrap();
    assert_eq!(
        (paused.status, paused.takeovers, paused.owner),
        (RunStatus::Paused, 1, None)
    );

    let answering = workflow
        .runner(ScriptedModel::default())
        .with_store(open().await);
    answering
        .submit_answer(&run_id, HUMAN_ANSWER)
        .await
        .unwrap();
    let again = answering.submit_answer(&run_id, HUMAN_ANSWER).await;
    assert!(
        matches!(
            again,
            Err(Error::Store(StoreError::NotPaused {
                status: RunStatus::Answered,
                ..
            }))
        ),
        "{again:?}"
    );
    let answered = open().await.load(&run_id).await.unwrap();
    assert_eq!(answered.answer.as_deref(), Some(HUMAN_ANSWER));
    let model = event_planning::script_after_question(ScriptedModel::default());
    let finisher = workflow
        .runner(model)
        .with_store(open().await)
        .with_lease(short());
    let Some(WorkflowOutcome::Finished { output, state }) = finisher.run_next().await.unwrap()
    else {
        panic!("expected the plan");
    };
    assert_eq!(output, PLAN);
    let steps: Vec<&str> = (&state.upstream)
        .into_iter()
        .map(|p| p.producer.as_str())
        .collect();
    assert_eq!(
        steps,
        [
            "venue_agent",
            "budget_agent",
            "catering_agent",
            "logistics_agent"
        ]
    );
    let done = open().await.load(&run_id).await.unwrap();
    assert_eq!(
        (done.status, done.takeovers, done.answer),
        (RunStatus::Finished, 1, None)
    );
    assert!(finisher.run_next().await.unwrap().is_none());
}

/// A worker whose run was taken from it (here: rewritten by another writer) stops at its next
/// lease renewal with `LeaseLost`, and its late writes change nothing.
async fn a_stale_owner_stops(open: Opener) {
    let workflow = event_planning::workflow();
    let queue = workflow
        .runner(ScriptedModel::default())
        .with_store(open().await);
    let run_id = queue.enqueue(REQUEST).await.unwrap();
    let stuck = Stuck {
        inner: event_planning::scripted_model(),
        stuck_agent: "catering_agent",
        status: None,
    };
    let slow = workflow
        .runner(stuck)
        .with_store(open().await)
        .with_lease(Lease::new("slow", Duration::from_millis(150)));
    let store = open().await;
    let intruder = async {
        // Once the slow worker saved its first steps, someone else takes the run.
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let stored = store.load(&run_id).await.unwrap();
            let state = workflow.parse_state(&stored.state).unwrap();
            if (&state.upstream)
                .into_iter()
                .any(|p| p.producer == "budget_agent")
            {
                let taken = {
                    let mut value = stored;
                    value.owner = Some("intruder".into());
                    value
                };
                store.save(&taken).await.unwrap();
                return taken.sequence + 1;
            }
        }
    };
    let (result, taken_at) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(5), slow.run_next()),
        intruder
    );
    let lost = result.expect("the stale owner should stop, not hang");
    assert!(
        matches!(&lost, Err(Error::Store(StoreError::LeaseLost { owner, .. })) if owner == "slow"),
        "{lost:?}"
    );
    let stored = store.load(&run_id).await.unwrap();
    assert_eq!(
        (stored.sequence, stored.owner.as_deref()),
        (taken_at, Some("intruder"))
    );
}

/// Pruning deletes only ended runs older than the age it is given.
async fn prune_deletes_old_ended_runs(open: Opener) {
    let store = open().await;
    for (id, status) in [
        ("old-finished", RunStatus::Finished),
        ("old-failed", RunStatus::Failed),
        ("old-paused", RunStatus::Paused),
        ("old-queued", RunStatus::Queued),
    ] {
        store
            .save(&RunRecord::new(id, "event_planning", status, "{}"))
            .await
            .unwrap();
    }
    assert_eq!(store.prune(Duration::from_secs(3600)).await.unwrap(), 0);
    // The old runs are 2 s old when the young one is saved; the young one has a whole second
    // between its save and the prune, so a loaded machine cannot age it past the cut.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let young = RunRecord::new(
        "young-finished",
        "event_planning",
        RunStatus::Finished,
        "{}",
    );
    store.save(&young).await.unwrap();
    assert_eq!(store.prune(Duration::from_secs(1)).await.unwrap(), 2);
    let mut kept: Vec<String> = listed(&*store)
        .await
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    kept.sort();
    assert_eq!(kept, ["old-paused", "old-queued", "young-finished"]);
}

/// Pages of runs, filtered by status, in the order of `list`.
async fn pages_of_runs(open: Opener) {
    let store = open().await;
    for n in 0..7 {
        let status = if n % 2 == 0 {
            RunStatus::Paused
        } else {
            RunStatus::Queued
        };
        let record = RunRecord::new(format!("page-{n}"), "event_planning", status, "{}");
        store.save(&record).await.unwrap();
    }
    let ids = |runs: Vec<Result<RunRecord, StoreError>>| -> Vec<String> {
        runs.into_iter().map(|r| r.unwrap().run_id).collect()
    };
    let mut page = agent_contracts::store::RunPage::first(3);
    let mut seen = Vec::new();
    loop {
        let runs = store.list_page(&page).await.unwrap();
        let Some(Ok(last)) = runs.last() else { break };
        page.after = Some((last.created_ms, last.run_id.clone()));
        seen.extend(ids(runs));
    }
    let all: Vec<String> = listed(&*store)
        .await
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(seen, all);
    assert_eq!(seen.len(), 7);
    let paused = agent_contracts::store::RunPage {
        status: Some(RunStatus::Paused),
        ..agent_contracts::store::RunPage::first(10)
    };
    assert_eq!(
        ids(store.list_page(&paused).await.unwrap()),
        ["page-0", "page-2", "page-4", "page-6"]
    );
    let page_2 = store.load("page-2").await.unwrap();
    let after = agent_contracts::store::RunPage {
        after: Some((page_2.created_ms, page_2.run_id)),
        ..paused
    };
    assert_eq!(
        ids(store.list_page(&after).await.unwrap()),
        ["page-4", "page-6"]
    );
    assert!(
        store
            .list_page(&agent_contracts::store::RunPage::first(0))
            .await
            .unwrap()
            .is_empty()
    );
}

/// A resumer killed right after its claim leaves the run running; once its lease ended,
/// `resume_run` (the CLI's `--resume`) takes it over instead of saying it is claimed.
async fn a_dead_resumers_run_is_resumed_again(open: Opener) {
    let state = pause(open().await).await;
    let store = open().await;
    let paused = store.load(&state.run_id).await.unwrap();
    // Long enough that a loaded machine still tries the resume below within the lease.
    let dead = Lease::new("dead-resumer", Duration::from_secs(2));
    store
        .claim(&state.run_id, paused.sequence, &dead)
        .await
        .unwrap();
    let held = store_error(resume(open().await, &state.run_id).await);
    assert!(matches!(held, StoreError::AlreadyClaimed { .. }), "{held}");
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let Ok(WorkflowOutcome::Finished { output, .. }) = resume(open().await, &state.run_id).await
    else {
        panic!("expected the plan");
    };
    assert_eq!(output, PLAN);
    let done = store.load(&state.run_id).await.unwrap();
    assert_eq!((done.status, done.takeovers), (RunStatus::Finished, 1));
}

macro_rules! suite {
    ($($backend:ident),*) => {$(
        mod $backend {
            macro_rules! case {
                ($name:ident) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn $name() {
                        match super::$backend() {
                            Some((open, cleanup)) => {
                                super::$name(open).await;
                                cleanup().await;
                            }
                            None => println!("skipped {}", stringify!($name)),
                        }
                    }
                };
            }
            case!(pause_and_resume_across_instances);
            case!(stale_writer_conflicts);
            case!(one_of_many_racing_resumers_wins);
            case!(bad_rows_are_refused);
            case!(crash_resumes_from_last_completed_step);
            case!(transient_errors_lose_nothing);
            case!(dropped_resume_goes_back_to_paused);
            case!(leases_expire_and_runs_are_taken_over);
            case!(racing_workers_claim_each_run_once);
            case!(a_dead_workers_run_is_finished_by_another);
            case!(a_stale_owner_stops);
            case!(prune_deletes_old_ended_runs);
            case!(pages_of_runs);
            case!(a_dead_resumers_run_is_resumed_again);
            case!(a_run_past_its_attempt_limit_fails);
        }
    )*};
}

suite!(memory, file, sqlite, postgres);

/// `sslmode=require` connects over TLS (the `rustls` feature) when the server offers it, and
/// an `sslmode` that is none is refused with the reason, before any connection.
#[tokio::test]
async fn postgres_over_tls() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: PostgreSQL tests need DATABASE_URL");
        return;
    };
    let join = if url.contains('?') { '&' } else { '?' };
    let bogus = agent_contracts::store::open(&format!("{url}{join}sslmode=sometimes")).await;
    let refused = bogus
        .err()
        .expect("an unknown sslmode is refused")
        .to_string();
    assert!(refused.contains("sometimes"), "{refused}");

    let plain = sqlx::PgPool::connect(&url).await.unwrap();
    let ssl: String = sqlx::query_scalar("SHOW ssl")
        .fetch_one(&plain)
        .await
        .unwrap();
    plain.close().await;
    if ssl != "on" {
        println!("skipped: the server at DATABASE_URL does not offer TLS");
        return;
    }
    let schema = format!(
        "tls{}_{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    );
    let tls = format!("{url}{join}sslmode=require");
    let store = PostgresStore::connect_in_schema(&tls, Some(&schema))
        .await
        .unwrap();
    let encrypted: bool =
        sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert!(encrypted);
    let record = RunRecord::new("tls-run", "event_planning", RunStatus::Queued, "{}");
    store.save(&record).await.unwrap();
    assert_eq!(
        store.load("tls-run").await.unwrap().status,
        RunStatus::Queued
    );
    store.pool().close().await;
    drop_schema(url, schema)().await;
}

/// A store on the application's own pool creates nothing until `migrate` is called.
#[tokio::test]
async fn stores_from_pools_migrate_explicitly() {
    let dir = temp_dir("from-pool");
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
        .unwrap()
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let store = SqliteStore::from_pool(pool.clone());
    let missing = store.load("any").await.unwrap_err();
    assert!(missing.to_string().contains("no such table"), "{missing}");
    store.migrate().await.unwrap();
    store.migrate().await.unwrap();
    let record = RunRecord::new("pooled", "event_planning", RunStatus::Queued, "{}");
    store.save(&record).await.unwrap();
    assert_eq!(
        store.load("pooled").await.unwrap().status,
        RunStatus::Queued
    );
    pool.close().await;
    remove_dir(dir)().await;

    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: PostgreSQL tests need DATABASE_URL");
        return;
    };
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    assert!(PostgresStore::from_pool(pool.clone(), Some("no-dashes")).is_err());
    let schema = format!(
        "pool{}_{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    );
    let store = PostgresStore::from_pool(pool.clone(), Some(&schema)).unwrap();
    assert!(store.load("any").await.unwrap_err().is_retryable());
    store.migrate().await.unwrap();
    store.save(&record).await.unwrap();
    assert_eq!(store.load("pooled").await.unwrap().sequence, 1);
    pool.close().await;
    drop_schema(url, schema)().await;
}

/// Issue 29's "a killed process's run becomes runnable when its lease expires (CLI and MCP
/// alike)", on MCP's side: an `agent-contract mcp` server killed right after its claim leaves
/// the run running; its client still holds the resume handle, which names the paused record's
/// sequence (`resume_paused`, what the MCP server calls). Once the lease ended, the handle's
/// answer takes the run over: the dead claim is the only change since the handle (one
/// sequence up, the state as paused).
#[tokio::test]
async fn a_resume_handle_takes_over_a_dead_resumers_run() {
    let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
    let state = pause(store.clone()).await;
    let paused = store.load(&state.run_id).await.unwrap();
    let handle = agent_contracts::workflow::PausedRun {
        run_id: state.run_id.clone(),
        sequence: paused.sequence,
    };
    let dead = Lease::new("dead-mcp-server", Duration::from_millis(100));
    store
        .claim(&state.run_id, paused.sequence, &dead)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let workflow = event_planning::workflow();
    let model = event_planning::script_after_question(ScriptedModel::default());
    let runner = workflow.runner(Arc::new(model)).with_store(store.clone());
    match runner.resume_paused(&handle, HUMAN_ANSWER).await {
        Ok(WorkflowOutcome::Finished { output, .. }) => assert_eq!(output, PLAN),
        other => panic!("the handle's question could not be answered: {other:?}"),
    }
}
