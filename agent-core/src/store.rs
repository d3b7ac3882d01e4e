//! Durable runs: a [`CheckpointStore`] keeps each workflow run as a [`RunRecord`], so a paused
//! or crashed run goes on in another process.
//!
//! - Saves are optimistic on the record's sequence number: a writer that read sequence `n`
//!   saves only if the stored run is still at `n`, and a stale writer gets
//!   [`StoreError::Conflict`].
//! - Resuming claims a paused run ([`CheckpointStore::claim`]): of two racing resumers exactly
//!   one gets the run, the other [`StoreError::AlreadyClaimed`].
//! - A claimed run is leased ([`Lease`]): it records its owner and when the lease ends, the
//!   owner renews it while it works ([`CheckpointStore::renew`]), and a run whose lease ended is
//!   runnable again. [`CheckpointStore::claim_next`] hands a worker the next runnable run: a
//!   queued one, an answered one, or a running one whose lease expired (a takeover, counted).
//!   Every claim bumps the sequence, so a stale owner's later saves are refused.
//! - A stored run is untrusted: the runner always reloads its state through
//!   [`Workflow::parse_state`](crate::Workflow::parse_state), and a tampered, truncated or
//!   foreign row is [`StoreError::Corrupt`], never a panic.
//! - The state is kept as text, so its key order and number text survive the store.
//!
//! This module holds the trait, an in-memory store, and the rules every store keeps, as
//! functions a store calls so that it keeps them the same way: [`check_save`] and
//! [`saved_record`] for a save, [`check_claim`] and [`claim_record`] for a claim,
//! [`renew_lease`] for a renewal, [`StoreError::not_found`] and [`StoreError::lease_lost`] for
//! their errors, and [`now_ms`] for every time a record holds. A store that checks them in
//! SQL instead (as the SQLite and PostgreSQL stores of `agent-contracts-store` do for claims)
//! must give the same results; [`MemoryStore`] is the reference. The stores of
//! `agent-contracts-store` (a folder of files, SQLite, PostgreSQL) are built on these rules
//! alone, so a third-party store needs nothing more.

use crate::chat::BoxFuture;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where a stored run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created and not run yet: a worker's [`CheckpointStore::claim_next`] starts it.
    Queued,
    /// A worker is running it (or crashed while running it: its lease tells).
    Running,
    /// It waits for the user's answer.
    Paused,
    /// Its answer is recorded ([`RunRecord::answer`]): a worker's
    /// [`CheckpointStore::claim_next`] resumes it.
    Answered,
    /// It finished.
    Finished,
    /// It stopped with an error.
    Failed,
}

impl RunStatus {
    /// The status as stored: `queued`, `running`, `paused`, `answered`, `finished` or `failed`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Answered => "answered",
            Self::Finished => "finished",
            Self::Failed => "failed",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One stored run. Fields may be added: a store that reads a row builds its record with
/// [`RunRecord::new`] and then sets the stored fields (sequence, times, owner, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunRecord {
    /// The run's ID.
    pub run_id: String,
    /// The workflow's name.
    pub workflow: String,
    /// Where it stands.
    pub status: RunStatus,
    /// Bumped by every save: the version a writer read.
    pub sequence: u64,
    /// The [`WorkflowState`](crate::workflow::WorkflowState) as JSON text.
    pub state: String,
    /// When it was first saved, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it was last saved, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// Who holds the run while it runs ([`Lease::owner`]); `None` when no one does.
    #[serde(default)]
    pub owner: Option<String>,
    /// When the owner's lease ends, in milliseconds since the Unix epoch (0: no lease). A
    /// running run whose lease ended is runnable again.
    #[serde(default)]
    pub lease_until_ms: u64,
    /// How many times a worker took the run over after its owner's lease expired. Kept by the
    /// store: a save does not change it.
    #[serde(default)]
    pub takeovers: u64,
    /// The answer recorded for an [`RunStatus::Answered`] run, until a worker's first save
    /// after resuming it.
    #[serde(default)]
    pub answer: Option<String>,
    /// The fingerprint of every contract the run depends on (each member's input and output
    /// contract), as a JSON object from `<agent>.input`/`<agent>.output` to 16 hex digits
    /// (`agent_contracts_schema::fingerprint`). A runner writes its own with every save, and resumes a
    /// run recorded under other ones only if each changed contract accepts what the earlier
    /// one allowed ([`Error::ContractChanged`](crate::Error::ContractChanged) otherwise).
    /// `None` for a row saved before runs recorded them: it resumes as before, its stored
    /// outputs checked value by value against the current contracts.
    #[serde(default)]
    pub contracts: Option<String>,
    /// How many times the run was claimed since its last save: the attempts at its current
    /// step. Every claim counts one, every save resets it to 0 (a run that pauses and is
    /// answered many times is not penalised), a release gives its attempt back. A runner
    /// fails a run claimed more often than its attempt limit
    /// ([`Runner::with_max_attempts`](crate::Runner::with_max_attempts)). Kept by the store.
    #[serde(default)]
    pub attempts: u64,
    /// Why a [`RunStatus::Failed`] run failed; `None` for any other.
    #[serde(default)]
    pub error: Option<String>,
    /// What this save records in the run's history ([`CheckpointStore::history`]); `None`:
    /// the store derives it from the status ([`RunEvent::of_save`]). Not stored in the run.
    #[serde(skip)]
    pub transition: Option<Transition>,
}

impl RunRecord {
    /// A record not saved yet (sequence 0).
    pub fn new(
        run_id: impl Into<String>,
        workflow: impl Into<String>,
        status: RunStatus,
        state: impl Into<String>,
    ) -> Self {
        let now = now_ms();
        Self {
            run_id: run_id.into(),
            workflow: workflow.into(),
            status,
            sequence: 0,
            state: state.into(),
            created_ms: now,
            updated_ms: now,
            owner: None,
            lease_until_ms: 0,
            takeovers: 0,
            answer: None,
            contracts: None,
            attempts: 0,
            error: None,
            transition: None,
        }
    }

    /// How long the lease this record asks for lasts: `lease_until_ms` past `updated_ms` (a
    /// writer sets both from one clock). A store that keeps time by its own clock (the SQL
    /// stores use the database's) ends the lease that long after it wrote the record.
    pub fn lease_length_ms(&self) -> u64 {
        self.lease_until_ms.saturating_sub(self.updated_ms)
    }

    /// Whether a worker may claim it now (at `now_ms`): queued, answered, or running with its
    /// lease ended.
    pub fn is_runnable(&self, now_ms: u64) -> bool {
        match self.status {
            RunStatus::Queued | RunStatus::Answered => true,
            RunStatus::Running => self.lease_until_ms <= now_ms,
            _ => false,
        }
    }
}

/// A worker's hold on the runs it claims: its name, and how long a claim or a renewal lasts.
/// Every durable [`Runner`](crate::Runner) holds one (a unique owner and 30 seconds unless
/// given one with [`Runner::with_lease`](crate::Runner::with_lease)) and renews it while it
/// drives a run, every third of its duration.
///
/// ```
/// use agent_contracts::store::Lease;
/// let lease = Lease::new("worker-7", std::time::Duration::from_secs(10));
/// assert_eq!(lease.until_ms(1_000), 11_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The owner's name, stored in the runs it holds.
    pub owner: String,
    /// How long a claim or a renewal holds a run.
    pub duration: Duration,
}

impl Lease {
    /// A lease of `owner` for `duration` at a time.
    pub fn new(owner: impl Into<String>, duration: Duration) -> Self {
        Self {
            owner: owner.into(),
            duration,
        }
    }

    /// When a lease taken at `now_ms` ends.
    pub fn until_ms(&self, now_ms: u64) -> u64 {
        let millis = u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX);
        now_ms.saturating_add(millis)
    }
}

/// Milliseconds since the Unix epoch, the clock of every time a [`RunRecord`] holds
/// (`created_ms`, `updated_ms`, `lease_until_ms`): a store passes it as `now` to the rules
/// below. A clock before the epoch reads 0.
///
/// ```
/// let now = agent_contracts::store::now_ms();
/// assert!(now > 1_600_000_000_000);
/// ```
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Which runs [`CheckpointStore::list_page`] gives: those of one status (or all), from just
/// after the last run of the previous page, at most `limit`, oldest first (by creation time,
/// then ID, the order of [`CheckpointStore::list`]).
///
/// ```
/// use agent_contracts::{store::RunPage, store::RunStatus};
/// let first = RunPage { status: Some(RunStatus::Paused), ..RunPage::first(50) };
/// assert_eq!((first.limit, first.after), (50, None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPage {
    /// Only runs of this status; every run when `None`.
    pub status: Option<RunStatus>,
    /// The previous page's last run, as its creation time and ID: the page starts after it.
    pub after: Option<(u64, String)>,
    /// At most this many runs.
    pub limit: usize,
}

impl RunPage {
    /// The first page of every run, at most `limit` long.
    pub fn first(limit: usize) -> Self {
        Self {
            status: None,
            after: None,
            limit,
        }
    }
}

/// One transition of a run, as its history ([`CheckpointStore::history`]) records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent {
    /// Saved queued, for a worker to start.
    Enqueued,
    /// A worker claimed it (or a runner started it at once).
    Claimed,
    /// A worker claimed it after its owner's lease ended.
    TakenOver,
    /// A step completed and was saved.
    StepCompleted,
    /// It paused at a question.
    Paused,
    /// Its question's answer was recorded.
    Answered,
    /// Its owner gave it back unfinished (a worker shutting down): runnable at once.
    Released,
    /// It failed ([`RunRecord::error`] says why).
    Failed,
    /// It finished.
    Completed,
}

impl RunEvent {
    /// The event as stored and printed: `enqueued`, `claimed`, `taken_over`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enqueued => "enqueued",
            Self::Claimed => "claimed",
            Self::TakenOver => "taken_over",
            Self::StepCompleted => "step_completed",
            Self::Paused => "paused",
            Self::Answered => "answered",
            Self::Released => "released",
            Self::Failed => "failed",
            Self::Completed => "completed",
        }
    }

    /// The event of [`as_str`](Self::as_str)'s text; `None` for any other text (a stored
    /// row is untrusted).
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Enqueued,
            Self::Claimed,
            Self::TakenOver,
            Self::StepCompleted,
            Self::Paused,
            Self::Answered,
            Self::Released,
            Self::Failed,
            Self::Completed,
        ]
        .into_iter()
        .find(|e| e.as_str() == text)
    }

    /// The event a save of a run at `status` records when its writer names none: a new run
    /// (`first`) is enqueued or claimed, a running save completed a step, and the other
    /// statuses are their own events.
    ///
    /// ```
    /// use agent_contracts::store::{RunEvent, RunStatus};
    /// assert_eq!(RunEvent::of_save(true, RunStatus::Queued), RunEvent::Enqueued);
    /// assert_eq!(RunEvent::of_save(false, RunStatus::Running), RunEvent::StepCompleted);
    /// assert_eq!(RunEvent::of_save(false, RunStatus::Finished), RunEvent::Completed);
    /// ```
    pub fn of_save(first: bool, status: RunStatus) -> Self {
        match status {
            RunStatus::Queued if first => Self::Enqueued,
            RunStatus::Queued => Self::Released,
            RunStatus::Running if first => Self::Claimed,
            RunStatus::Running => Self::StepCompleted,
            RunStatus::Paused => Self::Paused,
            RunStatus::Answered => Self::Answered,
            RunStatus::Finished => Self::Completed,
            RunStatus::Failed => Self::Failed,
        }
    }
}

impl fmt::Display for RunEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a save records in the run's history, when its writer knows better than the status
/// ([`RunRecord::transition`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transition {
    /// The event.
    pub event: RunEvent,
    /// Who made it (a worker's lease owner), when the saved record has no owner.
    pub owner: Option<String>,
    /// The step's agent (`venue_agent`), when the event is about one.
    pub step: Option<String>,
}

impl Transition {
    /// `event`, by no one in particular, about no step.
    pub fn new(event: RunEvent) -> Self {
        Self {
            event,
            owner: None,
            step: None,
        }
    }

    /// This transition, made by `owner`.
    pub fn by(mut self, owner: impl Into<String>) -> Self {
        self.owner = Some(owner.into());
        self
    }

    /// This transition, about the step of `agent`.
    pub fn step(mut self, agent: impl Into<String>) -> Self {
        self.step = Some(agent.into());
        self
    }
}

/// One transcript event of a run as a store keeps it ([`CheckpointStore::append_events`]):
/// its place in the run, when it happened, and the event as JSON text
/// (`Event::to_json` of [`crate::transcript::Event`], secrets already taken out by the
/// recorder). Read back it is untrusted like a row: a reader parses `event` and copes with
/// text that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredEvent {
    /// Its place in the run's transcript, from 1, increasing.
    pub seq: u64,
    /// When it happened, in milliseconds since the Unix epoch (the recorder's clock).
    pub at_ms: u64,
    /// The event, as JSON text (`{"kind": "message", ...}`).
    pub event: String,
}

impl StoredEvent {
    /// An event at `seq`, recorded at `at_ms`.
    pub fn new(seq: u64, at_ms: u64, event: impl Into<String>) -> Self {
        Self {
            seq,
            at_ms,
            event: event.into(),
        }
    }
}

/// One recorded transition of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HistoryEntry {
    /// When, in milliseconds since the Unix epoch, by the store's clock (the database's for
    /// the SQL stores).
    pub at_ms: u64,
    /// What happened.
    pub event: RunEvent,
    /// The worker that made it, if one did.
    pub owner: Option<String>,
    /// The step's agent, if the event is about one.
    pub step: Option<String>,
}

impl HistoryEntry {
    /// An entry.
    pub fn new(at_ms: u64, event: RunEvent, owner: Option<String>, step: Option<String>) -> Self {
        Self {
            at_ms,
            event,
            owner,
            step,
        }
    }

    /// [`at_ms`](Self::at_ms) in RFC 3339, UTC, with milliseconds
    /// (`2026-01-19T10:15:00.123Z`).
    ///
    /// ```
    /// use agent_contracts::store::{HistoryEntry, RunEvent};
    /// let entry = HistoryEntry::new(1_768_817_700_123, RunEvent::Claimed, None, None);
    /// assert_eq!(entry.at_rfc3339(), "2026-01-19T10:15:00.123Z");
    /// ```
    pub fn at_rfc3339(&self) -> String {
        i64::try_from(self.at_ms)
            .ok()
            .and_then(crate::ids::Timestamp::from_unix_millis)
            .unwrap_or(crate::ids::Timestamp::MAX)
            .to_string()
    }
}

/// A run's transitions, oldest first ([`CheckpointStore::history`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RunHistory {
    /// The run.
    pub run_id: String,
    /// Its transitions, in the order they happened.
    pub entries: Vec<HistoryEntry>,
}

impl RunHistory {
    /// The history of `run_id`.
    pub fn new(run_id: impl Into<String>, entries: Vec<HistoryEntry>) -> Self {
        Self {
            run_id: run_id.into(),
            entries,
        }
    }
}

/// A store's notices that runs may have become runnable ([`CheckpointStore::listen`]): a
/// worker waits on [`next`](Self::next) between claims instead of polling.
pub trait WakeUps: Send {
    /// Returns at the next notice (a run enqueued, answered or released), or with the
    /// backend's error (a worker then polls until it listens again).
    fn next(&mut self) -> BoxFuture<'_, Result<(), StoreError>>;
}

/// Why a store refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another writer saved the run since this one read it.
    #[error(
        "run `{run_id}` was saved by another writer: expected sequence {expected}, found {found}"
    )]
    Conflict {
        /// The run.
        run_id: String,
        /// The sequence this writer read (0 for a new run).
        expected: u64,
        /// The stored sequence.
        found: u64,
    },
    /// No run has this ID.
    #[error("no run `{run_id}` is stored")]
    NotFound {
        /// The run.
        run_id: String,
    },
    /// Another worker claimed the run first.
    #[error("run `{run_id}` was already claimed by another worker")]
    AlreadyClaimed {
        /// The run.
        run_id: String,
    },
    /// The run waits for no answer.
    #[error("run `{run_id}` is {status}, not paused: there is nothing to resume")]
    NotPaused {
        /// The run.
        run_id: String,
        /// Its status.
        status: RunStatus,
    },
    /// A stored row that cannot be used: tampered, truncated, or of another workflow or run.
    #[error("stored run `{run_id}` is corrupt: {reason}")]
    Corrupt {
        /// The run.
        run_id: String,
        /// What is wrong.
        reason: String,
    },
    /// The worker's lease on the run ended and another worker took it over (or it ended):
    /// this worker must stop, its writes would be refused.
    #[error("run `{run_id}` is no longer leased to `{owner}`: another worker took it over")]
    LeaseLost {
        /// The run.
        run_id: String,
        /// The worker that lost it.
        owner: String,
    },
    /// The store cannot do this (a store written before leases).
    #[error("this store cannot {operation}")]
    Unsupported {
        /// What was asked.
        operation: &'static str,
    },
    /// The backend failed (I/O, database); a retry may help.
    #[error("store backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// Wraps a backend's error.
    pub fn backend(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Backend(error.into())
    }

    /// [`StoreError::NotFound`] for `run_id`, cut to 128 bytes (the ID may come from a
    /// request).
    ///
    /// ```
    /// use agent_contracts::store::StoreError;
    /// let error = StoreError::not_found(&"x".repeat(1_000));
    /// assert!(error.to_string().len() < 200);
    /// ```
    pub fn not_found(run_id: &str) -> Self {
        Self::NotFound {
            run_id: agent_contracts_contract::__private::truncate(run_id, 128).into_owned(),
        }
    }

    /// [`StoreError::LeaseLost`] for `run_id`, which `lease` no longer holds (both names cut
    /// to 128 bytes).
    pub fn lease_lost(run_id: &str, lease: &Lease) -> Self {
        Self::LeaseLost {
            run_id: agent_contracts_contract::__private::truncate(run_id, 128).into_owned(),
            owner: agent_contracts_contract::__private::truncate(&lease.owner, 128).into_owned(),
        }
    }

    /// Whether trying again can help: only a backend failure.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Backend(_))
    }
}

/// Keeps workflow runs. Object safe: use it as `Arc<dyn CheckpointStore>`.
///
/// ```
/// use agent_contracts::{store::CheckpointStore, store::Lease, store::MemoryStore, store::RunRecord, store::RunStatus, store::StoreError};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryStore::default();
/// let record = RunRecord::new("run-1", "venues", RunStatus::Paused, "{}");
/// assert_eq!(store.save(&record).await?, 1);
/// // A stale writer (it read sequence 0) loses.
/// assert!(matches!(store.save(&record).await, Err(StoreError::Conflict { .. })));
/// let lease = Lease::new("worker-1", std::time::Duration::from_secs(30));
/// let claimed = store.claim("run-1", 1, &lease).await?;
/// assert_eq!((claimed.status, claimed.sequence), (RunStatus::Running, 2));
/// assert_eq!(claimed.owner.as_deref(), Some("worker-1"));
/// let refused = store.claim("run-1", 1, &lease).await;
/// assert!(matches!(refused, Err(StoreError::AlreadyClaimed { .. })));
/// // Nothing else is runnable: the claimed run's lease holds.
/// assert_eq!(store.claim_next("venues", &lease).await?, None);
/// # Ok::<(), StoreError>(()) }).unwrap();
/// ```
pub trait CheckpointStore: Send + Sync {
    /// Saves `record` if the stored run is still at `record.sequence` (0: no run yet), and
    /// returns the new sequence; else [`StoreError::Conflict`].
    fn save<'a>(&'a self, record: &'a RunRecord) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// The stored run.
    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunRecord, StoreError>>;

    /// Every stored run, oldest first. A row that cannot be read is its
    /// [`StoreError::Corrupt`] in its place, so one bad row neither hides the others nor goes
    /// unnamed; the outer error is the backend's.
    fn list(&self) -> BoxFuture<'_, Result<Vec<Result<RunRecord, StoreError>>, StoreError>>;

    /// One page of the stored runs ([`RunPage`]), each as [`list`](Self::list) gives it. The
    /// default filters [`list`](Self::list); the SQL stores ask the database for the page.
    fn list_page<'a>(
        &'a self,
        page: &'a RunPage,
    ) -> BoxFuture<'a, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
        Box::pin(async move {
            let after = |r: &RunRecord| match &page.after {
                Some((created, id)) => (r.created_ms, &r.run_id) > (*created, id),
                None => true,
            };
            let listed = self.list().await?.into_iter().filter(|run| match run {
                Ok(r) => page.status.is_none_or(|s| s == r.status) && after(r),
                // An unreadable row has no status to filter on: in unfiltered pages only.
                Err(_) => page.status.is_none() && page.after.is_none(),
            });
            Ok(listed.take(page.limit).collect())
        })
    }

    /// Deletes a run; [`StoreError::NotFound`] if there is none.
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Claims a paused or answered run at `sequence` for one resumer (or a running one at
    /// `sequence` whose lease ended: its resumer died, a takeover): it becomes running at the
    /// next sequence, held by `lease`, and is returned (an answered run with its answer). A
    /// run already claimed is [`StoreError::AlreadyClaimed`], a queued, finished or failed one
    /// [`StoreError::NotPaused`] ([`check_claim`]).
    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        sequence: u64,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<RunRecord, StoreError>>;

    /// Claims the next runnable run of `workflow` for `lease`'s owner, least recently saved
    /// first: a queued
    /// run, an answered one, or a running one whose lease ended (a takeover: its `takeovers`
    /// goes up). It becomes running at the next sequence, held until `lease` ends; `None`
    /// when nothing is runnable. Of racing workers each gets a different run.
    fn claim_next<'a>(
        &'a self,
        workflow: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Option<RunRecord>, StoreError>> {
        let _ = (workflow, lease);
        Box::pin(async {
            Err(StoreError::Unsupported {
                operation: "hand out runs",
            })
        })
    }

    /// Deletes the finished and failed runs last saved more than `age` ago, and returns how
    /// many; queued, paused, answered and running runs are kept whatever their age. The
    /// default lists and deletes one by one (an unreadable row is kept); the SQL stores do it
    /// in one statement.
    fn prune(&self, age: Duration) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let before =
                now_ms().saturating_sub(u64::try_from(age.as_millis()).unwrap_or(u64::MAX));
            let mut pruned = 0;
            for run in self.list().await?.into_iter().flatten() {
                let ended = matches!(run.status, RunStatus::Finished | RunStatus::Failed);
                if ended && run.updated_ms < before {
                    match self.delete(&run.run_id).await {
                        Ok(()) => pruned += 1,
                        // Deleted meanwhile by another pruner.
                        Err(StoreError::NotFound { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok(pruned)
        })
    }

    /// Keeps contract schemas by fingerprint (`(fingerprint, canonical schema JSON)` pairs),
    /// so a run recorded under one can be compared with a later version of its contract. A
    /// fingerprint kept already is left as it is. The default keeps nothing: a run whose
    /// contract changed is then refused, as its earlier version cannot be compared.
    fn save_contracts<'a>(
        &'a self,
        contracts: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = contracts;
        Box::pin(async { Ok(()) })
    }

    /// The contract schema kept under `fingerprint` ([`save_contracts`](Self::save_contracts)),
    /// as its JSON text; `None` when none is. Untrusted like a row: the runner checks that
    /// it parses and has this fingerprint.
    fn load_contract<'a>(
        &'a self,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        let _ = fingerprint;
        Box::pin(async { Ok(None) })
    }

    /// Extends `lease`'s hold on a running run it owns to `lease.duration` from now; a run
    /// it no longer holds is [`StoreError::LeaseLost`].
    fn renew<'a>(
        &'a self,
        run_id: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (run_id, lease);
        Box::pin(async {
            Err(StoreError::Unsupported {
                operation: "renew leases",
            })
        })
    }

    /// Gives back every run `lease` holds, unfinished (a worker shutting down): each goes
    /// back to what it was before its claim, answered if its recorded answer is still there
    /// and queued otherwise, with no owner and no lease, so that any worker claims it at once
    /// and its next claim is not a takeover; the claim's attempt is given back. Returns how
    /// many runs were released. The default lists and saves one by one.
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let mut released = 0;
            for run in self.list().await?.into_iter().flatten() {
                if run.status != RunStatus::Running || run.owner.as_deref() != Some(&lease.owner) {
                    continue;
                }
                let back = released_record(run, lease);
                match self.save(&back).await {
                    Ok(_) => released += 1,
                    // Taken over or ended meanwhile: no longer this lease's to give back.
                    Err(StoreError::Conflict { .. } | StoreError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(released)
        })
    }

    /// The run's transitions, oldest first, each with the store's time
    /// ([`RunHistory`]); [`StoreError::NotFound`] for a run the store does not hold. The
    /// history goes with the run when it is deleted or pruned. The default keeps none.
    fn history<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunHistory, StoreError>> {
        let _ = run_id;
        Box::pin(async {
            Err(StoreError::Unsupported {
                operation: "keep run histories",
            })
        })
    }

    /// Appends transcript events to the stored run `run_id` (in `seq` order; an event whose
    /// `seq` the run holds already is kept as first written), for a reader of the run to
    /// follow it ([`events`](Self::events)). [`StoreError::NotFound`] for a run the store does
    /// not hold; the events go with the run when it is deleted or pruned. The default keeps
    /// none ([`StoreError::Unsupported`]): a recorder then keeps only the run's record.
    fn append_events<'a>(
        &'a self,
        run_id: &'a str,
        events: &'a [StoredEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (run_id, events);
        Box::pin(async {
            Err(StoreError::Unsupported {
                operation: "keep run transcripts",
            })
        })
    }

    /// The stored run's transcript events after `after` (0: from the first), in `seq` order,
    /// at most `limit`; [`StoreError::NotFound`] for a run the store does not hold. The
    /// default keeps none ([`StoreError::Unsupported`]).
    fn events<'a>(
        &'a self,
        run_id: &'a str,
        after: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>, StoreError>> {
        let _ = (run_id, after, limit);
        Box::pin(async {
            Err(StoreError::Unsupported {
                operation: "keep run transcripts",
            })
        })
    }

    /// Notices that runs of `workflow` may have become runnable, for a store that sends them
    /// (PostgreSQL's `LISTEN`/`NOTIFY`); `None` when it sends none, and workers poll. The
    /// default sends none.
    fn listen<'a>(
        &'a self,
        workflow: &'a str,
    ) -> BoxFuture<'a, Result<Option<Box<dyn WakeUps>>, StoreError>> {
        let _ = workflow;
        Box::pin(async { Ok(None) })
    }
}

/// The record a release ([`CheckpointStore::release`]) saves over the `stored` running run
/// `lease` holds: answered if its answer is still recorded, else queued; no owner, no lease,
/// recorded as [`RunEvent::Released`] by the lease's owner.
pub fn released_record(stored: RunRecord, lease: &Lease) -> RunRecord {
    let status = match stored.answer {
        Some(_) => RunStatus::Answered,
        None => RunStatus::Queued,
    };
    RunRecord {
        status,
        owner: None,
        lease_until_ms: 0,
        transition: Some(Transition::new(RunEvent::Released).by(lease.owner.clone())),
        ..stored
    }
}

/// Claims the runnable `stored` run for `lease` at `now`, in place: it becomes running at the
/// next sequence, owned by the lease's owner until [`Lease::until_ms`]; a run that was running
/// (its lease ended) counts one more takeover. A store calls it after [`check_claim`] accepted
/// the claim (in [`CheckpointStore::claim`]), or on the run it picked as the next runnable one
/// ([`RunRecord::is_runnable`], in [`CheckpointStore::claim_next`]), then saves the result.
///
/// ```
/// use agent_contracts::store::{Lease, RunRecord, RunStatus, claim_record};
/// let mut run = RunRecord::new("run-1", "venues", RunStatus::Queued, "{}");
/// claim_record(&mut run, &Lease::new("worker-1", std::time::Duration::from_secs(30)), 1_000);
/// assert_eq!((run.status, run.sequence, run.lease_until_ms), (RunStatus::Running, 1, 31_000));
/// assert_eq!((run.owner.as_deref(), run.takeovers), (Some("worker-1"), 0));
/// ```
pub fn claim_record(stored: &mut RunRecord, lease: &Lease, now: u64) {
    if stored.status == RunStatus::Running {
        stored.takeovers += 1;
    }
    stored.attempts += 1;
    stored.status = RunStatus::Running;
    stored.sequence += 1;
    stored.owner = Some(lease.owner.clone());
    stored.lease_until_ms = lease.until_ms(now);
    stored.updated_ms = now;
}

/// The renewal rule ([`CheckpointStore::renew`]): a run still running and owned by `lease`'s
/// owner is held until [`Lease::until_ms`] of `now`; any other run (finished, paused, or taken
/// over by another worker) is [`StoreError::LeaseLost`], and the worker must stop driving it.
///
/// ```
/// use agent_contracts::store::{Lease, RunRecord, RunStatus, StoreError, claim_record, renew_lease};
/// let lease = Lease::new("worker-1", std::time::Duration::from_secs(30));
/// let mut run = RunRecord::new("run-1", "venues", RunStatus::Queued, "{}");
/// claim_record(&mut run, &lease, 1_000);
/// renew_lease(&mut run, &lease, 5_000)?;
/// assert_eq!(run.lease_until_ms, 35_000);
/// let other = Lease::new("worker-2", std::time::Duration::from_secs(30));
/// assert!(matches!(renew_lease(&mut run, &other, 6_000), Err(StoreError::LeaseLost { .. })));
/// # Ok::<(), StoreError>(())
/// ```
pub fn renew_lease(stored: &mut RunRecord, lease: &Lease, now: u64) -> Result<(), StoreError> {
    if stored.status != RunStatus::Running || stored.owner.as_deref() != Some(&lease.owner) {
        return Err(StoreError::lease_lost(&stored.run_id, lease));
    }
    stored.lease_until_ms = lease.until_ms(now);
    Ok(())
}

/// The claim rule ([`CheckpointStore::claim`]): `stored` must be paused or answered at
/// `sequence` (an answered run is claimed by whoever runs it with its recorded answer first:
/// a worker or the runner asked to, `Runner::resume_answered`), or running at it with its
/// lease ended at `now` (its resumer died after its claim: the run is taken over). Otherwise
/// a paused or answered run at another sequence is [`StoreError::Conflict`], a running one
/// still leased [`StoreError::AlreadyClaimed`], and any other [`StoreError::NotPaused`]. A store calls it on the stored run, then [`claim_record`], in
/// one transaction (or under one lock), so that of two racing claims exactly one wins.
///
/// ```
/// use agent_contracts::store::{RunRecord, RunStatus, StoreError, check_claim};
/// let mut run = RunRecord::new("run-1", "venues", RunStatus::Paused, "{}");
/// run.sequence = 3;
/// assert!(check_claim(&run, 3, 1_000).is_ok());
/// assert!(matches!(check_claim(&run, 2, 1_000), Err(StoreError::Conflict { found: 3, .. })));
/// ```
pub fn check_claim(stored: &RunRecord, sequence: u64, now: u64) -> Result<(), StoreError> {
    let run_id = stored.run_id.clone();
    match stored.status {
        RunStatus::Paused | RunStatus::Answered if stored.sequence == sequence => Ok(()),
        RunStatus::Running if stored.lease_until_ms <= now && stored.sequence == sequence => Ok(()),
        RunStatus::Paused | RunStatus::Answered => Err(StoreError::Conflict {
            run_id,
            expected: sequence,
            found: stored.sequence,
        }),
        RunStatus::Running => Err(StoreError::AlreadyClaimed { run_id }),
        status => Err(StoreError::NotPaused { run_id, status }),
    }
}

/// The save rule ([`CheckpointStore::save`]): the stored run's sequence (0 when there is
/// none) must be the one the writer read, `record.sequence`; it returns the sequence the save
/// writes (one more), else [`StoreError::Conflict`]. A store calls it on the stored run, then
/// writes [`saved_record`], in one transaction (or under one lock).
///
/// ```
/// use agent_contracts::store::{RunRecord, RunStatus, StoreError, check_save};
/// let record = RunRecord::new("run-1", "venues", RunStatus::Paused, "{}");
/// assert_eq!(check_save(None, &record)?, 1);
/// let mut stored = record.clone();
/// stored.sequence = 1;
/// assert!(matches!(check_save(Some(&stored), &record), Err(StoreError::Conflict { .. })));
/// # Ok::<(), StoreError>(())
/// ```
pub fn check_save(stored: Option<&RunRecord>, record: &RunRecord) -> Result<u64, StoreError> {
    let found = stored.map_or(0, |s| s.sequence);
    if found != record.sequence {
        return Err(StoreError::Conflict {
            run_id: record.run_id.clone(),
            expected: record.sequence,
            found,
        });
    }
    Ok(found + 1)
}

/// The record a save writes, given the sequence [`check_save`] returned: `record` with that
/// sequence and now as its update time, keeping the stored run's creation time and takeover
/// count (the store keeps those; a writer cannot change them), its attempts reset (a release
/// gives one back instead), and no transition (see [`history_entry`]).
///
/// ```
/// use agent_contracts::store::{RunRecord, RunStatus, check_save, saved_record};
/// let record = RunRecord::new("run-1", "venues", RunStatus::Paused, "{}");
/// let sequence = check_save(None, &record).unwrap();
/// let written = saved_record(None, &record, sequence);
/// assert_eq!((written.sequence, written.created_ms), (1, record.created_ms));
/// ```
pub fn saved_record(stored: Option<&RunRecord>, record: &RunRecord, sequence: u64) -> RunRecord {
    RunRecord {
        sequence,
        updated_ms: now_ms(),
        created_ms: stored.map_or(record.created_ms, |s| s.created_ms),
        takeovers: stored.map_or(0, |s| s.takeovers),
        attempts: match &record.transition {
            Some(t) if t.event == RunEvent::Released => {
                stored.map_or(0, |s| s.attempts.saturating_sub(1))
            }
            _ => 0,
        },
        transition: None,
        ..record.clone()
    }
}

/// The history entry a save of `record` appends at `now`, owned by the record's owner or its
/// transition's: the transition's event, or the one [`RunEvent::of_save`] derives (`first`:
/// the run is new).
pub fn history_entry(record: &RunRecord, first: bool, now: u64) -> HistoryEntry {
    let (event, owner, step) = match &record.transition {
        Some(t) => (t.event, t.owner.clone(), t.step.clone()),
        None => (RunEvent::of_save(first, record.status), None, None),
    };
    HistoryEntry::new(now, event, record.owner.clone().or(owner), step)
}

/// The history entry a claim appends: claimed, or taken over when the run was running before.
pub fn claim_entry(before: RunStatus, claimed: &RunRecord) -> HistoryEntry {
    let event = match before {
        RunStatus::Running => RunEvent::TakenOver,
        _ => RunEvent::Claimed,
    };
    HistoryEntry::new(claimed.updated_ms, event, claimed.owner.clone(), None)
}

/// Runs in memory, for tests and single-process use; unbounded (`MemoryStore::default()`), or
/// bounded by [`MemoryStore::bounded`].
#[derive(Debug, Default)]
pub struct MemoryStore {
    runs: Mutex<BTreeMap<String, RunRecord>>,
    max_runs: Option<usize>,
    /// Contract schemas by fingerprint: few, and never forgotten.
    contracts: Mutex<BTreeMap<String, String>>,
    /// Each run's transitions, forgotten with the run.
    history: Mutex<BTreeMap<String, Vec<HistoryEntry>>>,
    /// Each run's transcript events, forgotten with the run.
    events: Mutex<BTreeMap<String, Vec<StoredEvent>>>,
}

impl MemoryStore {
    /// An empty store that keeps at most `max_runs` runs: saving a new run into a full store
    /// forgets the least recently saved run that is not running (a paused, finished or
    /// failed one), and when every kept run is running the save is refused with
    /// [`StoreError::Backend`] (a retry can help once one ends).
    ///
    /// ```
    /// use agent_contracts::{store::CheckpointStore, store::MemoryStore, store::RunRecord, store::RunStatus, store::StoreError};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = MemoryStore::bounded(1);
    /// store.save(&RunRecord::new("a", "w", RunStatus::Paused, "{}")).await?;
    /// store.save(&RunRecord::new("b", "w", RunStatus::Running, "{}")).await?;
    /// assert!(matches!(store.load("a").await, Err(StoreError::NotFound { .. })));
    /// let refused = store.save(&RunRecord::new("c", "w", RunStatus::Running, "{}")).await;
    /// assert!(refused.unwrap_err().is_retryable());
    /// # Ok::<(), StoreError>(()) }).unwrap();
    /// ```
    pub fn bounded(max_runs: usize) -> Self {
        Self {
            runs: Mutex::default(),
            max_runs: Some(max_runs),
            contracts: Mutex::default(),
            history: Mutex::default(),
            events: Mutex::default(),
        }
    }

    /// Makes room for one new run, if the store is bounded and full.
    fn make_room(&self, runs: &mut BTreeMap<String, RunRecord>) -> Result<(), StoreError> {
        let Some(max) = self.max_runs else {
            return Ok(());
        };
        while runs.len() >= max {
            let oldest = runs
                .values()
                .filter(|r| r.status != RunStatus::Running)
                .min_by_key(|r| (r.updated_ms, r.sequence))
                .map(|r| r.run_id.clone());
            let Some(oldest) = oldest else {
                return Err(StoreError::backend(format!(
                    "the store is full: its {max} runs are all running"
                )));
            };
            runs.remove(&oldest);
            self.history().remove(&oldest);
            self.kept_events().remove(&oldest);
        }
        Ok(())
    }

    fn history(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<HistoryEntry>>> {
        self.history
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn kept_events(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<StoredEvent>>> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, run_id: &str, entry: HistoryEntry) {
        self.history()
            .entry(run_id.to_owned())
            .or_default()
            .push(entry);
    }

    fn runs(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, RunRecord>> {
        // A panic elsewhere cannot leave a half-written record: each change is one insert.
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl CheckpointStore for MemoryStore {
    fn save<'a>(&'a self, record: &'a RunRecord) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let mut runs = self.runs();
            let stored = runs.get(&record.run_id);
            let sequence = check_save(stored, record)?;
            let next = saved_record(stored, record, sequence);
            let first = stored.is_none();
            if first {
                self.make_room(&mut runs)?;
            }
            self.record(
                &record.run_id,
                history_entry(record, first, next.updated_ms),
            );
            runs.insert(record.run_id.clone(), next);
            Ok(sequence)
        })
    }

    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        Box::pin(async move {
            self.runs()
                .get(run_id)
                .cloned()
                .ok_or_else(|| StoreError::not_found(run_id))
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
        Box::pin(async move {
            let mut all: Vec<RunRecord> = self.runs().values().cloned().collect();
            all.sort_by_key(|r| (r.created_ms, r.run_id.clone()));
            Ok(all.into_iter().map(Ok).collect())
        })
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut runs = self.runs();
            self.history().remove(run_id);
            self.kept_events().remove(run_id);
            runs.remove(run_id)
                .map(drop)
                .ok_or_else(|| StoreError::not_found(run_id))
        })
    }

    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        sequence: u64,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        Box::pin(async move {
            let mut runs = self.runs();
            let stored = runs
                .get_mut(run_id)
                .ok_or_else(|| StoreError::not_found(run_id))?;
            let now = now_ms();
            check_claim(stored, sequence, now)?;
            let before = stored.status;
            claim_record(stored, lease, now);
            self.record(run_id, claim_entry(before, stored));
            Ok(stored.clone())
        })
    }

    fn claim_next<'a>(
        &'a self,
        workflow: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Option<RunRecord>, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut runs = self.runs();
            let next = runs
                .values_mut()
                .filter(|r| r.workflow == workflow && r.is_runnable(now))
                .min_by(|a, b| (a.updated_ms, &a.run_id).cmp(&(b.updated_ms, &b.run_id)));
            Ok(next.map(|stored| {
                let before = stored.status;
                claim_record(stored, lease, now);
                self.record(&stored.run_id, claim_entry(before, stored));
                stored.clone()
            }))
        })
    }

    fn save_contracts<'a>(
        &'a self,
        contracts: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut kept = self
                .contracts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (fingerprint, schema) in contracts {
                kept.entry(fingerprint.clone())
                    .or_insert_with(|| schema.clone());
            }
            Ok(())
        })
    }

    fn load_contract<'a>(
        &'a self,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let kept = self
                .contracts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Ok(kept.get(fingerprint).cloned())
        })
    }

    fn renew<'a>(
        &'a self,
        run_id: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut runs = self.runs();
            let stored = runs
                .get_mut(run_id)
                .ok_or_else(|| StoreError::not_found(run_id))?;
            renew_lease(stored, lease, now_ms())
        })
    }

    fn history<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunHistory, StoreError>> {
        Box::pin(async move {
            let runs = self.runs();
            if !runs.contains_key(run_id) {
                return Err(StoreError::not_found(run_id));
            }
            let entries = self.history().get(run_id).cloned().unwrap_or_default();
            Ok(RunHistory::new(run_id, entries))
        })
    }

    fn append_events<'a>(
        &'a self,
        run_id: &'a str,
        events: &'a [StoredEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let runs = self.runs();
            if !runs.contains_key(run_id) {
                return Err(StoreError::not_found(run_id));
            }
            let mut kept = self.kept_events();
            let kept = kept.entry(run_id.to_owned()).or_default();
            for event in events {
                if kept.last().is_none_or(|last| last.seq < event.seq) {
                    kept.push(event.clone());
                } else if !kept.iter().any(|e| e.seq == event.seq) {
                    kept.push(event.clone());
                    kept.sort_by_key(|e| e.seq);
                }
            }
            Ok(())
        })
    }

    fn events<'a>(
        &'a self,
        run_id: &'a str,
        after: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>, StoreError>> {
        Box::pin(async move {
            let runs = self.runs();
            if !runs.contains_key(run_id) {
                return Err(StoreError::not_found(run_id));
            }
            let kept = self.kept_events();
            let events = kept.get(run_id).map(Vec::as_slice).unwrap_or_default();
            let from = events.partition_point(|e| e.seq <= after);
            Ok(events[from..].iter().take(limit).cloned().collect())
        })
    }
}
