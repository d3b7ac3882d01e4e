//! A worker keeps the transcript of each run it drives beside the run's record, as
//! `agent-contract ui` reads it: appended when it stops with the run, within its record
//! limits, its secrets taken out.

use agent_contracts::recorder::{RecordLimits, Redactor};
use agent_contracts::runtime::CancellationToken;
use agent_contracts::store::{CheckpointStore, MemoryStore, RunStatus};
use agent_contracts::worker::{Worker, WorkerReport};
use agent_contracts::{Agent, Message, ScriptedModel, Workflow};
use std::sync::Arc;
use std::time::Duration;

/// Finds venues.
#[derive(Agent)]
#[agent(
    name = "venue_agent",
    input = "../schemas/venue_agent/input.schema.json",
    output = "../schemas/venue_agent/output.schema.json"
)]
struct VenueAgent;

const SECRET: &str = "sk-live-0123456789";

fn workflow() -> Workflow {
    Workflow::new("venues")
        .agent(&VenueAgent)
        .goal([("venue_agent", "Find one")])
}

/// A model whose answer carries the secret in its notes.
fn model() -> ScriptedModel {
    ScriptedModel::default().script(
        "venue_agent",
        [Message::assistant(format!(
            r#"{{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "key {SECRET}"}}"#
        ))],
    )
}

/// Enqueues one run, lets `worker` drive it to its end, and returns its ID and the report.
async fn drive(store: Arc<dyn CheckpointStore>, worker: Worker) -> (String, WorkerReport) {
    let run_id = workflow()
        .runner(ScriptedModel::default())
        .with_store(store.clone())
        .enqueue("A party")
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let stopper = stop.clone();
    let watcher = async {
        while store.load(&run_id).await.unwrap().status != RunStatus::Finished {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        stopper.cancel();
    };
    let (report, ()) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(worker.run(stop), watcher)
    })
    .await
    .expect("the worker finishes the run");
    (run_id, report)
}

#[tokio::test]
async fn a_worker_keeps_the_transcript_of_the_run_it_drove_without_its_secrets() {
    let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
    let worker = Worker::new(workflow(), model(), store.clone())
        .with_redactor(Redactor::default().with_secret(SECRET))
        .with_poll(Duration::from_millis(5));
    let (run_id, report) = drive(store.clone(), worker).await;
    assert_eq!(report.finished, 1);
    let events = store.events(&run_id, 0, 1000).await.unwrap();
    // The step's call and its answer, at least.
    assert!(events.len() >= 2, "{events:?}");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    let text: String = events.iter().map(|e| e.event.as_str()).collect();
    // The step's call and its answer are there, the secret is not.
    assert!(text.contains("venue_agent"), "{text}");
    assert!(text.contains("Loft"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
}

#[tokio::test]
async fn record_limits_bound_what_a_worker_keeps() {
    let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
    let worker = Worker::new(workflow(), model(), store.clone())
        .with_record_limits(RecordLimits::default().with_max_events(0))
        .with_poll(Duration::from_millis(5));
    let (run_id, _) = drive(store.clone(), worker).await;
    assert!(store.events(&run_id, 0, 1000).await.unwrap().is_empty());

    let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
    let worker = Worker::new(workflow(), model(), store.clone())
        .with_record_limits(RecordLimits::default().with_max_events(1))
        .with_poll(Duration::from_millis(5));
    let (run_id, _) = drive(store.clone(), worker).await;
    let events = store.events(&run_id, 0, 1000).await.unwrap();
    // One event, then the one that says how many were left out.
    assert_eq!(events.len(), 2);
    assert!(
        events[1].event.contains(r#""kind":"dropped""#),
        "{}",
        events[1].event
    );
}
