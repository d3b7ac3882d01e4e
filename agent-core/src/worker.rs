//! A worker that drains a [`CheckpointStore`]: it claims the runnable runs of one workflow
//! ([`Runner::run_next`](crate::Runner::run_next)) and drives each on a [`ChatModel`] until it
//! pauses at a question or ends, several at once, until it is told to stop.
//!
//! - **Leases**: each of its `concurrency` slots holds its runs with a lease of its own
//!   (`<owner>-<slot>`), renewed while it drives a run; a worker that dies stops renewing,
//!   and its runs are taken over once their leases end (by the store's clock).
//! - **Attempts**: a run claimed more than `max_attempts` times at one step (each earlier
//!   worker died in it) is failed, not taken over again
//!   ([`Error::AttemptsExhausted`](crate::Error::AttemptsExhausted)).
//! - **Wake-ups**: between runs, one of its idle slots asks the store at a time. With a store
//!   that sends notices ([`CheckpointStore::listen`]: PostgreSQL's `NOTIFY`) it asks when
//!   told that a run was enqueued, answered or released, and every `fallback_poll` (5 s)
//!   otherwise; with any other store every `poll` (100 ms).
//! - **Transcripts**: each run's transcript part (what this worker's runner did with it) is
//!   appended to the run's events in the store when the runner stops with it, paused, ended,
//!   failed or given back, within [`RecordLimits`] and with secrets taken out by a
//!   [`Redactor`], so `agent-contract ui` shows runs that workers drove. A store that keeps no
//!   events (files) is not asked again.
//! - **Shutdown**: when its token is cancelled it claims nothing more, lets the runs it drives
//!   go on for up to `grace` (30 s), then stops them and gives them back
//!   ([`CheckpointStore::release`]): each is runnable at once, as it was before the claim.
//!
//! ```
//! use agent_contracts::{Agent, Message, ScriptedModel, Workflow};
//! use agent_contracts::{runtime::CancellationToken, store::CheckpointStore, store::MemoryStore};
//! use agent_contracts::{store::RunStatus, worker::Worker};
//! use std::{sync::Arc, time::Duration};
//!
//! /// Finds venues.
//! #[derive(Agent)]
//! #[agent(name = "venue_agent", input = "../schemas/venue_agent/input.schema.json",
//!         output = "../schemas/venue_agent/output.schema.json")]
//! struct VenueAgent;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let workflow = Workflow::new("venues").agent(&VenueAgent).goal([("venue_agent", "Find one")]);
//! let model = ScriptedModel::default().script("venue_agent", [Message::assistant(
//!     r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#,
//! )]);
//! let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
//! let run_id = workflow.runner(ScriptedModel::default()).with_store(store.clone())
//!     .enqueue("A party").await?;
//! let stop = CancellationToken::new();
//! let worker = Worker::new(workflow, model, store.clone()).with_concurrency(2);
//! let stopper = stop.clone();
//! let watcher = async {
//!     while store.load(&run_id).await.unwrap().status != RunStatus::Finished {
//!         tokio::time::sleep(Duration::from_millis(5)).await;
//!     }
//!     stopper.cancel();
//! };
//! let (report, ()) = tokio::join!(worker.run(stop), watcher);
//! assert_eq!((report.finished, report.released), (1, 0));
//! # Ok::<(), agent_contracts::Error>(()) }).unwrap();
//! ```

use crate::chat::ChatModel;
use crate::config::CancellationToken;
use crate::recorder::{RecordLimits, Redactor, append_transcript};
use crate::store::StoreError;
use crate::store::{CheckpointStore, Lease};
use crate::workflow::WorkflowOutcome;
use crate::workflow::definition::Workflow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// What a worker did, once it stopped ([`Worker::run`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerReport {
    /// Runs it drove to their end.
    pub finished: u64,
    /// Runs it drove to a question.
    pub paused: u64,
    /// Runs that stopped with an error in its hands (failed, refused, lost to another
    /// worker).
    pub errors: u64,
    /// Runs it gave back unfinished when its grace period ended.
    pub released: u64,
}

impl WorkerReport {
    fn add(&mut self, other: Self) {
        self.finished += other.finished;
        self.paused += other.paused;
        self.errors += other.errors;
        self.released += other.released;
    }
}

/// Drains the runnable runs of one workflow from a store (see the [module](self)): any
/// workflow, any [`ChatModel`], any [`CheckpointStore`].
pub struct Worker {
    workflow: Workflow,
    model: Arc<dyn ChatModel>,
    store: Arc<dyn CheckpointStore>,
    concurrency: usize,
    lease: Duration,
    owner: String,
    max_attempts: u64,
    grace: Duration,
    poll: Duration,
    fallback_poll: Duration,
    record: RecordLimits,
    redactor: Redactor,
    /// Cleared when the store says it keeps no events: not asked again.
    keeps_events: AtomicBool,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("workflow", &self.workflow.name())
            .field("concurrency", &self.concurrency)
            .field("lease", &self.lease)
            .field("owner", &self.owner)
            .field("max_attempts", &self.max_attempts)
            .field("grace", &self.grace)
            .field("poll", &self.poll)
            .field("fallback_poll", &self.fallback_poll)
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker of `workflow` on `model` and `store`: one run at a time, 30-second leases,
    /// 3 attempts per step, a 30-second grace period, a unique owner name.
    pub fn new(
        workflow: Workflow,
        model: impl ChatModel + 'static,
        store: Arc<dyn CheckpointStore>,
    ) -> Self {
        Self {
            workflow,
            model: Arc::new(model),
            store,
            concurrency: 1,
            lease: crate::workflow::checkpoint::DEFAULT_LEASE,
            owner: format!("worker-{}", uuid::Uuid::now_v7()),
            max_attempts: crate::workflow::checkpoint::DEFAULT_MAX_ATTEMPTS,
            grace: Duration::from_secs(30),
            poll: Duration::from_millis(100),
            fallback_poll: Duration::from_secs(5),
            record: RecordLimits::default(),
            redactor: Redactor::default(),
            keeps_events: AtomicBool::new(true),
        }
    }

    /// How much of each run's transcript it keeps in the store, counted over all of the
    /// run's events ([`RecordLimits::default`] unless set; `max_events` 0 keeps none).
    pub fn with_record_limits(mut self, limits: RecordLimits) -> Self {
        self.record = limits;
        self
    }

    /// What it takes out of the transcripts it keeps: the secrets of the model it drives
    /// ([`Redactor::default`] unless set).
    pub fn with_redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = redactor;
        self
    }

    /// Drives up to `runs` runs at once (at least 1).
    pub fn with_concurrency(mut self, runs: usize) -> Self {
        self.concurrency = runs.max(1);
        self
    }

    /// Each claim holds a run for `lease` (renewed every third of it while the run is
    /// driven): how long a dead worker's run waits before another takes it over.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Names its slots' leases `<owner>-<slot>` (slots count from 0): the owners its runs
    /// show. Give each worker its own name.
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// Fails a run claimed more than `max` times at one step (at least 1; see
    /// [`Runner::with_max_attempts`](crate::Runner::with_max_attempts)).
    pub fn with_max_attempts(mut self, max: u64) -> Self {
        self.max_attempts = max.max(1);
        self
    }

    /// How long the runs it drives may go on once it is told to stop, before it stops and
    /// gives them back.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// How often an idle worker asks a store that sends no notices (SQLite, files, memory).
    pub fn with_poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// How often an idle worker asks a store that sends notices anyway (a notice may be
    /// lost while the connection that listens is re-established; 5 s unless set).
    pub fn with_fallback_poll(mut self, poll: Duration) -> Self {
        self.fallback_poll = poll;
        self
    }

    /// Drains the store until `shutdown` is cancelled, then lets the runs it drives go on
    /// for the grace period, gives back those still running, and returns what it did.
    pub async fn run(&self, shutdown: CancellationToken) -> WorkerReport {
        let wake = Notify::new();
        let abort = CancellationToken::new();
        let done = CancellationToken::new();
        let slots = (0..self.concurrency).map(|n| self.slot(n, &wake, &shutdown, &abort));
        let work = async {
            let (reports, ()) = futures_util::future::join(
                futures_util::future::join_all(slots),
                self.waker(&wake, &shutdown),
            )
            .await;
            done.cancel();
            reports
        };
        let timer = async {
            tokio::select! {
                () = done.cancelled() => {}
                () = async {
                    shutdown.cancelled().await;
                    tokio::time::sleep(self.grace).await;
                } => abort.cancel(),
            }
        };
        let (reports, ()) = tokio::join!(work, timer);
        let mut total = WorkerReport::default();
        for report in reports {
            total.add(report);
        }
        total
    }

    /// One slot: claims and drives runs one after the other, waits for a wake-up when none
    /// is runnable.
    async fn slot(
        &self,
        n: usize,
        wake: &Notify,
        shutdown: &CancellationToken,
        abort: &CancellationToken,
    ) -> WorkerReport {
        let lease = Lease::new(format!("{}-{n}", self.owner), self.lease);
        let mut report = WorkerReport::default();
        while !shutdown.is_cancelled() {
            // A runner per run: its transcript and its place in the store are the run's.
            let runner = self
                .workflow
                .runner(self.model.clone())
                .with_store(self.store.clone())
                .with_lease(lease.clone())
                .with_max_attempts(self.max_attempts);
            let result = tokio::select! {
                result = runner.run_next() => Some(result),
                () = abort.cancelled() => None,
            };
            self.keep_transcript(&runner).await;
            let Some(result) = result else {
                // The grace period ended mid-run: the run's future is dropped (its lease is
                // no longer renewed) and the run goes back, runnable at once.
                match runner.release().await {
                    Ok(released) => report.released += released,
                    Err(e) => {
                        tracing::warn!(owner = lease.owner, error = %e, "could not give runs back")
                    }
                }
                break;
            };
            match result {
                Ok(Some(outcome)) => {
                    let (run_id, what) = match &outcome {
                        WorkflowOutcome::Finished { state, .. } => {
                            report.finished += 1;
                            (&state.run_id, "finished")
                        }
                        WorkflowOutcome::NeedsInput { state, .. } => {
                            report.paused += 1;
                            (&state.run_id, "paused")
                        }
                    };
                    tracing::info!(run_id = %run_id, owner = lease.owner, "{what}");
                    // More may be runnable: an idle slot asks too.
                    wake.notify_one();
                }
                Ok(None) => {
                    tokio::select! {
                        () = wake.notified() => {}
                        () = shutdown.cancelled() => {}
                    }
                }
                Err(e) => {
                    report.errors += 1;
                    tracing::warn!(owner = lease.owner, error = %e, "a run stopped");
                    // A failing store (or one that cannot hand out runs) is not asked again
                    // in a tight loop.
                    tokio::select! {
                        () = tokio::time::sleep(self.poll) => {}
                        () = shutdown.cancelled() => {}
                    }
                }
            }
        }
        report
    }

    /// Appends what `runner` did with the run it last held to that run's events; a store
    /// that cannot keep them is said once and not asked again, any other error is a warning:
    /// the run itself is saved already.
    async fn keep_transcript(&self, runner: &crate::Runner<'_>) {
        let events = runner.transcript().events();
        let Some(run_id) = runner.held_run() else {
            return;
        };
        if events.is_empty()
            || self.record.max_events == 0
            || !self.keeps_events.load(Ordering::Acquire)
        {
            return;
        }
        let kept =
            append_transcript(&*self.store, &run_id, &events, self.record, &self.redactor).await;
        match kept {
            Ok(_) => {}
            Err(StoreError::Unsupported { .. }) => {
                self.keeps_events.store(false, Ordering::Release);
                tracing::info!(owner = self.owner, "the store keeps no transcripts");
            }
            Err(e) => tracing::warn!(run_id, error = %e, "a run's transcript was not kept"),
        }
    }

    /// Wakes one idle slot at each notice of the store (and every `fallback_poll`), or every
    /// `poll` when the store sends none, until shutdown.
    async fn waker(&self, wake: &Notify, shutdown: &CancellationToken) {
        let heard = Arc::new(Notify::new());
        let listening = Arc::new(AtomicBool::new(false));
        let listener = match self.store.listen(self.workflow.name()).await {
            Ok(Some(mut wake_ups)) => {
                listening.store(true, Ordering::Release);
                let (heard, listening, poll) = (heard.clone(), listening.clone(), self.poll);
                // A task of its own: a notice is never dropped half read by a timeout.
                Some(tokio::spawn(async move {
                    loop {
                        match wake_ups.next().await {
                            Ok(()) => {
                                listening.store(true, Ordering::Release);
                                heard.notify_one();
                            }
                            Err(e) => {
                                // Poll meanwhile; the listener reconnects on its next call.
                                listening.store(false, Ordering::Release);
                                tracing::warn!(error = %e, "not listening for runs");
                                tokio::time::sleep(poll).await;
                            }
                        }
                    }
                }))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for runs: polling");
                None
            }
        };
        loop {
            let every = match listening.load(Ordering::Acquire) {
                true => self.fallback_poll,
                false => self.poll,
            };
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = heard.notified() => {}
                () = tokio::time::sleep(every) => {}
            }
            wake.notify_one();
        }
        if let Some(task) = listener {
            task.abort();
        }
    }
}
