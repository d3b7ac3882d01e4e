//! Many processes draining one store: the event-planning worker behind `event-planning
//! --worker`, and the JSON listing of `--list --json`.
//!
//! A worker is the library's [`Worker`] on the canned model ([`crate::pipeline::Canned`]),
//! each answer after a delay, so tests and demos can kill a worker mid-step; its slots'
//! leases are named `<pid>-<slot>`.

use agent_contracts::runtime::CancellationToken;
use agent_contracts::worker::{Worker, WorkerReport};
use agent_contracts::{
    ChatModel, model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
};
use agent_contracts::{
    store::CheckpointStore, store::RunHistory, store::RunRecord, store::RunStatus,
    store::StoreError,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

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
            // No delay is no sleep: a timer of zero still waits for the timer's next tick (up
            // to a millisecond), which made each answer of a drained run that much slower.
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            crate::pipeline::Canned.complete(request).await
        })
    }
}

/// How a worker runs.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct WorkerSettings {
    /// How many runs it drives at once.
    pub concurrency: usize,
    /// How long each claim holds a run (renewed while it is driven).
    pub lease: Duration,
    /// The model's delay per answer.
    pub delay: Duration,
    /// How many claims of one step a run gets before it fails.
    pub max_attempts: u64,
    /// How long its runs may go on once it is told to stop.
    pub grace: Duration,
}

impl WorkerSettings {
    /// One run at a time, 30-second leases, no model delay, 3 attempts, 30 s of grace.
    pub fn new() -> Self {
        Self {
            concurrency: 1,
            lease: Duration::from_secs(30),
            delay: Duration::ZERO,
            max_attempts: 3,
            grace: Duration::from_secs(30),
        }
    }
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self::new()
    }
}

/// The event-planning worker on the canned model: the library [`Worker`], its slots' leases
/// named `<pid>-<slot>`.
pub fn worker(store: Arc<dyn CheckpointStore>, settings: WorkerSettings) -> Worker {
    Worker::new(
        crate::event_planning::workflow(),
        Delayed {
            delay: settings.delay,
        },
        store,
    )
    .with_owner(std::process::id().to_string())
    .with_concurrency(settings.concurrency)
    .with_lease(settings.lease)
    .with_max_attempts(settings.max_attempts)
    .with_grace(settings.grace)
}

/// Drains `store` until `shutdown` is cancelled (then lets its runs go on for the grace
/// period and gives back the rest), and returns what it did.
pub async fn work(
    store: Arc<dyn CheckpointStore>,
    settings: WorkerSettings,
    shutdown: CancellationToken,
) -> WorkerReport {
    worker(store, settings).run(shutdown).await
}

/// The JSON of `--history RUN_ID --json`: the run's transitions in order, each
/// `{at, event, owner, step}` (`at` in RFC 3339 with milliseconds, by the store's clock).
pub fn history_json(history: &RunHistory) -> Value {
    let entries = history
        .entries
        .iter()
        .map(|e| {
            json!({
                "at": e.at_rfc3339(),
                "event": e.event.as_str(),
                "owner": e.owner,
                "step": e.step,
            })
        })
        .collect();
    Value::Array(entries)
}

/// The JSON of `--list --json`: one object per readable run (`id`, `status`, `owner`,
/// `takeovers`, `steps`, `output`, `error`), and the errors of the rows that could not be
/// read. `error` is a failed run's reason, null otherwise.
/// A finished run's status is `completed`; `steps` are the completed steps in order and
/// `output` the final answer (null until the run completed).
pub fn list_json(runs: Vec<Result<RunRecord, StoreError>>) -> (Value, Vec<StoreError>) {
    list_runs(&crate::event_planning::workflow(), runs)
}

/// A stored run's status as the listings say it: `completed` for a finished run, as stored
/// otherwise (`queued`, `running`, `paused`, `answered`, `failed`).
pub fn status_text(status: RunStatus) -> String {
    match status {
        RunStatus::Finished => "completed".to_owned(),
        other => other.to_string(),
    }
}

/// [`list_json`] of the runs of `workflow`.
pub fn list_runs(
    workflow: &agent_contracts::Workflow,
    runs: Vec<Result<RunRecord, StoreError>>,
) -> (Value, Vec<StoreError>) {
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
        let status = status_text(run.status);
        listed.push(json!({
            "id": run.run_id,
            "status": status,
            "owner": run.owner,
            "takeovers": run.takeovers,
            "steps": steps,
            "output": output,
            "error": run.error.filter(|_| run.status == RunStatus::Failed),
        }));
    }
    (Value::Array(listed), skipped)
}
