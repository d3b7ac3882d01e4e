//! Many processes draining one store: the event-planning worker behind `event-planning
//! --worker`, and the JSON listing of `--list --json`.
//!
//! A worker runs `concurrency` loops, each with a lease of its own (`<pid>-<loop>`), that
//! claim the next runnable run ([`Runner::run_next`](agent_contracts::Runner::run_next)) and drive
//! it until it pauses at its question or ends; when nothing is runnable a loop waits a little
//! and asks again. It answers with the canned model ([`crate::pipeline::Canned`]), each answer
//! after a delay, so tests and demos can kill a worker mid-step.

use agent_contracts::{
    ChatModel, model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
};
use agent_contracts::{
    store::CheckpointStore, store::Lease, store::RunRecord, store::RunStatus, store::StoreError,
    workflow::WorkflowOutcome,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How long an idle loop waits before it asks the store again.
const IDLE: Duration = Duration::from_millis(100);

/// The canned model, each answer after `delay`: a step a test can kill a worker in.
#[derive(Debug, Clone, Copy)]
pub struct Delayed {
    /// How long each answer takes.
    pub delay: Duration,
}

impl ChatModel for Delayed {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            crate::pipeline::Canned.complete(request).await
        })
    }
}

/// How a worker runs.
#[derive(Debug, Clone, Copy)]
pub struct WorkerSettings {
    /// How many runs it drives at once.
    pub concurrency: usize,
    /// How long each claim holds a run (renewed while it is driven).
    pub lease: Duration,
    /// The model's delay per answer.
    pub delay: Duration,
}

/// Drains `store` until the process is stopped, printing a line per run it drove:
/// `<run id> paused|finished`, or `<run id>? error: ...` when a run failed.
pub async fn work(store: Arc<dyn CheckpointStore>, settings: WorkerSettings) {
    let loops: Vec<_> = (0..settings.concurrency.max(1))
        .map(|n| {
            let store = store.clone();
            let owner = format!("{}-{n}", std::process::id());
            tokio::spawn(drain(
                store,
                Lease::new(owner, settings.lease),
                settings.delay,
            ))
        })
        .collect();
    for task in loops {
        // A loop never ends by itself; a panic in one is reported, the others go on.
        if let Err(e) = task.await {
            eprintln!("error: a worker loop stopped: {e}");
        }
    }
}

async fn drain(store: Arc<dyn CheckpointStore>, lease: Lease, delay: Duration) {
    let workflow = crate::event_planning::workflow();
    loop {
        // A runner per run: its transcript and its place in the store are the run's.
        let runner = workflow
            .runner(Delayed { delay })
            .with_store(store.clone())
            .with_lease(lease.clone());
        match runner.run_next().await {
            Ok(Some(WorkflowOutcome::NeedsInput { state, .. })) => {
                println!("{} paused", state.run_id);
            }
            Ok(Some(WorkflowOutcome::Finished { state, .. })) => {
                println!("{} finished", state.run_id);
            }
            Ok(None) => tokio::time::sleep(IDLE).await,
            // Lost to another worker, or a store hiccup: the run is not lost, go on.
            Err(e) => {
                eprintln!("error: {e}");
                tokio::time::sleep(IDLE).await;
            }
        }
    }
}

/// The JSON of `--list --json`: one object per readable run (`id`, `status`, `owner`,
/// `takeovers`, `steps`, `output`), and the errors of the rows that could not be read.
/// A finished run's status is `completed`; `steps` are the completed steps in order and
/// `output` the final answer (null until the run completed).
pub fn list_json(runs: Vec<Result<RunRecord, StoreError>>) -> (Value, Vec<StoreError>) {
    let workflow = crate::event_planning::workflow();
    let mut listed = Vec::new();
    let mut skipped = Vec::new();
    for run in runs {
        let run = match run {
            Ok(run) => run,
            Err(e) => {
                skipped.push(e);
                continue;
            }
        };
        let state = match workflow.parse_state(&run.state) {
            Ok(state) => state,
            Err(e) => {
                skipped.push(StoreError::Corrupt {
                    run_id: run.run_id,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let steps: Vec<&str> = (&state.upstream)
            .into_iter()
            .map(|p| p.producer.as_str())
            .collect();
        let output = (run.status == RunStatus::Finished)
            .then(|| {
                let last = state.conversation.iter().rev();
                last.into_iter()
                    .find(|m| m.role == agent_contracts::model::Role::Assistant)
                    .map(|m| m.content.clone())
            })
            .flatten();
        let status = match run.status {
            RunStatus::Finished => "completed".to_owned(),
            other => other.to_string(),
        };
        listed.push(json!({
            "id": run.run_id,
            "status": status,
            "owner": run.owner,
            "takeovers": run.takeovers,
            "steps": steps,
            "output": output,
        }));
    }
    (Value::Array(listed), skipped)
}
