//! Where a durable runner's run stands in its [`CheckpointStore`]: the store, and the last
//! record this runner saved, which the next save must find unchanged. Below the runner, which
//! holds one, and its durable methods (`run/durable.rs`), which use it.

use crate::store::{CheckpointStore, RunRecord, RunStatus, StoreError};
use std::sync::{Arc, Mutex};

/// The store and where this runner's run stands in it.
pub(crate) struct Durable {
    pub(crate) store: Arc<dyn CheckpointStore>,
    pub(crate) cursor: Mutex<Option<Cursor>>,
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

    /// Saves `state` with `status` over the last record this runner saved of the run (none:
    /// a new run).
    pub(crate) async fn save(
        &self,
        workflow: &str,
        state: &str,
        status: RunStatus,
        run_id: &str,
    ) -> Result<(), StoreError> {
        let last = self.cursor(run_id);
        let mut record = RunRecord::new(run_id, workflow, status, state);
        if let Some(last) = &last {
            record.sequence = last.sequence;
            record.created_ms = last.created_ms;
        }
        let sequence = self.store.save(&record).await?;
        self.set(Cursor {
            run_id: run_id.to_owned(),
            sequence,
            state: record.state,
            created_ms: record.created_ms,
            resting: status,
        });
        Ok(())
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
