//! Where a durable runner's run stands in its [`CheckpointStore`]: the store, and the last
//! record this runner saved, which the next save must find unchanged. Below the runner, which
//! holds one, and its durable methods (`run/durable.rs`), which use it.

use super::versions::Versions;
use crate::store::{
    CheckpointStore, Lease, RunEvent, RunRecord, RunStatus, StoreError, Transition,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The store, the lease this runner holds runs with, and where its run stands in the store.
pub(crate) struct Durable {
    pub(crate) store: Arc<dyn CheckpointStore>,
    pub(crate) lease: Lease,
    pub(crate) cursor: Mutex<Option<Cursor>>,
    /// The workflow's contracts: their fingerprints go with every save.
    pub(crate) versions: Arc<Versions>,
    /// Whether this runner handed the store its contract schemas already.
    pub(crate) kept: AtomicBool,
    /// How many claims of one step a run gets: a run claimed more often is failed.
    pub(crate) max_attempts: u64,
}

/// How many times a step is attempted unless a runner is told otherwise: a step that kills its
/// worker three times is not worth a fourth.
pub(crate) const DEFAULT_MAX_ATTEMPTS: u64 = 3;

/// How long a runner's lease lasts unless it is given one: long enough that renewing it every
/// third (10 s) costs nothing, short enough that a dead worker's run waits half a minute.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A lease with an owner name no other runner has.
pub(crate) fn default_lease() -> Lease {
    let owner = format!("worker-{}-{}", std::process::id(), crate::ids::new_run_id());
    Lease::new(owner, DEFAULT_LEASE)
}

/// The last record this runner saved (or claimed): the next save must find it unchanged.
#[derive(Clone)]
pub(crate) struct Cursor {
    pub(crate) run_id: String,
    pub(crate) sequence: u64,
    pub(crate) state: String,
    pub(crate) created_ms: u64,
    /// The status the run goes back to when a transient error stops this runner: paused for
    /// a claimed paused run (answer it again), running after a completed step (recover it).
    pub(crate) resting: RunStatus,
    /// The recorded answer a claimed answered run goes back with (its resting status is then
    /// answered).
    pub(crate) answer: Option<String>,
}

impl Durable {
    pub(crate) fn cursor(&self, run_id: &str) -> Option<Cursor> {
        let cursor = self
            .cursor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cursor.clone().filter(|c| c.run_id == run_id)
    }

    pub(crate) fn set(&self, cursor: Cursor) {
        *self
            .cursor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(cursor);
    }

    /// Hands the store the contract schemas, once per runner (the store skips those it has),
    /// before the first record that names their fingerprints.
    pub(crate) async fn keep_contracts(&self) -> Result<(), StoreError> {
        if self.kept.load(Ordering::Acquire) {
            return Ok(());
        }
        self.store.save_contracts(&self.versions.schemas()).await?;
        self.kept.store(true, Ordering::Release);
        Ok(())
    }

    /// Saves `state` with `status` over the last record this runner saved of the run (none:
    /// a new run). A running run is leased to this runner from now; any other status frees it.
    /// The record names the fingerprints of this build's contracts.
    pub(crate) async fn save(
        &self,
        workflow: &str,
        state: &str,
        status: RunStatus,
        run_id: &str,
    ) -> Result<(), StoreError> {
        self.save_noted(workflow, state, status, run_id, None, None)
            .await
    }

    /// [`save`](Self::save), recording `transition` in the run's history (`None`: the store
    /// derives it from the status) and, for a failed run, why (`error`).
    pub(crate) async fn save_noted(
        &self,
        workflow: &str,
        state: &str,
        status: RunStatus,
        run_id: &str,
        transition: Option<Transition>,
        error: Option<String>,
    ) -> Result<(), StoreError> {
        let last = self.cursor(run_id);
        let mut record = RunRecord::new(run_id, workflow, status, state);
        if let Some(last) = &last {
            record.sequence = last.sequence;
            record.created_ms = last.created_ms;
            if status == RunStatus::Answered {
                record.answer.clone_from(&last.answer);
            }
        }
        if status == RunStatus::Running {
            record.owner = Some(self.lease.owner.clone());
            // From the record's own update time: a store that keeps its own clock ends the
            // lease `lease_length_ms` after its write (`RunRecord::lease_length_ms`).
            record.lease_until_ms = self.lease.until_ms(record.updated_ms);
        }
        record.transition = Some(
            transition
                .unwrap_or_else(|| Transition::new(RunEvent::of_save(last.is_none(), status))),
        )
        .map(|t| match t.owner {
            Some(_) => t,
            None => t.by(self.lease.owner.clone()),
        });
        record.error = error.filter(|_| status == RunStatus::Failed);
        self.keep_contracts().await?;
        record.contracts = Some(self.versions.text().to_owned());
        let sequence = self.store.save(&record).await?;
        self.set(Cursor {
            run_id: run_id.to_owned(),
            sequence,
            state: record.state,
            created_ms: record.created_ms,
            resting: status,
            answer: record.answer,
        });
        Ok(())
    }

    /// Renews this runner's lease on the run every third of its duration, for as long as it
    /// is polled; ends only when the lease is lost (another worker took the run over), so the
    /// runner stops before it does a step twice. A run not saved yet has nothing to renew, a
    /// backend failure is tried again at the next tick, and a store without leases is left be.
    pub(crate) async fn keep_leased(&self, run_id: &str) -> StoreError {
        let every = (self.lease.duration / 3).max(Duration::from_millis(10));
        loop {
            tokio::time::sleep(every).await;
            match self.store.renew(run_id, &self.lease).await {
                Ok(()) | Err(StoreError::NotFound { .. }) => {}
                Err(StoreError::Unsupported { .. }) => std::future::pending::<()>().await,
                Err(e) if e.is_retryable() => {
                    tracing::warn!(run_id, error = %e, "could not renew the lease");
                }
                Err(lost) => return lost,
            }
        }
    }
}

/// While a durable run is driven: if its future is dropped before it ends (a cancelled MCP
/// call, a timeout), a claimed paused run is put back to paused, so the answer can be given
/// again (a claimed answered run back to answered, with its answer). Drop cannot wait, so the save is spawned on the current Tokio runtime; without one,
/// or if that save fails, the run's lease expiring makes it runnable again.
pub(crate) struct RestoreOnDrop<'a> {
    pub(crate) durable: &'a Durable,
    pub(crate) workflow: &'a str,
    pub(crate) run_id: String,
    pub(crate) armed: bool,
}

impl Drop for RestoreOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // A run between steps stays running: its last checkpoint is a running one, which the
        // lease hands to the next worker.
        let Some(last) = self
            .durable
            .cursor(&self.run_id)
            .filter(|c| matches!(c.resting, RunStatus::Paused | RunStatus::Answered))
        else {
            return;
        };
        let mut record = RunRecord::new(&last.run_id, self.workflow, last.resting, last.state);
        record.sequence = last.sequence;
        record.created_ms = last.created_ms;
        record.answer = last.answer;
        record.contracts = Some(self.durable.versions.text().to_owned());
        record.transition =
            Some(Transition::new(RunEvent::Released).by(self.durable.lease.owner.clone()));
        let store = self.durable.store.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(e) = store.save(&record).await {
                        tracing::warn!(run_id = record.run_id, error = %e, "could not put a dropped run back");
                    }
                });
            }
            Err(_) => tracing::warn!(
                run_id = last.run_id,
                "a dropped run stays running until its lease expires: no runtime to save it on"
            ),
        }
    }
}

/// A paused run as a resume handle names it: the run, and the sequence number of the checkpoint
/// it paused at, so a handle answers that one question and no later one of the same run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PausedRun {
    /// The run's ID.
    pub run_id: String,
    /// The sequence number of the paused record in the store.
    pub sequence: u64,
}
