//! A runner with a [`CheckpointStore`]: the run is saved at every pause, after every completed
//! step and at its end, and goes on from the store in another process.

use super::{Runner, WorkflowOutcome};
use crate::error::Error;
use crate::ids::ContextIdGenerator;
use crate::store::{
    CheckpointStore, Lease, RunEvent, RunRecord, RunStatus, StoreError, Transition, check_claim,
};
use crate::workflow::PausedRun;
use crate::workflow::checkpoint::{Cursor, DEFAULT_MAX_ATTEMPTS, Durable, default_lease};
use crate::workflow::decision::Decision;
use crate::workflow::state::{Phase, WorkflowState};
use crate::workflow::versions::Versions;
use agent_contracts_contract::RawObject;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

impl<'w> Runner<'w> {
    /// Saves the run in `store` at every pause, after every completed step and at its end, so
    /// [`resume_run`](Self::resume_run) answers a paused run and
    /// [`recover_run`](Self::recover_run) continues a crashed one, in any process.
    ///
    /// While it drives a run, the runner renews its lease on Tokio's timer, so it needs a
    /// runtime with timers: `#[tokio::main]` and `#[tokio::test]` have them, a runtime built by
    /// hand needs `enable_time()` (or `enable_all()`).
    ///
    /// ```
    /// use agent_contracts::{store::CheckpointStore, store::MemoryStore, store::RunStatus};
    /// use agent_contracts::{Workflow, workflow::WorkflowOutcome};
    /// use agent_contracts::{Agent, Message, ScriptedModel};
    /// use std::sync::Arc;
    ///
    /// /// Finds venues.
    /// #[derive(Agent)]
    /// #[agent(name = "venue_agent", input = "../schemas/venue_agent/input.schema.json",
    ///         output = "../schemas/venue_agent/output.schema.json")]
    /// struct VenueAgent;
    ///
    /// let workflow = Workflow::new("venues").agent(&VenueAgent).goal([("venue_agent", "Find one")]);
    /// let model = ScriptedModel::default().script("venue_agent", [
    ///     Message::assistant(r#"{"user_input_needed": true, "user_prompt": "Indoors?"}"#),
    ///     Message::assistant(r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#),
    /// ]);
    /// let store = Arc::new(MemoryStore::default());
    /// // The lease is renewed on Tokio's timer: a runtime built by hand enables it.
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let model = Arc::new(model);
    /// let runner = workflow.runner(model.clone()).with_store(store.clone());
    /// let WorkflowOutcome::NeedsInput { state, .. } = runner.start("A party").await? else {
    ///     panic!("the agent asks first");
    /// };
    /// // Another process: a new runner on the same store.
    /// let later = workflow.runner(model).with_store(store.clone());
    /// let outcome = later.resume_run(&state.run_id, "Yes").await?;
    /// assert!(matches!(outcome, WorkflowOutcome::Finished { .. }));
    /// assert_eq!(store.load(&state.run_id).await?.status, RunStatus::Finished);
    /// # Ok::<(), agent_contracts::Error>(()) }).unwrap();
    /// ```
    pub fn with_store(mut self, store: Arc<dyn CheckpointStore>) -> Self {
        let (lease, max_attempts) = match self.durable.take() {
            Some(durable) => (durable.lease, durable.max_attempts),
            None => (default_lease(), DEFAULT_MAX_ATTEMPTS),
        };
        self.durable = Some(Durable {
            store,
            lease,
            cursor: Mutex::new(None),
            versions: Versions::of(self.workflow),
            kept: AtomicBool::new(false),
            max_attempts,
        });
        self
    }

    /// Fails a run that [`run_next`](Self::run_next) claims for more than the `max`-th time
    /// at one step (after [`with_store`](Self::with_store); 3 unless set; at least 1): each
    /// earlier claim's worker stopped before it saved the step (a crash, an out-of-memory
    /// kill, a panicking tool), and one more takeover would spend its model calls again. The
    /// run becomes failed, [`RunRecord::error`] naming the step's agent and the attempts, and
    /// no worker claims it again ([`Error::AttemptsExhausted`]). A step that is saved, a pause
    /// and an answer start the count again.
    pub fn with_max_attempts(mut self, max: u64) -> Self {
        if let Some(durable) = &mut self.durable {
            durable.max_attempts = max.max(1);
        }
        self
    }

    /// Gives back every run this runner's lease holds, unfinished, as
    /// [`CheckpointStore::release`] does: a worker shutting down calls it for the runs it
    /// stopped driving, so that other workers take them at once. Returns how many it gave back.
    pub async fn release(&self) -> Result<u64, Error> {
        let durable = self.durable()?;
        Ok(durable.store.release(&durable.lease).await?)
    }

    /// Holds the runs this runner claims or saves running with `lease` (after
    /// [`with_store`](Self::with_store); before it, it does nothing): its owner is stored in
    /// them, and it is renewed every third of its duration while the runner drives a run. A
    /// worker that dies stops renewing, so its run is runnable again once the lease ends. A
    /// step that outlives a lost lease is not saved: the runner stops with
    /// [`StoreError::LeaseLost`].
    pub fn with_lease(mut self, lease: Lease) -> Self {
        if let Some(durable) = &mut self.durable {
            durable.lease = lease;
        }
        self
    }

    fn durable(&self) -> Result<&Durable, Error> {
        self.durable.as_ref().ok_or_else(|| {
            self.workflow
                .bad_state("the runner has no checkpoint store (see `Runner::with_store`)".into())
        })
    }

    /// Answers a stored paused run: loads it, checks its state, claims it (of racing
    /// resumers exactly one proceeds; the others get [`StoreError::AlreadyClaimed`]) and
    /// resumes it.
    pub async fn resume_run(&self, run_id: &str, feedback: &str) -> Result<WorkflowOutcome, Error> {
        let record = self.durable()?.store.load(run_id).await?;
        let sequence = record.sequence;
        self.resume_record(record, sequence, Given::Feedback(feedback))
            .await
    }

    /// Decides a stored run paused at an approval step ([`decide`](Self::decide)), as
    /// [`resume_run`](Self::resume_run) answers a question: loaded, checked (a broken edit is
    /// refused before anything is claimed, and the run stays paused), claimed, and driven on.
    pub async fn decide_run(
        &self,
        run_id: &str,
        decision: &Decision,
    ) -> Result<WorkflowOutcome, Error> {
        let record = self.durable()?.store.load(run_id).await?;
        let sequence = record.sequence;
        self.resume_record(record, sequence, Given::Decision(decision))
            .await
    }

    /// Decides the approval a stored run paused at, and no later one, as
    /// [`resume_paused`](Self::resume_paused) answers a question.
    pub async fn decide_paused(
        &self,
        paused: &PausedRun,
        decision: &Decision,
    ) -> Result<WorkflowOutcome, Error> {
        let record = self.durable()?.store.load(&paused.run_id).await?;
        self.resume_record(record, paused.sequence, Given::Decision(decision))
            .await
    }

    /// Answers the question a stored run paused at, and no later one: a run that went on
    /// since (another answer was given) is [`StoreError::Conflict`] if it paused again,
    /// [`StoreError::AlreadyClaimed`] while it runs and [`StoreError::NotPaused`] once it
    /// ended. A run whose resumer claimed it for this question and died before its first step
    /// is taken over once that claim's lease ended: the question is answered here. The
    /// [`PausedRun`] comes from a resume handle (agent-mcp's `seal::open_pause`).
    pub async fn resume_paused(
        &self,
        paused: &PausedRun,
        feedback: &str,
    ) -> Result<WorkflowOutcome, Error> {
        let record = self.durable()?.store.load(&paused.run_id).await?;
        self.resume_record(record, paused.sequence, Given::Feedback(feedback))
            .await
    }

    /// Checks, claims at `sequence` and resumes a stored paused run.
    async fn resume_record(
        &self,
        record: RunRecord,
        sequence: u64,
        given: Given<'_>,
    ) -> Result<WorkflowOutcome, Error> {
        let durable = self.durable()?;
        // Its answer is recorded: it runs with that one (`resume_answered`, or a worker).
        answered_already(&record)?;
        let run_id = record.run_id.as_str();
        let state = self.stored_state(&record)?;
        let now = crate::store::now_ms();
        // A resumer claimed the run for this very question and died before its first step:
        // its claim is the only change since `sequence` (a claim moves the sequence one up and
        // leaves the state as it was paused), so once its lease ended this answer takes the
        // run over. Any other change since (a step, a new pause) keeps the handle refused.
        let sequence = match record.status {
            RunStatus::Running
                if record.lease_until_ms <= now
                    && record.sequence == sequence.saturating_add(1)
                    && state.pending.is_some() =>
            {
                record.sequence
            }
            _ => sequence,
        };
        check_claim(&record, sequence, now)?;
        if state.pending.is_none() && record.status == RunStatus::Running {
            // Its worker died between steps: not a question to answer, a run to take over.
            return Err(StoreError::AlreadyClaimed {
                run_id: record.run_id,
            }
            .into());
        }
        if state.pending.is_none() {
            return Err(corrupt(
                &record,
                "the paused run has no pending question".into(),
            ));
        }
        // Refused before the claim: the run stays paused, unchanged.
        match given {
            Given::Feedback(_) => self.check_feedback(&state)?,
            Given::Decision(decision) => self.check_decision(&state, decision)?,
        }
        self.check_versions(&record).await?;
        let claimed = durable
            .store
            .claim(run_id, sequence, &durable.lease)
            .await?;
        durable.set(Cursor {
            run_id: claimed.run_id,
            sequence: claimed.sequence,
            state: claimed.state,
            created_ms: claimed.created_ms,
            resting: RunStatus::Paused,
            answer: None,
        });
        match given {
            Given::Feedback(feedback) => self.resume(state, feedback).await,
            Given::Decision(decision) => self.apply_decision(state, decision).await,
        }
    }

    /// Saves a new run of `request` as queued, without running it, and returns its ID: a
    /// worker's [`run_next`](Self::run_next) starts it. The first step's input contract
    /// checks the run first, as [`start`](Self::start) would: a run its first agent cannot
    /// take is [`Error::Retry`], and nothing is stored.
    pub async fn enqueue(&self, request: &str) -> Result<String, Error> {
        self.enqueue_with(request, RawObject::default()).await
    }

    /// Saves a new run of `request` with a typed input (the first agent's input type, or any
    /// struct whose fields the steps read), as [`start_with_input`](Self::start_with_input)
    /// starts one: the input is checked against the first agent's input contract before
    /// anything is stored, and the queued run's steps get its fields in their context.
    ///
    /// ```
    /// use agent_contracts::{store::MemoryStore, Agent, Message, ScriptedModel, Workflow};
    /// use agent_contracts::workflow::WorkflowOutcome;
    /// use std::sync::Arc;
    ///
    /// /// Generates a crawl plan.
    /// #[derive(Agent)]
    /// #[agent(name = "plan_generator_agent",
    ///         input = "../schemas/plan_generator_agent/input.schema.json",
    ///         output = "../schemas/plan_generator_agent/output.schema.json")]
    /// struct PlanGenerator;
    ///
    /// let workflow = Workflow::new("plans").agent(&PlanGenerator).goal([("plan_generator_agent", "Plan")]);
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let runner = workflow.runner(ScriptedModel::default()).with_store(Arc::new(MemoryStore::default()));
    /// // The first agent needs `target_url`, `task_name` and `collected_information`.
    /// let refused = runner.enqueue_with_kwargs(r#"{"task": "Plan", "target_url": "https://a.b"}"#).await;
    /// let refused = refused.unwrap_err();
    /// assert_eq!(refused.retry_error().unwrap().missing_fields, ["task_name", "collected_information"]);
    /// # Ok::<(), agent_contracts::Error>(()) }).unwrap();
    /// ```
    pub async fn enqueue_with_input<I: serde::Serialize>(
        &self,
        request: &str,
        input: &I,
    ) -> Result<String, Error> {
        let input = self.typed_input(input)?;
        self.enqueue_with(request, input).await
    }

    /// Saves a new run from a caller's kwargs text, as
    /// [`start_with_kwargs`](Self::start_with_kwargs) starts one (`task` is the request, every
    /// other field the run's input): a call the first agent's input contract refuses is
    /// [`Error::Retry`], and nothing is stored.
    pub async fn enqueue_with_kwargs(&self, kwargs: &str) -> Result<String, Error> {
        let (task, input) = self.kwargs_input(kwargs)?;
        self.enqueue_with(&task, input).await
    }

    async fn enqueue_with(&self, request: &str, input: RawObject) -> Result<String, Error> {
        let durable = self.durable()?;
        self.workflow.check()?;
        let ids = ContextIdGenerator::fresh();
        let state = self.initial_state(request, input, &ids);
        self.check_start(&state)?;
        let mut record = RunRecord::new(
            &state.run_id,
            &self.workflow.name,
            RunStatus::Queued,
            to_text(&state)?,
        );
        durable.keep_contracts().await?;
        record.contracts = Some(durable.versions.text().to_owned());
        durable.store.save(&record).await?;
        Ok(state.run_id)
    }

    /// Records the answer to a stored paused run's question without running it: the run
    /// becomes answered, and a worker's [`run_next`](Self::run_next) resumes it. A run that is
    /// not paused is refused as [`resume_run`](Self::resume_run) refuses it, and one answered
    /// meanwhile is [`StoreError::Conflict`].
    pub async fn submit_answer(&self, run_id: &str, answer: &str) -> Result<(), Error> {
        let durable = self.durable()?;
        let record = durable.store.load(run_id).await?;
        answered_already(&record)?;
        check_claim(&record, record.sequence, crate::store::now_ms())?;
        let state = self.stored_state(&record)?;
        if state.pending.is_none() {
            return Err(corrupt(
                &record,
                "the paused run has no pending question".into(),
            ));
        }
        self.check_feedback(&state)?;
        // An answer no worker of this build could run with is refused now, not later.
        self.check_versions(&record).await?;
        let answered = RunRecord {
            status: RunStatus::Answered,
            answer: Some(answer.to_owned()),
            owner: None,
            lease_until_ms: 0,
            ..record
        };
        durable.store.save(&answered).await?;
        Ok(())
    }

    /// Runs a stored answered run now, with the answer recorded for it
    /// ([`submit_answer`](Self::submit_answer), or a page's form), instead of leaving it to a
    /// worker: claimed at its sequence (of this runner and a worker, whoever claims first runs
    /// it; the other gets [`StoreError::AlreadyClaimed`]) and resumed. A paused run wants its
    /// answer ([`resume_run`](Self::resume_run)); any other is [`StoreError::NotPaused`].
    pub async fn resume_answered(&self, run_id: &str) -> Result<WorkflowOutcome, Error> {
        let durable = self.durable()?;
        let record = durable.store.load(run_id).await?;
        let answer = match (record.status, &record.answer) {
            (RunStatus::Answered, Some(answer)) => answer.clone(),
            (RunStatus::Answered, None) => {
                return Err(corrupt(&record, "the answered run holds no answer".into()));
            }
            (RunStatus::Paused, _) => {
                return Err(self.workflow.bad_state(format!(
                    "run `{run_id}` is paused: its question waits for an answer"
                )));
            }
            (status, _) => {
                return Err(StoreError::NotPaused {
                    run_id: record.run_id,
                    status,
                }
                .into());
            }
        };
        let state = self.stored_state(&record)?;
        if state.pending.is_none() {
            return Err(corrupt(
                &record,
                "the answered run has no pending question".into(),
            ));
        }
        self.check_versions(&record).await?;
        let claimed = durable
            .store
            .claim(run_id, record.sequence, &durable.lease)
            .await?;
        durable.set(Cursor {
            run_id: claimed.run_id,
            sequence: claimed.sequence,
            state: claimed.state,
            created_ms: claimed.created_ms,
            resting: RunStatus::Answered,
            answer: Some(answer.clone()),
        });
        self.resume(state, &answer).await
    }

    /// The stored run this runner last claimed, started or saved (`None` before its first,
    /// or without a store): the run its [`transcript`](Self::transcript) is about.
    pub fn held_run(&self) -> Option<String> {
        let durable = self.durable.as_ref()?;
        let cursor = durable
            .cursor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cursor.as_ref().map(|c| c.run_id.clone())
    }

    /// Claims the next runnable run of this workflow (see [`CheckpointStore::claim_next`]) and
    /// drives it until it pauses, ends or fails; `None` when no run is runnable. A queued run
    /// starts, an answered one resumes with its answer, and a run whose worker's lease ended
    /// goes on from its last checkpoint (a step that worker did not save is done again). A
    /// taken-over run that was resumed without a recorded answer goes back to paused, its
    /// question to be answered again. A claimed row that does not load is marked failed, so
    /// no worker claims it again, and is returned as [`StoreError::Corrupt`].
    pub async fn run_next(&self) -> Result<Option<WorkflowOutcome>, Error> {
        let durable = self.durable()?;
        let store = &durable.store;
        let Some(record) = store
            .claim_next(&self.workflow.name, &durable.lease)
            .await?
        else {
            return Ok(None);
        };
        let mut cursor = Cursor {
            run_id: record.run_id.clone(),
            sequence: record.sequence,
            state: record.state.clone(),
            created_ms: record.created_ms,
            resting: RunStatus::Running,
            answer: None,
        };
        let name = &self.workflow.name;
        let state = match self.stored_state(&record) {
            Ok(state) => state,
            Err(error) => {
                durable.set(cursor);
                let run_id = &record.run_id;
                durable
                    .save(name, &record.state, RunStatus::Failed, run_id)
                    .await?;
                return Err(error);
            }
        };
        if record.attempts > durable.max_attempts {
            durable.set(cursor);
            let error = Error::AttemptsExhausted {
                run_id: record.run_id.clone(),
                agent: current_agent(&state),
                attempts: record.attempts - 1,
            };
            let failed = Transition::new(RunEvent::Failed).step(current_agent(&state));
            let run_id = &record.run_id;
            let reason = Some(error.to_string());
            durable
                .save_noted(
                    name,
                    &record.state,
                    RunStatus::Failed,
                    run_id,
                    Some(failed),
                    reason,
                )
                .await?;
            return Err(error);
        }
        if let Err(refused) = self.check_versions(&record).await {
            self.put_back(&record, &state).await;
            return Err(refused);
        }
        match (&state.pending, record.answer.clone()) {
            (Some(_), Some(answer)) => {
                cursor.resting = RunStatus::Answered;
                cursor.answer = Some(answer.clone());
                durable.set(cursor);
                self.resume(state, &answer).await.map(Some)
            }
            (Some(pending), None) => {
                durable.set(cursor);
                let run_id = &record.run_id;
                durable
                    .save(name, &record.state, RunStatus::Paused, run_id)
                    .await?;
                let request = crate::workflow::HumanFeedbackRequest {
                    conversation: state.conversation.clone(),
                    ..pending.clone()
                };
                let checkpoint = durable.cursor(run_id).map(|c| PausedRun {
                    run_id: c.run_id,
                    sequence: c.sequence,
                });
                Ok(Some(WorkflowOutcome::NeedsInput {
                    request,
                    state,
                    checkpoint,
                }))
            }
            (None, _) if state.phase != Phase::Routing => {
                durable.set(cursor);
                let error = corrupt(&record, "the running run stopped inside a step".into());
                let run_id = &record.run_id;
                durable
                    .save(name, &record.state, RunStatus::Failed, run_id)
                    .await?;
                Err(error)
            }
            (None, _) => {
                durable.set(cursor);
                let ids = Arc::new(ContextIdGenerator::resume(
                    state.run_id.clone(),
                    state.issued.clone(),
                )?);
                self.drive(state, ids).await.map(Some)
            }
        }
    }

    /// Continues a run whose worker stopped while running it (a crash): from the last
    /// completed step. The takeover is a save, so a worker still running it conflicts at its
    /// next checkpoint and stops.
    pub async fn recover_run(&self, run_id: &str) -> Result<WorkflowOutcome, Error> {
        let durable = self.durable()?;
        let record = durable.store.load(run_id).await?;
        if record.status != RunStatus::Running {
            return Err(StoreError::NotPaused {
                run_id: record.run_id,
                status: record.status,
            }
            .into());
        }
        let state = self.stored_state(&record)?;
        if state.phase != Phase::Routing {
            return Err(corrupt(
                &record,
                "the running run stopped inside a step".into(),
            ));
        }
        self.check_versions(&record).await?;
        durable.set(Cursor {
            run_id: record.run_id.clone(),
            sequence: record.sequence,
            state: record.state.clone(),
            created_ms: record.created_ms,
            resting: RunStatus::Running,
            answer: None,
        });
        durable
            .save(
                &self.workflow.name,
                &record.state,
                RunStatus::Running,
                run_id,
            )
            .await?;
        let ids = Arc::new(ContextIdGenerator::resume(
            state.run_id.clone(),
            state.issued.clone(),
        )?);
        self.drive(state, ids).await
    }

    /// Whether the stored run may go on under this build's contracts
    /// ([`Error::ContractChanged`] if not).
    async fn check_versions(&self, record: &RunRecord) -> Result<(), Error> {
        let durable = self.durable()?;
        durable
            .versions
            .check(&*durable.store, record, &self.workflow.config.limits)
            .await
    }

    /// Puts a run claimed by [`run_next`](Self::run_next) and refused back as it was before
    /// the claim, with the contract fingerprints it was recorded under: answered with its
    /// answer, paused, queued (no step done) or running with its lease ended. It goes to the
    /// back of the queue (its update time is now), so a worker that cannot run it takes the
    /// others first.
    async fn put_back(&self, record: &RunRecord, state: &WorkflowState) {
        let Ok(durable) = self.durable() else { return };
        let status = match (&state.pending, &record.answer) {
            (Some(_), Some(_)) => RunStatus::Answered,
            (Some(_), None) => RunStatus::Paused,
            (None, _) if state.upstream.entries().is_empty() => RunStatus::Queued,
            (None, _) => RunStatus::Running,
        };
        let back = RunRecord {
            status,
            owner: None,
            lease_until_ms: 0,
            transition: Some(Transition::new(RunEvent::Released).by(durable.lease.owner.clone())),
            answer: record
                .answer
                .clone()
                .filter(|_| status == RunStatus::Answered),
            ..record.clone()
        };
        if let Err(e) = durable.store.save(&back).await {
            tracing::warn!(run_id = record.run_id, error = %e, "could not put a refused run back");
        }
    }

    /// A stored record's state, reloaded through the state checks: a row of another workflow
    /// or run, or one that does not parse or pass, is [`StoreError::Corrupt`].
    fn stored_state(&self, record: &RunRecord) -> Result<WorkflowState, Error> {
        if record.workflow != self.workflow.name {
            let reason = format!(
                "it belongs to workflow `{}`",
                agent_contracts_contract::__private::truncate(&record.workflow, 100)
            );
            return Err(corrupt(record, reason));
        }
        let state = match self.workflow.parse_state(&record.state) {
            Ok(state) => state,
            Err(Error::BadState { reason, .. }) => return Err(corrupt(record, reason)),
            Err(other) => return Err(other),
        };
        if state.run_id != record.run_id {
            let reason = format!(
                "its state is of run `{}`",
                agent_contracts_contract::__private::truncate(&state.run_id, 100)
            );
            return Err(corrupt(record, reason));
        }
        Ok(state)
    }

    /// After a completed step: saves the state as running.
    pub(super) async fn checkpoint_step(
        &self,
        state: &mut WorkflowState,
        ids: &ContextIdGenerator,
    ) -> Result<(), Error> {
        let Some(durable) = &self.durable else {
            return Ok(());
        };
        state.issued = ids.snapshot();
        let text = to_text(state)?;
        let name = &self.workflow.name;
        // The call just answered is the completed step's.
        let mut done = Transition::new(RunEvent::StepCompleted);
        if let Some(call) = &state.current_call {
            done = done.step(call.agent_type());
        }
        Ok(durable
            .save_noted(
                name,
                &text,
                RunStatus::Running,
                &state.run_id,
                Some(done),
                None,
            )
            .await?)
    }

    /// After a rejection that ends the run: saves it failed, the rejection as its error.
    pub(super) async fn checkpoint_rejected(
        &self,
        state: &WorkflowState,
        agent: &str,
        error: &Error,
    ) -> Result<(), Error> {
        let Some(durable) = &self.durable else {
            return Ok(());
        };
        let text = to_text(state)?;
        let failed = Transition::new(RunEvent::Failed).step(agent);
        Ok(durable
            .save_noted(
                &self.workflow.name,
                &text,
                RunStatus::Failed,
                &state.run_id,
                Some(failed),
                Some(error.to_string()),
            )
            .await?)
    }

    /// At a pause or the end: saves the state as paused or finished.
    /// A pause's outcome gets the checkpoint it was saved at.
    pub(super) async fn checkpoint_outcome(
        &self,
        outcome: &mut WorkflowOutcome,
    ) -> Result<(), Error> {
        let Some(durable) = &self.durable else {
            return Ok(());
        };
        let (state, status) = match &*outcome {
            WorkflowOutcome::NeedsInput { state, .. } => (state, RunStatus::Paused),
            WorkflowOutcome::Finished { state, .. } => (state, RunStatus::Finished),
        };
        let text = to_text(state)?;
        let name = &self.workflow.name;
        durable.save(name, &text, status, &state.run_id).await?;
        if let WorkflowOutcome::NeedsInput {
            state, checkpoint, ..
        } = outcome
        {
            *checkpoint = durable.cursor(&state.run_id).map(|cursor| PausedRun {
                run_id: cursor.run_id,
                sequence: cursor.sequence,
            });
        }
        Ok(())
    }

    /// After an error: marks the run failed, keeping its last saved state; a run another
    /// writer took over (a conflict) is left to it. A transient error (a model failure worth
    /// retrying, a cancellation) loses nothing: the run goes back to its last checkpoint's
    /// status, paused to be answered again or running to be recovered.
    pub(super) async fn checkpoint_failure(
        &self,
        run_id: &str,
        result: &Result<WorkflowOutcome, Error>,
    ) {
        let (Some(durable), Err(error)) = (&self.durable, result) else {
            return;
        };
        let Some(last) = durable.cursor(run_id) else {
            return;
        };
        if matches!(error, Error::Store(_)) {
            return;
        }
        let transient = match error {
            Error::Model(e) => e.is_retryable(),
            Error::Cancelled { .. } => true,
            _ => false,
        };
        let status = if transient {
            last.resting
        } else {
            RunStatus::Failed
        };
        let reason = (status == RunStatus::Failed).then(|| error.to_string());
        let saved = durable
            .save_noted(
                &self.workflow.name,
                &last.state,
                status,
                run_id,
                None,
                reason,
            )
            .await;
        if let Err(e) = saved {
            tracing::warn!(run_id, error = %e, status = status.as_str(), "could not save the run after an error");
        }
    }
}

/// The agent whose step a stored run is at: the one that asked, while it waits for an
/// answer; the current step's; the synthesis once the steps are done.
fn current_agent(state: &WorkflowState) -> String {
    match (&state.pending, &state.current) {
        (Some(pending), _) => pending.requesting_agent.clone(),
        (None, Some(step)) => step.agent.clone(),
        (None, None) => "synthesis".to_owned(),
    }
}

fn corrupt(record: &RunRecord, reason: String) -> Error {
    StoreError::Corrupt {
        run_id: agent_contracts_contract::__private::truncate(&record.run_id, 128).into_owned(),
        reason,
    }
    .into()
}

fn to_text(state: &WorkflowState) -> Result<String, Error> {
    serde_json::to_string(state).map_err(|e| StoreError::backend(e).into())
}

/// What a paused run is given: an answer to its question, or a decision at its approval.
#[derive(Clone, Copy)]
enum Given<'a> {
    Feedback(&'a str),
    Decision(&'a Decision),
}

/// An answered run keeps the answer it was given: another is refused, as for any run that is
/// not paused.
fn answered_already(record: &RunRecord) -> Result<(), StoreError> {
    if record.status == RunStatus::Answered {
        return Err(StoreError::NotPaused {
            run_id: record.run_id.clone(),
            status: record.status,
        });
    }
    Ok(())
}
