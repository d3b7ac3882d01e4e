//! Runs' transcript events on the memory, SQLite and PostgreSQL stores (`DATABASE_URL`, each
//! test in its own schema; skipped with a message without it):
//!
//! - appended events come back in `seq` order, after a `seq`, at most a limit; an event whose
//!   `seq` is held already keeps its first text; a run the store does not hold is not found;
//!   the events go with the run (delete, prune);
//! - a runtime run recorded with `RunRecorder`: listed under its first agent's name, running
//!   and then finished (or failed with its reason), its events in order with the rendered
//!   answer; past its limit the rest is dropped and the drop said in the record and a last
//!   `dropped` event; API keys and bearer tokens are never written.

use agent_contracts_runtime::recorder::{RecordLimits, Redactor, RunRecorder};
use agent_contracts_runtime::store::{
    CheckpointStore, MemoryStore, RunRecord, RunStatus, StoreError, StoredEvent, now_ms,
};
use agent_contracts_runtime::{Config, Message, Runtime, ScriptedModel};
use agent_contracts_store::{PostgresStore, SqliteStore};
use std::sync::Arc;
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn texts(events: &[StoredEvent]) -> Vec<(u64, &str)> {
    events.iter().map(|e| (e.seq, e.event.as_str())).collect()
}

async fn appended(store: &dyn CheckpointStore) {
    let run = RunRecord::new("ev-1", "main_agent", RunStatus::Running, "{}");
    store.save(&run).await.unwrap();
    let batch: Vec<StoredEvent> = (1..=5)
        .map(|seq| StoredEvent::new(seq, 1_000 + seq, format!(r#"{{"n":{seq}}}"#)))
        .collect();
    store.append_events("ev-1", &batch[..3]).await.unwrap();
    store.append_events("ev-1", &batch[3..]).await.unwrap();
    // A seq held already keeps its first text.
    let again = [StoredEvent::new(2, 9, "changed")];
    store.append_events("ev-1", &again).await.unwrap();
    let all = store.events("ev-1", 0, 100).await.unwrap();
    assert_eq!(
        texts(&all),
        [
            (1, r#"{"n":1}"#),
            (2, r#"{"n":2}"#),
            (3, r#"{"n":3}"#),
            (4, r#"{"n":4}"#),
            (5, r#"{"n":5}"#)
        ]
    );
    assert_eq!(all[1].at_ms, 1_002);
    let page = store.events("ev-1", 2, 2).await.unwrap();
    assert_eq!(texts(&page), [(3, r#"{"n":3}"#), (4, r#"{"n":4}"#)]);
    assert!(store.events("ev-1", 5, 10).await.unwrap().is_empty());
    // No run, no events.
    let missing = store.append_events("nope", &batch[..1]).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound { .. })),
        "{missing:?}"
    );
    let missing = store.events("nope", 0, 10).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound { .. })),
        "{missing:?}"
    );
    // They go with the run.
    store.delete("ev-1").await.unwrap();
    store.save(&run).await.unwrap();
    assert!(store.events("ev-1", 0, 100).await.unwrap().is_empty());
    store.delete("ev-1").await.unwrap();
}

async fn pruned(store: &dyn CheckpointStore) {
    let run = RunRecord::new("ev-old", "main_agent", RunStatus::Finished, "{}");
    store.save(&run).await.unwrap();
    store
        .append_events("ev-old", &[StoredEvent::new(1, 1, "{}")])
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(store.prune(Duration::from_millis(5)).await.unwrap(), 1);
    store.save(&run).await.unwrap();
    assert!(store.events("ev-old", 0, 10).await.unwrap().is_empty());
    store.delete("ev-old").await.unwrap();
}

/// A run of `main_agent` that answers `answer`, recorded to `store`.
async fn record_run(
    store: Arc<dyn CheckpointStore>,
    limits: RecordLimits,
    answer: &str,
    redactor: Redactor,
) -> (RunRecord, Vec<StoredEvent>) {
    let recorder = RunRecorder::start_with(store.clone(), "main_agent", limits, redactor)
        .await
        .unwrap();
    let listed = store.load(recorder.run_id()).await.unwrap();
    assert_eq!(
        (listed.workflow.as_str(), listed.status),
        ("main_agent", RunStatus::Running)
    );
    let model = ScriptedModel::default().script("main_agent", [Message::assistant(answer)]);
    let config = Config::default().with_transcript_sink(recorder.clone());
    let runtime = Runtime::with_config(model, config);
    let outcome = runtime
        .run_loop("main_agent", "You plan.", "Plan the login test", &[])
        .await;
    let outcome = outcome.map(|_| ()).map_err(|e| e.to_string());
    let record = recorder
        .finish(runtime.transcript(), &Default::default(), outcome)
        .await
        .unwrap();
    let events = store.events(&record.run_id, 0, 1_000).await.unwrap();
    (record, events)
}

async fn recorded(store: Arc<dyn CheckpointStore>) {
    let secret = "sk-proj-ABCDEF0123456789abcdef";
    let answer = format!(
        "Plan: <script>alert(1)</script> with Authorization: Bearer eyJhbGciOi.J9xyz and {secret} and key=hunter2hunter2"
    );
    let redactor = Redactor::default().with_secret("hunter2hunter2");
    let (record, events) =
        record_run(store.clone(), RecordLimits::default(), &answer, redactor).await;
    assert_eq!(
        (record.workflow.as_str(), record.status),
        ("main_agent", RunStatus::Finished)
    );
    assert_eq!(
        store.load(&record.run_id).await.unwrap().status,
        RunStatus::Finished
    );
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            let value: serde_json::Value = serde_json::from_str(&e.event).unwrap();
            value["kind"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(kinds.iter().any(|k| k == "message"), "{kinds:?}");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    let all: String = events.iter().map(|e| e.event.as_str()).collect();
    assert!(all.contains("<script>alert(1)</script>"), "{all}");
    for leaked in ["eyJhbGciOi", "ABCDEF0123456789", "hunter2hunter2"] {
        assert!(!all.contains(leaked), "`{leaked}` written: {all}");
    }
    let state: serde_json::Value = serde_json::from_str(&record.state).unwrap();
    assert_eq!(state["runtime"]["agent"], "main_agent");
    assert_eq!(state["runtime"]["dropped"]["events"], 0);
    assert_eq!(state["runtime"]["events"], events.len());

    // Bounded: two events written, the rest dropped and said.
    let limits = RecordLimits::default().with_max_events(2);
    let (record, events) = record_run(store.clone(), limits, "done", Redactor::default()).await;
    let state: serde_json::Value = serde_json::from_str(&record.state).unwrap();
    let dropped = state["runtime"]["dropped"]["events"].as_u64().unwrap();
    assert!(dropped > 0, "{state}");
    assert_eq!(events.len(), 3, "{:?}", texts(&events));
    let last: serde_json::Value = serde_json::from_str(&events[2].event).unwrap();
    assert_eq!(last["kind"], "dropped");
    assert_eq!(last["events"], dropped);
    assert_eq!(last["max_events"], 2);
}

/// A durable run's transcript kept in parts (`append_transcript`): each part after the
/// events held, the bound counted over the whole run.
async fn in_parts(store: &dyn CheckpointStore) {
    use agent_contracts_runtime::recorder::append_transcript;
    use agent_contracts_runtime::transcript::Event;
    let run = RunRecord::new("parts-1", "event_planning", RunStatus::Paused, "{}");
    store.save(&run).await.unwrap();
    let event = |n: usize| Event::RenderedPrompt {
        agent: "catering_agent".into(),
        prompt: format!("part {n}, Authorization: Bearer abc123def456"),
    };
    let limits = RecordLimits::default().with_max_events(3);
    let redactor = Redactor::default();
    let part = [event(1), event(2)];
    let first = append_transcript(store, "parts-1", &part, limits, &redactor);
    assert_eq!(first.await.unwrap(), 2);
    let part = [event(3), event(4)];
    let second = append_transcript(store, "parts-1", &part, limits, &redactor);
    // One more fits; the last is dropped, and said.
    assert_eq!(second.await.unwrap(), 2);
    let events = store.events("parts-1", 0, 100).await.unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert!(events[2].event.contains("part 3"));
    assert!(
        events[3].event.contains(r#""kind":"dropped""#),
        "{}",
        events[3].event
    );
    assert!(events.iter().all(|e| !e.event.contains("abc123def456")));
    let missing = append_transcript(store, "nope", &[event(1)], limits, &redactor).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound { .. })),
        "{missing:?}"
    );
    store.delete("parts-1").await.unwrap();
}

async fn all_rules(store: Arc<dyn CheckpointStore>) {
    appended(&*store).await;
    in_parts(&*store).await;
    pruned(&*store).await;
    recorded(store).await;
}

#[test]
fn memory_store_events() {
    runtime().block_on(all_rules(Arc::new(MemoryStore::default())));
}

#[test]
fn sqlite_store_events() {
    let dir = std::env::temp_dir().join(format!(
        "agent-store-events-{}-{}",
        std::process::id(),
        now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    runtime().block_on(async {
        let url = format!("sqlite:{}", dir.join("runs.db").display());
        let store = SqliteStore::open(&url).await.unwrap();
        all_rules(Arc::new(store.clone())).await;
        store.pool().close().await;
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn postgres_store_events() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: the PostgreSQL store's events need DATABASE_URL");
        return;
    };
    let schema = format!("events_{}_{}", std::process::id(), now_ms());
    runtime().block_on(async {
        let store = PostgresStore::connect_in_schema(&url, Some(&schema))
            .await
            .unwrap();
        all_rules(Arc::new(store.clone())).await;
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(store.pool())
            .await
            .unwrap();
        store.pool().close().await;
    });
}

/// A store that keeps no transcripts (the trait's defaults) says so.
#[test]
fn a_store_without_transcripts_says_so() {
    #[derive(Debug, Default)]
    struct Plain(MemoryStore);
    impl CheckpointStore for Plain {
        fn save<'a>(
            &'a self,
            record: &'a RunRecord,
        ) -> agent_contracts_runtime::model::BoxFuture<'a, Result<u64, StoreError>> {
            self.0.save(record)
        }
        fn load<'a>(
            &'a self,
            run_id: &'a str,
        ) -> agent_contracts_runtime::model::BoxFuture<'a, Result<RunRecord, StoreError>> {
            self.0.load(run_id)
        }
        fn list(
            &self,
        ) -> agent_contracts_runtime::model::BoxFuture<
            '_,
            Result<Vec<Result<RunRecord, StoreError>>, StoreError>,
        > {
            self.0.list()
        }
        fn delete<'a>(
            &'a self,
            run_id: &'a str,
        ) -> agent_contracts_runtime::model::BoxFuture<'a, Result<(), StoreError>> {
            self.0.delete(run_id)
        }
        fn claim<'a>(
            &'a self,
            run_id: &'a str,
            sequence: u64,
            lease: &'a agent_contracts_runtime::store::Lease,
        ) -> agent_contracts_runtime::model::BoxFuture<'a, Result<RunRecord, StoreError>> {
            self.0.claim(run_id, sequence, lease)
        }
    }
    runtime().block_on(async {
        let store: Arc<dyn CheckpointStore> = Arc::new(Plain::default());
        let recorder = RunRecorder::start(store.clone(), "main_agent", RecordLimits::default())
            .await
            .unwrap();
        let model = ScriptedModel::default().script("main_agent", [Message::assistant("ok")]);
        let runtime = Runtime::with_config(
            model,
            Config::default().with_transcript_sink(recorder.clone()),
        );
        runtime.run_loop("main_agent", "s", "u", &[]).await.unwrap();
        let finished = recorder
            .finish(runtime.transcript(), &Default::default(), Ok(()))
            .await;
        assert!(
            matches!(finished, Err(StoreError::Unsupported { .. })),
            "{finished:?}"
        );
        // The record is saved all the same.
        let runs = store.list().await.unwrap();
        assert_eq!(runs[0].as_ref().unwrap().status, RunStatus::Finished);
    });
}
