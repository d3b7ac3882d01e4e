//! Running a workflow: routing from step to step, each step asked through the shared
//! agent-call loop, handoffs checked between them, pauses for the user, and the synthesis.

use super::checkpoint::{Durable, PausedRun, RestoreOnDrop};
use super::definition::{Member, USER, Workflow};
use super::state::{HumanFeedbackRequest, Phase, Step, WorkflowState};
use crate::ask::UserAsk;
use crate::call::{Ask, Engine, PausedTurn, Policy, Refusal, Refused, Reply, Resumed};
use crate::chat::{ChatModel, ChatRequest, Message, Role};
use crate::contributor::PromptContext;
use crate::error::Error;
use crate::ids::{ContextId, ContextIdGenerator};
use crate::output::AgentOutput;
use crate::telemetry::{self, CheckSide};
use crate::transcript::{Event, Transcript};
use crate::upstream::UpstreamContext;
use agent_contracts_contract::RawObject;
use agent_contracts_contract::ToolCall;
use agent_contracts_contract::repair_kwargs;
use agent_contracts_contract::{CheckedOutput, PrepareError};
use agent_contracts_contract::{ErrorKind, RetryError};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tracing::Instrument as _;

mod approve;
mod durable;

/// How a run ended (for now).
#[derive(Debug, Clone, PartialEq)]
pub enum WorkflowOutcome {
    /// Every step ran; `output` is the synthesis, or the last agent's output.
    Finished {
        /// The final text.
        output: String,
        /// The final state.
        state: WorkflowState,
    },
    /// An agent asked the user something: answer with [`Runner::resume`].
    NeedsInput {
        /// The question.
        request: HumanFeedbackRequest,
        /// The state to resume from.
        state: WorkflowState,
        /// Where a runner with a store saved the pause (`None` without a store): a resume
        /// handle names it, so the handle answers this question and no later one (see
        /// [`Runner::resume_paused`]).
        checkpoint: Option<PausedRun>,
    },
}

/// Runs one workflow on one model, recording a transcript.
pub struct Runner<'w> {
    workflow: &'w Workflow,
    model: Arc<dyn ChatModel>,
    transcript: Transcript,
    context_ids: Option<Arc<ContextIdGenerator>>,
    durable: Option<Durable>,
}

impl<'w> Runner<'w> {
    pub(super) fn new(workflow: &'w Workflow, model: Arc<dyn ChatModel>) -> Self {
        Self {
            workflow,
            model,
            transcript: Transcript::with_sink(workflow.config.transcript_sink.clone()),
            context_ids: None,
            durable: None,
        }
    }

    /// Issues context IDs from `ids`, shared with a [`Runtime`](crate::Runtime) of the same
    /// run: a started run takes its run ID, and a resumed run must have the same one.
    pub fn with_context_ids(mut self, ids: Arc<ContextIdGenerator>) -> Self {
        self.context_ids = Some(ids);
        self
    }

    /// What happened so far (kept after an error or a cancellation).
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    fn engine(&self) -> Engine<'_> {
        Engine::new(&*self.model, &self.workflow.config, &self.transcript)
    }

    /// Starts a run on the user's request: it is the conversation's first message.
    pub async fn start(&self, request: &str) -> Result<WorkflowOutcome, Error> {
        self.start_with(request, RawObject::default()).await
    }

    /// Starts a run from a caller's kwargs, as a parent model would call the workflow as a
    /// tool: `task` is the user's request, and every other field (flat, or in `context`) is
    /// the run's input, in the context of every step. The first agent's input contract checks
    /// it: a broken call is [`Error::Retry`], before any model call.
    pub async fn start_with_kwargs(&self, kwargs: &str) -> Result<WorkflowOutcome, Error> {
        let (task, input) = self.kwargs_input(kwargs)?;
        self.start_with(&task, input).await
    }

    /// A caller's kwargs split into the request (`task`) and the run's input (every other
    /// field, flat or in `context`).
    pub(super) fn kwargs_input(&self, kwargs: &str) -> Result<(String, RawObject), Error> {
        let call =
            ToolCall::from_json_str(kwargs, &self.workflow.config.limits).map_err(|error| {
                Error::Retry {
                    agent: self.workflow.name.clone(),
                    context_id: None,
                    error,
                }
            })?;
        let input = serde_json::value::to_raw_value(&call.context_json())
            .ok()
            .and_then(|raw| RawObject::try_from(raw).ok())
            .unwrap_or_default();
        Ok((call.task, input))
    }

    /// Starts a run with a typed input (the first agent's input type, or any struct whose
    /// fields the steps read): its fields are in the context of every step.
    pub async fn start_with_input<I: Serialize>(
        &self,
        request: &str,
        input: &I,
    ) -> Result<WorkflowOutcome, Error> {
        let fields = self.typed_input(input)?;
        self.start_with(request, fields).await
    }

    /// A typed input as the run's input fields, in the struct's order.
    pub(super) fn typed_input<I: Serialize>(&self, input: &I) -> Result<RawObject, Error> {
        let not_object = |message: String| Error::Retry {
            agent: self.workflow.name.clone(),
            context_id: None,
            error: RetryError::call(
                ErrorKind::NotObject,
                message,
                "Give the run's input as a struct or map of fields",
            ),
        };
        // Serialized straight to text: the fields keep the struct's order.
        match serde_json::value::to_raw_value(input).map(RawObject::try_from) {
            Ok(Ok(fields)) => Ok(fields),
            Ok(Err(_)) => Err(not_object("the input is not a JSON object".into())),
            Err(e) => Err(not_object(format!("the input does not serialize: {e}"))),
        }
    }

    async fn start_with(&self, request: &str, input: RawObject) -> Result<WorkflowOutcome, Error> {
        let ids = match &self.context_ids {
            Some(shared) => shared.clone(),
            None => Arc::new(ContextIdGenerator::fresh()),
        };
        self.begin(request, input, ids).await
    }

    async fn begin(
        &self,
        request: &str,
        input: RawObject,
        ids: Arc<ContextIdGenerator>,
    ) -> Result<WorkflowOutcome, Error> {
        self.workflow.check()?;
        let state = self.initial_state(request, input, &ids);
        self.engine().record("user", &state.conversation[0]);
        self.drive(state, ids).await
    }

    /// A new run's state, before its first step: the request is the conversation's first
    /// message.
    fn initial_state(
        &self,
        request: &str,
        input: RawObject,
        ids: &ContextIdGenerator,
    ) -> WorkflowState {
        WorkflowState {
            workflow: self.workflow.name.clone(),
            run_id: ids.run_id().to_owned(),
            issued: BTreeMap::new(),
            input,
            upstream: UpstreamContext::default(),
            current_call: None,
            conversation: vec![Message::user(request)],
            current: self.workflow.steps.first().cloned(),
            step_index: (!self.workflow.steps.is_empty()).then_some(0),
            phase: Phase::Routing,
            retries: BTreeMap::new(),
            hops: 0,
            pending: None,
            approvals: Vec::new(),
        }
    }

    /// Resumes a paused run with the user's answer: it is appended to the conversation and the
    /// agent that asked continues. A question one of the agent's tools asked
    /// ([`HumanFeedbackRequest::asking_tool`]) is answered to that tool instead
    /// ([`Tool::resume`](crate::Tool::resume)): its result is the call's, and the agent
    /// goes on from its tool calls.
    pub async fn resume(
        &self,
        mut state: WorkflowState,
        feedback: &str,
    ) -> Result<WorkflowOutcome, Error> {
        self.workflow.check()?;
        self.workflow
            .check_state(&state)
            .map_err(|reason| self.workflow.bad_state(reason))?;
        self.check_feedback(&state)?;
        let Some(request) = state.pending.take() else {
            return Err(self
                .workflow
                .bad_state("the state has no pending question to answer".into()));
        };
        let ids = self.restore_ids(&state)?;
        if let Some(field) = &request.field {
            self.give_field(&mut state, field, feedback)?;
            state.phase = Phase::Routing;
            return self.drive(state, ids).await;
        }
        if let Some(turn) = request.turn {
            let resumed = Resumed {
                turn,
                answer: feedback,
            };
            return self.drive_from(state, ids, Some(resumed)).await;
        }
        let message = Message::user(crate::texts::human_feedback(feedback));
        self.engine().record(&request.requesting_agent, &message);
        state.conversation.push(message);
        self.drive(state, ids).await
    }

    /// A person's `answer` for the current agent's `field` (one only a person gives), as the
    /// field's value in the run's input; the step is routed to again with it, so its input
    /// contract checks it.
    fn give_field(
        &self,
        state: &mut WorkflowState,
        field: &str,
        answer: &str,
    ) -> Result<(), Error> {
        let ask = state
            .current
            .as_ref()
            .and_then(|step| self.workflow.members.get(&step.agent))
            .and_then(|member| UserAsk::field_of(member.agent, field))
            .ok_or_else(|| {
                self.workflow
                    .bad_state("the state's question asks for no field of the current agent".into())
            })?;
        let input = ask
            .with_answer(state.input.get(), ask.value_of_text(answer))
            .and_then(|text| serde_json::value::RawValue::from_string(text).ok())
            .and_then(|raw| RawObject::try_from(raw).ok())
            .ok_or_else(|| {
                self.workflow
                    .bad_state("the run's input is not a JSON object".into())
            })?;
        state.input = input;
        Ok(())
    }

    /// The run's context-ID generator, restored once per resume: the shared one (caught up
    /// with the state's counters) or a new one from them.
    fn restore_ids(&self, state: &WorkflowState) -> Result<Arc<ContextIdGenerator>, Error> {
        match &self.context_ids {
            Some(shared) if shared.run_id() != state.run_id => {
                Err(self.workflow.bad_state(format!(
                    "the state is of run `{}`, the shared context ids of run `{}`",
                    agent_contracts_contract::__private::truncate(&state.run_id, 100),
                    shared.run_id()
                )))
            }
            Some(shared) => {
                shared.catch_up(&state.issued)?;
                Ok(shared.clone())
            }
            None => Ok(Arc::new(ContextIdGenerator::resume(
                state.run_id.clone(),
                state.issued.clone(),
            )?)),
        }
    }

    async fn drive(
        &self,
        state: WorkflowState,
        ids: Arc<ContextIdGenerator>,
    ) -> Result<WorkflowOutcome, Error> {
        self.drive_from(state, ids, None).await
    }

    /// Drives the run, its current agent going on from a `resumed` tool turn first, if any.
    async fn drive_from(
        &self,
        state: WorkflowState,
        ids: Arc<ContextIdGenerator>,
        resumed: Option<Resumed<'_>>,
    ) -> Result<WorkflowOutcome, Error> {
        let run_id = state.run_id.clone();
        let guard = self.durable.as_ref().map(|durable| RestoreOnDrop {
            durable,
            workflow: &self.workflow.name,
            run_id: run_id.clone(),
            armed: true,
        });
        // The run is one `invoke_workflow` span, its steps beneath it.
        let span = telemetry::invoke_workflow(&self.workflow.name, &run_id);
        let steps = self
            .drive_steps(state, ids, resumed)
            .instrument(span.clone());
        // The lease is renewed while the steps run; if another worker took the run over, the
        // steps stop here, before a save that would be refused anyway.
        let result = match &self.durable {
            Some(durable) => tokio::select! {
                result = steps => result,
                lost = durable.keep_leased(&run_id) => Err(lost.into()),
            },
            None => steps.await,
        };
        if let Some(mut guard) = guard {
            guard.armed = false;
        }
        telemetry::end(&span, &result);
        self.checkpoint_failure(&run_id, &result).await;
        result
    }

    async fn drive_steps(
        &self,
        mut state: WorkflowState,
        ids: Arc<ContextIdGenerator>,
        mut resumed: Option<Resumed<'_>>,
    ) -> Result<WorkflowOutcome, Error> {
        let mut route: Vec<String> = Vec::new();
        while let Some(step) = state.current.clone() {
            let member = self.workflow.known(&step.agent, "the route")?;
            // The step is one `invoke_agent` span: its input check (when it is routed to)
            // and its answers.
            let span =
                telemetry::invoke_agent(&step.agent, state.current_call.as_ref(), &state.run_id);
            if state.phase == Phase::Routing {
                let max_hops = self.workflow.config.max_hops;
                if state.hops >= max_hops {
                    return Err(Error::TooManyHops {
                        workflow: self.workflow.name.clone(),
                        hops: max_hops,
                        route: route.join(" -> "),
                    });
                }
                state.hops += 1;
                let routed = span.in_scope(|| self.route_to(member, &step, &mut state, &ids));
                telemetry::end(&span, &routed);
                // The step's input lacks a field only a person can give (or a person's answer
                // to one broke it): a person is asked, not the agent's model.
                if let Err(Error::Retry { error, .. }) = &routed
                    && let Some(ask) = field_question(member.agent, error)
                {
                    state.current_call = None;
                    state.issued = ids.snapshot();
                    let field = ask.field.name.clone();
                    let mut outcome = self.pause(ask.question, step.agent, state, None);
                    if let WorkflowOutcome::NeedsInput { request, state, .. } = &mut outcome {
                        request.field = Some(field.clone());
                        if let Some(pending) = &mut state.pending {
                            pending.field = Some(field);
                        }
                    }
                    self.checkpoint_outcome(&mut outcome).await?;
                    return Ok(outcome);
                }
                routed?;
                if let Some(id) = &state.current_call {
                    span.record(telemetry::CONTEXT_ID, tracing::field::display(id));
                }
            }
            route.push(step.agent.clone());
            let id = state.current_call.clone().ok_or_else(|| {
                self.workflow
                    .bad_state("the current agent has no call".into())
            })?;
            let answered = self
                .answer(member, &id, &mut state, resumed.take())
                .instrument(span.clone())
                .await;
            telemetry::end(&span, &answered);
            let output = match answered? {
                Reply::Question(prompt) => {
                    state.issued = ids.snapshot();
                    let mut outcome = self.pause(prompt, step.agent, state, None);
                    self.checkpoint_outcome(&mut outcome).await?;
                    return Ok(outcome);
                }
                Reply::Paused(turn) => {
                    state.issued = ids.snapshot();
                    let prompt = turn
                        .asking()
                        .map(|(_, pause)| pause.question.clone())
                        .unwrap_or_default();
                    let mut outcome = self.pause(prompt, step.agent, state, Some(turn));
                    self.checkpoint_outcome(&mut outcome).await?;
                    return Ok(outcome);
                }
                Reply::Output { output, attempt } => AgentOutput {
                    agent: step.agent.clone(),
                    context_id: id.clone(),
                    output,
                    attempt,
                    // A step's input is the workflow's own, not a caller's kwargs.
                    repairs: Vec::new(),
                },
            };
            let next = self.next_step(&step, output.output.value(), &state);
            let consumer = next.as_ref().map_or(USER, |(s, _)| s.agent.as_str());
            if let Some(message) = self.workflow.refusal(&step.agent, consumer, &output.output) {
                self.refuse_handoff(member, &output, consumer, &message, &mut state)?;
                continue;
            }
            tracing::debug!(agent = %step.agent, "stored output in context");
            state.current_call = None;
            let written = output.output.text().cloned();
            state.upstream.push_written(
                step.agent.clone(),
                id,
                Value::from(output.output),
                written,
            );
            // Retries are counted per call, as the runtime counts them.
            state.retries.remove(&step.agent);
            state.step_index = next.as_ref().and_then(|(_, index)| *index);
            state.current = next.map(|(step, _)| step);
            state.phase = Phase::Routing;
            self.checkpoint_step(&mut state, &ids).await?;
            if self.workflow.approval_of(&step.agent).is_some() {
                state.issued = ids.snapshot();
                let mut outcome = self.approval_pause(step.agent, state);
                self.checkpoint_outcome(&mut outcome).await?;
                return Ok(outcome);
            }
        }
        state.issued = ids.snapshot();
        let output = self.finish(&mut state).await?;
        let mut outcome = WorkflowOutcome::Finished { output, state };
        self.checkpoint_outcome(&mut outcome).await?;
        Ok(outcome)
    }

    /// Pauses at `agent`'s question, or (with a `turn`) at the question one of its tools
    /// asked.
    fn pause(
        &self,
        prompt: String,
        agent: String,
        mut state: WorkflowState,
        turn: Option<PausedTurn>,
    ) -> WorkflowOutcome {
        let request = HumanFeedbackRequest {
            prompt,
            requesting_agent: agent,
            conversation: state.conversation.clone(),
            approval: None,
            turn,
            field: None,
        };
        state.phase = Phase::Answering;
        // The state holds the conversation once; the request returned carries it.
        state.pending = Some(HumanFeedbackRequest {
            conversation: Vec::new(),
            ..request.clone()
        });
        WorkflowOutcome::NeedsInput {
            request,
            state,
            checkpoint: None,
        }
    }

    /// Whether a new run's first step would take its input: the context it would get
    /// through the first agent's input contract, as [`route_to`](Self::route_to) sends it,
    /// without issuing a call. A queued run is checked so before it is stored.
    pub(super) fn check_start(&self, state: &WorkflowState) -> Result<(), Error> {
        let Some(step) = &state.current else {
            return Ok(());
        };
        let agent = self.workflow.known(&step.agent, "step 1")?.agent;
        let limits = &self.workflow.config.limits;
        let mut context = state.context();
        self.workflow.collected(agent.name(), state, &mut context);
        let refused = |error| Error::Retry {
            agent: agent.name().to_owned(),
            context_id: None,
            error,
        };
        let call = ToolCall::from_entries(step.task.clone(), context, limits).map_err(refused)?;
        match agent.prepare_call(call, limits) {
            Ok(_) => Ok(()),
            Err(PrepareError::Retry(error)) => Err(refused(error)),
            Err(PrepareError::Prompt(e)) => Err(Error::Prompt(e)),
        }
    }

    /// Sends the accumulated context through the agent's contract path and appends the
    /// rendered prompt to the conversation as the routing message.
    fn route_to(
        &self,
        member: &Member,
        step: &Step,
        state: &mut WorkflowState,
        ids: &ContextIdGenerator,
    ) -> Result<(), Error> {
        let agent = member.agent;
        let id = ids.next(agent.name())?;
        let mut context = state.context();
        self.workflow.collected(agent.name(), state, &mut context);
        let keys: Vec<&String> = context.iter().map(|(key, _)| key).collect();
        tracing::info!(agent = agent.name(), context_id = %id, ?keys, "context received");
        state.current_call = Some(id.clone());
        let limits = &self.workflow.config.limits;
        let attempt = state
            .retries
            .get(agent.name())
            .map_or(1, |n| n.saturating_add(1));
        let verdict = |error: Option<&RetryError>| {
            let contract = Some(agent.input_contract());
            telemetry::contract_check(
                agent.name(),
                CheckSide::Input,
                contract,
                error,
                attempt,
                None,
            );
        };
        let call = ToolCall::from_entries(step.task.clone(), context, limits).map_err(|error| {
            verdict(Some(&error));
            Error::Retry {
                agent: agent.name().to_owned(),
                context_id: Some(id.clone()),
                error,
            }
        })?;
        let prepared = match agent.prepare_call(call, limits) {
            Err(PrepareError::Retry(error)) => self
                .repaired_step(member, step, state, attempt)
                .ok_or(PrepareError::Retry(error)),
            prepared => prepared,
        };
        match &prepared {
            Ok(_) => verdict(None),
            Err(PrepareError::Retry(error)) => verdict(Some(error)),
            Err(PrepareError::Prompt(_)) => {}
        }
        let prepared = prepared.map_err(|e| match e {
            PrepareError::Retry(error) => Error::Retry {
                agent: agent.name().to_owned(),
                context_id: Some(id),
                error,
            },
            PrepareError::Prompt(e) => Error::Prompt(e),
        })?;
        self.transcript.push(Event::RenderedPrompt {
            agent: agent.name().into(),
            prompt: prepared.user_prompt.clone(),
        });
        let message = Message::user(prepared.user_prompt).with_media(prepared.media);
        state.conversation.push(message);
        state.phase = Phase::Answering;
        Ok(())
    }

    /// The step's call, refused as its context was written, with the lossless repairs of
    /// [`Config::repairs`](crate::Config::repairs) (as a sub-agent's kwargs get them): a call
    /// they make pass is taken, its repairs recorded (transcript, span). Only a refused call
    /// pays for this: its context is gathered again and written as kwargs text.
    fn repaired_step(
        &self,
        member: &Member,
        step: &Step,
        state: &WorkflowState,
        attempt: u32,
    ) -> Option<agent_contracts_contract::PreparedCall> {
        let agent = member.agent;
        let limits = &self.workflow.config.limits;
        let mut context = state.context();
        self.workflow.collected(agent.name(), state, &mut context);
        let mut kwargs = serde_json::Map::new();
        kwargs.insert("task".into(), Value::String(step.task.clone()));
        for (key, raw) in context {
            kwargs.insert(key, serde_json::from_str(raw.get()).ok()?);
        }
        let kwargs = serde_json::to_string(&kwargs).ok()?;
        let contract = agent.input_contract();
        let repaired = repair_kwargs(&kwargs, contract, self.workflow.config.repairs, limits)?;
        let call = ToolCall::from_json_str(&repaired.text, limits).ok()?;
        let prepared = agent.prepare_call(call, limits).ok()?;
        telemetry::repaired(agent.name(), CheckSide::Input, &repaired.repairs, attempt);
        self.transcript.push(Event::InputRepaired {
            caller: self.workflow.name.clone(),
            tool: format!("run_{}", agent.name()),
            repairs: repaired.repairs,
        });
        Some(prepared)
    }

    /// Asks the current agent, through the shared agent-call loop, over the shared
    /// conversation.
    async fn answer(
        &self,
        member: &Member,
        id: &ContextId,
        state: &mut WorkflowState,
        resumed: Option<Resumed<'_>>,
    ) -> Result<Reply<CheckedOutput>, Error> {
        let agent = member.agent;
        let name = agent.name();
        let system = self.workflow.contributors.assemble(&PromptContext {
            upstream: Some(&state.upstream),
            ..PromptContext::for_agent(agent, id)
        })?;
        let route = |value: &Value| self.check_route(value);
        let mut failures = state.retries.get(name).copied().unwrap_or(0);
        let ask = Ask {
            agent,
            check: agent,
            id,
            system: &system,
            tools: &member.tools,
            policy: Policy::Step {
                route: &route,
                answer: member.answer,
            },
            attempt: failures.saturating_add(1),
        };
        let reply = self
            .engine()
            .ask(&ask, &mut state.conversation, &mut failures, resumed)
            .await;
        if failures > 0 {
            state.retries.insert(name.to_owned(), failures);
        }
        reply
    }

    /// An output's `next_agent`, if it names one, must be an agent of the workflow.
    fn check_route(&self, value: &Value) -> Result<(), RetryError> {
        let Some(next) = value.get("next_agent").and_then(Value::as_str) else {
            return Ok(());
        };
        if self.workflow.members.contains_key(next) {
            return Ok(());
        }
        let known: Vec<&str> = self.workflow.members.keys().map(String::as_str).collect();
        Err(RetryError::call(
            ErrorKind::OutputContract,
            format!(
                "`next_agent` names `{}`, which is not an agent of this workflow",
                agent_contracts_contract::__private::truncate(next, 100)
            ),
            format!(
                "Set `next_agent` to one of: {}, or leave it out",
                known.join(", ")
            ),
        ))
    }

    /// The output's `next_agent` if it names one, else the next declared step.
    fn next_step(
        &self,
        current: &Step,
        output: &Value,
        state: &WorkflowState,
    ) -> Option<(Step, Option<usize>)> {
        let steps = &self.workflow.steps;
        if let Some(next) = output.get("next_agent").and_then(Value::as_str) {
            return Some(self.routed(next, &current.agent, state));
        }
        let index = state.step_index.map_or(0, |i| i + 1);
        steps.get(index).map(|s| (s.clone(), Some(index)))
    }

    /// The step of `next`, routed to from `from` outside the declared order: its declared
    /// task, or one that says who routed to it.
    fn routed(&self, next: &str, from: &str, state: &WorkflowState) -> (Step, Option<usize>) {
        let steps = &self.workflow.steps;
        let declared = steps.iter().position(|s| s.agent == next);
        let task = declared.map_or_else(
            || crate::texts::routing_task(from),
            |i| steps[i].task.clone(),
        );
        // An agent outside the declared steps keeps the last declared position, so the
        // goal goes on after it instead of starting over.
        let index = declared.or(state.step_index);
        let step = Step {
            agent: next.to_owned(),
            task,
        };
        (step, index)
    }

    /// Sends a validator's refusal back to the producer, through the same retry path as an
    /// output-contract error; past the bound the run stops naming both agents.
    fn refuse_handoff(
        &self,
        member: &Member,
        output: &AgentOutput,
        consumer: &str,
        message: &str,
        state: &mut WorkflowState,
    ) -> Result<(), Error> {
        let producer = member.agent.name();
        tracing::warn!(producer, consumer, message, "handoff refused");
        let error = RetryError::call(
            ErrorKind::Handoff,
            format!("the `{consumer}` agent cannot use the output: {message}"),
            "Fix the output and answer again with one JSON object",
        );
        let mut failures = state.retries.get(producer).copied().unwrap_or(0);
        let answered = serde_json::to_string(output.output.value()).unwrap_or_default();
        let refused = Refused {
            agent: member.agent,
            id: &output.context_id,
            error: &error,
            answered: &answered,
            attempt: output.attempt,
            refusal: Refusal::Handoff { consumer, message },
        };
        let refused = self
            .engine()
            .refuse(&refused, &mut failures, &mut state.conversation);
        state.retries.insert(producer.to_owned(), failures);
        refused?;
        state.phase = Phase::Answering;
        Ok(())
    }

    async fn finish(&self, state: &mut WorkflowState) -> Result<String, Error> {
        let Some(instruction) = &self.workflow.synthesis else {
            if let Some(edited) = edited_last(state) {
                return Ok(edited);
            }
            let last = state
                .conversation
                .iter()
                .rev()
                .find(|m| m.role == Role::Assistant);
            return Ok(last.map(|m| m.content.clone()).unwrap_or_default());
        };
        let system = crate::texts::synthesis_system(&self.workflow.name);
        let mut messages = vec![Message::system(system)];
        messages.extend(state.conversation.iter().cloned());
        let instruction = Message::user(instruction.clone());
        self.engine().record("synthesis", &instruction);
        messages.push(instruction.clone());
        let request = ChatRequest::new("synthesis", messages, Vec::new());
        let reply = self.engine().complete(&request, &state.run_id).await?;
        self.engine().record("synthesis", &reply);
        state.conversation.push(instruction);
        state.conversation.push(reply.clone());
        Ok(reply.content)
    }
}

impl Workflow {
    /// A runner of this workflow on `model`.
    pub fn runner(&self, model: impl ChatModel + 'static) -> Runner<'_> {
        Runner::new(self, Arc::new(model))
    }
}

/// The run's last output, when a person edited it at an approval step and no step ran after:
/// the edit is the output the run ends with, not the answer it replaced.
fn edited_last(state: &WorkflowState) -> Option<String> {
    let decided = state.approvals.last().filter(|a| a.decision == "edit")?;
    let last = state.upstream.entries().last()?;
    if last.producer != decided.agent {
        return None;
    }
    Some(match &last.written {
        Some(text) => text.get().to_owned(),
        None => last.value.to_string(),
    })
}

/// The question for a person when a step's input was refused with `error` only for fields
/// a person gives: one it lacks, or one whose value broke its schema.
fn field_question(
    agent: &dyn agent_contracts_contract::DynAgent,
    error: &RetryError,
) -> Option<UserAsk> {
    UserAsk::of(agent, error).or_else(|| {
        agent
            .input_contract()
            .user_fields()
            .iter()
            .find_map(|field| UserAsk::refused(agent, &field.name, error))
    })
}
