//! Multi-agent workflows: a supervisor runs declared steps (seed 003) over one shared
//! conversation (seed 004).
//!
//! - After each agent, its output is stored in the shared context under `<agent>_output` (the
//!   parsed JSON, else the raw text), and the next agent receives the accumulated context
//!   through the same path as a tool call: kwargs merge, contract validation, typed input, user
//!   prompt. Context lands in the user prompt, never as a JSON dump in the system prompt.
//! - Every agent sees the whole conversation so far: the user's request first, then each
//!   routing message and answer. Routing appends to that conversation; it never sends a lone
//!   message.
//! - Handoff validators check a producer's output before its consumer starts; a failure re-asks
//!   the producer (bounded), then stops the workflow naming both agents.
//! - An agent may ask the user for input: the workflow pauses with a [`HumanFeedbackRequest`]
//!   and a [`WorkflowState`] that serializes to JSON and resumes, in another process too.

use crate::contributor::{ContributorRegistry, PromptContext};
use crate::error::RetryError;
use crate::extract::extract_json;
use crate::ids::{ContextId, ContextIdError, ContextIdGenerator};
use crate::limits::{Limits, text_depth};
use crate::model::{ChatModel, ChatRequest, Message, ModelError, ToolCallRequest};
use crate::tool::{DynAgent, PrepareError, ToolDefinition};
use crate::transcript::{Event, Transcript};
use crate::upstream::UpstreamContext;
use crate::{PromptError, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tracing::Instrument as _;

/// Checks a producer's output before its consumer starts; `Err` says what is wrong, and is
/// sent back to the producer.
pub type HandoffValidator = Box<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;

/// A plain tool an agent can call inside a workflow (a database query, a calculator).
pub trait Tool: Send + Sync {
    /// What the model sees.
    fn definition(&self) -> ToolDefinition;
    /// Runs the tool on the model's arguments (untrusted JSON text); the result is JSON.
    fn call(&self, arguments: &str) -> Value;
}

/// An agent of a workflow, with its tools.
pub struct Member {
    agent: &'static dyn DynAgent,
    tools: Vec<Arc<dyn Tool>>,
    return_tool_output: bool,
}

impl Member {
    /// An agent without tools.
    pub fn new(agent: &'static dyn DynAgent) -> Self {
        Self {
            agent,
            tools: Vec::new(),
            return_tool_output: false,
        }
    }

    /// Gives the agent a tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// The first tool result is the agent's output as is: no model turn rewraps it
    /// (seed 003's `return_tool_output`), so the next agent gets clean JSON.
    pub fn return_tool_output(mut self) -> Self {
        self.return_tool_output = true;
        self
    }
}

struct Handoff {
    producer: String,
    consumer: String,
    validate: HandoffValidator,
}

/// Bounds of a workflow run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkflowConfig {
    /// Retries per agent after a first failed answer (output contract or handoff).
    pub max_retries: u32,
    /// Agents run (routing hops) before a run is stopped, so routing that loops ends.
    pub max_hops: u32,
    /// Model turns one agent may spend calling tools before it must answer.
    pub max_tool_turns: u32,
    /// Limits on answers and on resume states.
    pub limits: Limits,
}

impl Default for WorkflowConfig {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_hops: 32,
            max_tool_turns: 16,
            limits: Limits::default(),
        }
    }
}

/// A workflow definition: agents, declared steps, handoffs, an optional synthesis.
pub struct Workflow {
    name: String,
    members: BTreeMap<String, Member>,
    steps: Vec<Step>,
    handoffs: Vec<Handoff>,
    synthesis: Option<String>,
    config: WorkflowConfig,
    contributors: ContributorRegistry,
}

/// One declared step: which agent does what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The agent's name.
    pub agent: String,
    /// Its task.
    pub task: String,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The current agent has not been routed to yet.
    Routing,
    /// The current agent was routed to and owes an answer.
    Answering,
}

/// The agent that asked the user something, and everything needed to answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanFeedbackRequest {
    /// What the agent asks.
    pub prompt: String,
    /// Who asks.
    pub requesting_agent: String,
    /// The conversation so far.
    pub conversation: Vec<Message>,
}

/// A run's whole state: serializes to JSON and resumes from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowState {
    /// The workflow's name, checked on resume.
    pub workflow: String,
    /// The run's ID: the first segment of every context ID of the run.
    pub run_id: String,
    /// Context IDs issued per agent type, so a resumed run keeps numbering densely.
    pub issued: BTreeMap<String, u64>,
    /// Each agent's output, with the agent and the context ID of the call that produced it;
    /// the next agent's context is its `<agent>_output` map.
    pub upstream: UpstreamContext,
    /// The context ID of the current agent's call, once it was routed to.
    pub current_call: Option<ContextId>,
    /// The shared conversation.
    pub conversation: Vec<Message>,
    /// The current step, `None` once the declared steps are done.
    pub current: Option<Step>,
    /// The index of the current step among the declared ones (routing by `next_agent` may
    /// leave it).
    pub step_index: Option<usize>,
    /// Where the current step stands.
    pub phase: Phase,
    /// Failed answers per agent.
    pub retries: BTreeMap<String, u32>,
    /// Agents run so far.
    pub hops: u32,
    /// The open question, while paused.
    pub pending: Option<HumanFeedbackRequest>,
}

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
    },
}

/// Why a workflow stopped.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// A step or handoff names an agent the workflow does not have.
    #[error("workflow `{workflow}`: {place} names unknown agent `{agent}`; known agents: {known}")]
    UnknownAgent {
        /// The workflow.
        workflow: String,
        /// Where it was named.
        place: String,
        /// The unknown name.
        agent: String,
        /// The agents there are.
        known: String,
    },
    /// Routing ran more agents than allowed.
    #[error("workflow `{workflow}` stopped after {hops} hops, the limit; last agents: {route}")]
    TooManyHops {
        /// The workflow.
        workflow: String,
        /// The limit.
        hops: u32,
        /// The agents run last, in order.
        route: String,
    },
    /// An agent kept calling tools without answering.
    #[error("agent `{agent}` called tools for {turns} turns without answering")]
    TooManyToolTurns {
        /// The agent.
        agent: String,
        /// The bound.
        turns: u32,
    },
    /// The accumulated context broke an agent's input contract.
    #[error("agent `{agent}` cannot start: {error}")]
    InputContract {
        /// The agent.
        agent: String,
        /// The retry error.
        error: RetryError,
    },
    /// An agent kept answering against its output contract.
    #[error(
        "agent `{agent}` answered {attempts} times and every answer broke its output contract; last error: {error}"
    )]
    OutputRetriesExhausted {
        /// The agent.
        agent: String,
        /// Answers given.
        attempts: u32,
        /// The last error.
        error: RetryError,
    },
    /// A handoff validator kept refusing a producer's output.
    #[error(
        "handoff from `{producer}` to `{consumer}` failed after {attempts} attempts: {message}"
    )]
    Handoff {
        /// The producer.
        producer: String,
        /// The consumer.
        consumer: String,
        /// Attempts made.
        attempts: u32,
        /// The validator's last message.
        message: String,
    },
    /// A resume state that cannot be used: malformed, truncated, or from another workflow.
    #[error("cannot resume workflow `{workflow}`: {reason}")]
    BadState {
        /// The workflow.
        workflow: String,
        /// What is wrong.
        reason: String,
    },
    /// The model failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A prompt template failed.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// A context ID could not be issued (an agent name that cannot be an ID segment).
    #[error(transparent)]
    ContextId(#[from] ContextIdError),
    /// A prompt contributor failed while assembling a system prompt.
    #[error(transparent)]
    Contributor(#[from] crate::contributor::AssemblyError),
}

impl Workflow {
    /// An empty workflow.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            members: BTreeMap::new(),
            steps: Vec::new(),
            handoffs: Vec::new(),
            synthesis: None,
            config: WorkflowConfig::default(),
            contributors: ContributorRegistry::standard(),
        }
    }

    /// Replaces the contributors that assemble each agent's system prompt.
    pub fn contributors(mut self, contributors: ContributorRegistry) -> Self {
        self.contributors = contributors;
        self
    }

    /// Adds an agent.
    pub fn member(mut self, member: Member) -> Self {
        self.members.insert(member.agent.name().to_owned(), member);
        self
    }

    /// Adds an agent without tools.
    pub fn agent(self, agent: &'static dyn DynAgent) -> Self {
        self.member(Member::new(agent))
    }

    /// Declares a goal: ordered `(agent, task)` steps.
    pub fn goal<'a>(mut self, steps: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        self.steps
            .extend(steps.into_iter().map(|(agent, task)| Step {
                agent: agent.to_owned(),
                task: task.to_owned(),
            }));
        self
    }

    /// Checks `producer`'s output before `consumer` starts.
    pub fn handoff(
        mut self,
        producer: &str,
        consumer: &str,
        validate: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.handoffs.push(Handoff {
            producer: producer.to_owned(),
            consumer: consumer.to_owned(),
            validate: Box::new(validate),
        });
        self
    }

    /// Ends with a synthesis: a final model call (agent name `synthesis`) that sees the whole
    /// conversation plus this instruction.
    pub fn synthesis(mut self, instruction: impl Into<String>) -> Self {
        self.synthesis = Some(instruction.into());
        self
    }

    /// Replaces the bounds.
    pub fn config(mut self, config: WorkflowConfig) -> Self {
        self.config = config;
        self
    }

    /// Checks that every step and handoff names a known agent.
    pub fn check(&self) -> Result<(), WorkflowError> {
        for (i, step) in self.steps.iter().enumerate() {
            self.known(&step.agent, &format!("step {}", i + 1))?;
        }
        for h in &self.handoffs {
            self.known(&h.producer, "a handoff")?;
            self.known(&h.consumer, "a handoff")?;
        }
        Ok(())
    }

    fn known(&self, agent: &str, place: &str) -> Result<&Member, WorkflowError> {
        self.members
            .get(agent)
            .ok_or_else(|| WorkflowError::UnknownAgent {
                workflow: self.name.clone(),
                place: place.to_owned(),
                agent: crate::limits::truncate(agent, 100).into_owned(),
                known: self.members.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }

    /// A runner of this workflow on `model`.
    pub fn runner(&self, model: Arc<dyn ChatModel>) -> Runner<'_> {
        Runner {
            workflow: self,
            model,
            transcript: Transcript::default(),
        }
    }

    /// Parses a resume state from untrusted JSON text: size and depth are checked before
    /// parsing, and the state must belong to this workflow and name known agents.
    pub fn parse_state(&self, text: &str) -> Result<WorkflowState, WorkflowError> {
        let bad = |reason: String| WorkflowError::BadState {
            workflow: self.name.clone(),
            reason,
        };
        let limits = &self.config.limits;
        if text.len() > limits.max_bytes {
            return Err(bad(format!(
                "state of {} bytes exceeds {} bytes",
                text.len(),
                limits.max_bytes
            )));
        }
        // A conversation nests a few levels; contexts are within the same limit as calls.
        if text_depth(text) > limits.max_depth.saturating_add(4) {
            return Err(bad(format!(
                "state nesting exceeds {} levels",
                limits.max_depth.saturating_add(4)
            )));
        }
        let state: WorkflowState = serde_json::from_str(text)
            .map_err(|e| bad(format!("state is not a valid workflow state: {e}")))?;
        self.check_state(&state).map_err(bad)?;
        Ok(state)
    }

    fn check_state(&self, state: &WorkflowState) -> Result<(), String> {
        if state.workflow != self.name {
            return Err(format!(
                "the state belongs to workflow `{}`",
                crate::limits::truncate(&state.workflow, 100)
            ));
        }
        if let Err(e) = ContextIdGenerator::resume(state.run_id.clone(), state.issued.clone()) {
            return Err(format!("the state's context id counters are invalid: {e}"));
        }
        if let Some(step) = &state.current
            && !self.members.contains_key(&step.agent)
        {
            return Err(format!(
                "the state's current agent `{}` is unknown",
                crate::limits::truncate(&step.agent, 100)
            ));
        }
        if let Some((agent, n)) = state
            .retries
            .iter()
            .find(|(_, n)| **n > self.config.max_retries)
        {
            return Err(format!(
                "the state's retry count for `{}` ({n}) is past the bound of {}",
                crate::limits::truncate(agent, 100),
                self.config.max_retries
            ));
        }
        if state.step_index.is_some_and(|i| i >= self.steps.len()) {
            return Err("the state's step index is past the declared steps".into());
        }
        match (&state.pending, state.phase) {
            (Some(_), Phase::Answering) | (None, Phase::Routing) => Ok(()),
            (None, Phase::Answering) => {
                Err("the state is answering but has no pending question".into())
            }
            (Some(_), Phase::Routing) => {
                Err("the state has a pending question but is not answering".into())
            }
        }
    }
}

/// The retry error for a tool call that names none of the agent's tools.
fn unknown_tool(member: &Member, message: String) -> RetryError {
    let names: Vec<String> = member.tools.iter().map(|t| t.definition().name).collect();
    RetryError::call(
        crate::error::ErrorKind::UnknownTool,
        message,
        format!("Call one of: {}", names.join(", ")),
    )
}

/// Runs one workflow on one model, recording a transcript.
pub struct Runner<'w> {
    workflow: &'w Workflow,
    model: Arc<dyn ChatModel>,
    transcript: Transcript,
}

/// What one agent's answer turned out to be.
enum Answer {
    Output(Value),
    Question(String),
}

impl Runner<'_> {
    /// What happened so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Starts a run on the user's request: it is the conversation's first message.
    pub async fn start(&self, request: &str) -> Result<WorkflowOutcome, WorkflowError> {
        self.start_run(ContextIdGenerator::fresh().run_id(), request)
            .await
    }

    /// Starts a run with a given run ID (the first segment of its context IDs).
    pub async fn start_run(
        &self,
        run_id: &str,
        request: &str,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        self.workflow.check()?;
        ContextIdGenerator::new(run_id)?;
        let first = Message::user(request);
        self.record("user", &first);
        let state = WorkflowState {
            workflow: self.workflow.name.clone(),
            run_id: run_id.to_owned(),
            issued: BTreeMap::new(),
            upstream: UpstreamContext::new(),
            current_call: None,
            conversation: vec![first],
            current: self.workflow.steps.first().cloned(),
            step_index: (!self.workflow.steps.is_empty()).then_some(0),
            phase: Phase::Routing,
            retries: BTreeMap::new(),
            hops: 0,
            pending: None,
        };
        self.drive(state).await
    }

    /// Resumes a paused run with the user's answer: it is appended to the conversation and the
    /// agent that asked continues.
    pub async fn resume(
        &self,
        mut state: WorkflowState,
        feedback: &str,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        self.workflow.check()?;
        self.workflow
            .check_state(&state)
            .map_err(|reason| WorkflowError::BadState {
                workflow: self.workflow.name.clone(),
                reason,
            })?;
        let Some(request) = state.pending.take() else {
            return Err(WorkflowError::BadState {
                workflow: self.workflow.name.clone(),
                reason: "the state has no pending question to answer".into(),
            });
        };
        let message = Message::user(format!(
            "User provided the following input: {feedback}\nPlease continue with your analysis based on this feedback."
        ));
        self.record(&request.requesting_agent, &message);
        state.conversation.push(message);
        self.drive(state).await
    }

    async fn drive(&self, mut state: WorkflowState) -> Result<WorkflowOutcome, WorkflowError> {
        let mut route: Vec<String> = Vec::new();
        while let Some(step) = state.current.clone() {
            let member = self.workflow.known(&step.agent, "the route")?;
            if state.phase == Phase::Routing {
                if state.hops >= self.workflow.config.max_hops {
                    return Err(WorkflowError::TooManyHops {
                        workflow: self.workflow.name.clone(),
                        hops: self.workflow.config.max_hops,
                        route: route.join(" -> "),
                    });
                }
                state.hops += 1;
                self.route_to(member, &step, &mut state)?;
            }
            route.push(step.agent.clone());
            let output = match self.answer(member, &mut state).await? {
                Answer::Question(prompt) => {
                    let request = HumanFeedbackRequest {
                        prompt,
                        requesting_agent: step.agent.clone(),
                        conversation: state.conversation.clone(),
                    };
                    state.phase = Phase::Answering;
                    // The state holds the conversation once; the request returned carries it.
                    state.pending = Some(HumanFeedbackRequest {
                        conversation: Vec::new(),
                        ..request.clone()
                    });
                    return Ok(WorkflowOutcome::NeedsInput { request, state });
                }
                Answer::Output(output) => output,
            };
            let next = self.next_step(&step, &output, &state);
            if let Some(message) = self.failed_handoff(&step.agent, next.as_ref(), &output) {
                self.refuse_handoff(&step.agent, next.as_ref(), message, &mut state)?;
                continue;
            }
            tracing::debug!(agent = %step.agent, "stored output in context");
            let id = state
                .current_call
                .take()
                .ok_or_else(|| WorkflowError::BadState {
                    workflow: self.workflow.name.clone(),
                    reason: "the current call has no context id".into(),
                })?;
            state.upstream.push(step.agent.clone(), id, output);
            // Retries are counted per call, as the runtime counts them.
            state.retries.remove(&step.agent);
            state.step_index = next.as_ref().and_then(|(_, index)| *index);
            state.current = next.map(|(step, _)| step);
            state.phase = Phase::Routing;
        }
        let output = self.finish(&mut state).await?;
        Ok(WorkflowOutcome::Finished { output, state })
    }

    /// Sends the accumulated context through the agent's contract path and appends the
    /// rendered prompt to the conversation as the routing message.
    fn route_to(
        &self,
        member: &Member,
        step: &Step,
        state: &mut WorkflowState,
    ) -> Result<(), WorkflowError> {
        let agent = member.agent;
        let ids = ContextIdGenerator::resume(state.run_id.clone(), state.issued.clone())?;
        let id = ids.next(agent.name())?;
        state.issued.insert(agent.name().to_owned(), id.sequence());
        let context = state.upstream.to_context_map();
        let keys: Vec<&String> = context.keys().collect();
        tracing::info!(agent = agent.name(), context_id = %id, ?keys, "context received");
        state.current_call = Some(id);
        let call = ToolCall::new(step.task.clone(), context);
        let prepared = agent.prepare_call(call).map_err(|e| match e {
            PrepareError::Retry(error) => WorkflowError::InputContract {
                agent: agent.name().to_owned(),
                error,
            },
            PrepareError::Prompt(e) => WorkflowError::Prompt(e),
        })?;
        self.transcript.push(Event::RenderedPrompt {
            agent: agent.name().into(),
            prompt: prepared.user_prompt.clone(),
        });
        let message = Message::user(prepared.user_prompt);
        state.conversation.push(message);
        state.phase = Phase::Answering;
        Ok(())
    }

    /// Asks the agent until its answer is an output that passes its contract, or a question.
    async fn answer(
        &self,
        member: &Member,
        state: &mut WorkflowState,
    ) -> Result<Answer, WorkflowError> {
        let agent = member.agent;
        let name = agent.name();
        let tools: Vec<ToolDefinition> = member.tools.iter().map(|t| t.definition()).collect();
        let mut tool_turns = 0;
        let id = state
            .current_call
            .clone()
            .ok_or_else(|| WorkflowError::BadState {
                workflow: self.workflow.name.clone(),
                reason: "the current agent has no call".into(),
            })?;
        let span = tracing::info_span!("agent_call", context_id = %id, agent = name);
        let system = self.workflow.contributors.assemble(&PromptContext {
            upstream: Some(&state.upstream),
            ..PromptContext::for_agent(agent, &id)
        })?;
        loop {
            let mut messages = vec![Message::system(system.clone())];
            messages.extend(state.conversation.iter().cloned());
            let request = ChatRequest::new(name, messages, tools.clone());
            let reply = self
                .model
                .complete(&request)
                .instrument(span.clone())
                .await?
                .message;
            self.record(name, &reply);
            state.conversation.push(reply.clone());
            let checked = if reply.tool_calls.is_empty() {
                self.check_answer(agent, &reply.content)
            } else {
                let results = self.call_tools(member, &reply.tool_calls, state);
                if member.return_tool_output {
                    // The first result of a tool the agent has is its output, checked like
                    // any answer; a made-up tool name is an error to retry, never an output.
                    match results.into_iter().flatten().next() {
                        Some(result) => self.check_value(agent, result),
                        None => Err(unknown_tool(
                            member,
                            "the answer called no tool the agent has".into(),
                        )),
                    }
                } else {
                    tool_turns += 1;
                    if tool_turns > self.workflow.config.max_tool_turns {
                        return Err(WorkflowError::TooManyToolTurns {
                            agent: name.to_owned(),
                            turns: tool_turns,
                        });
                    }
                    continue;
                }
            };
            let error = match checked {
                Ok(answer) => return Ok(answer),
                Err(error) => error,
            };
            let attempts = state.retries.entry(name.to_owned()).or_default();
            *attempts = attempts.saturating_add(1);
            tracing::warn!(agent = name, attempts = *attempts, error = %error, "output retry");
            self.transcript.push(Event::OutputRetry {
                agent: name.into(),
                error: error.to_json(),
            });
            if *attempts > self.workflow.config.max_retries {
                return Err(WorkflowError::OutputRetriesExhausted {
                    agent: name.to_owned(),
                    attempts: *attempts,
                    error,
                });
            }
            let retry = Message::user(crate::runtime::output_retry_message(&error.to_json()));
            self.record(name, &retry);
            state.conversation.push(retry);
        }
    }

    fn call_tools(
        &self,
        member: &Member,
        calls: &[ToolCallRequest],
        state: &mut WorkflowState,
    ) -> Vec<Option<Value>> {
        let mut results = Vec::new();
        for call in calls {
            let tool = member
                .tools
                .iter()
                .find(|t| t.definition().name == call.name);
            let result = tool.map(|t| t.call(&call.arguments));
            let shown = result.clone().unwrap_or_else(|| {
                let name = crate::limits::truncate(&call.name, 100);
                unknown_tool(member, format!("there is no tool named `{name}`")).to_json()
            });
            let message =
                Message::tool(&call.id, serde_json::to_string(&shown).unwrap_or_default());
            self.record(member.agent.name(), &message);
            state.conversation.push(message);
            results.push(result);
        }
        results
    }

    /// An answer is a question (`user_input_needed: true`) or an output for the contract.
    /// An answer with no JSON is kept as text when the agent has no output contract.
    fn check_answer(&self, agent: &dyn DynAgent, content: &str) -> Result<Answer, RetryError> {
        let limits = &self.workflow.config.limits;
        let value = match extract_json(content, limits) {
            Ok(value) => value,
            Err(_) if agent.output_contract().is_none() => Value::String(content.to_owned()),
            Err(e) => return Err(e),
        };
        self.check_value(agent, value)
    }

    /// A parsed answer: a question, or an output whose `next_agent` (if any) is a member and
    /// which passes the output contract.
    fn check_value(&self, agent: &dyn DynAgent, value: Value) -> Result<Answer, RetryError> {
        if value.get("user_input_needed") == Some(&Value::Bool(true)) {
            let prompt = value
                .get("user_prompt")
                .and_then(Value::as_str)
                .unwrap_or("Please provide input");
            return Ok(Answer::Question(prompt.to_owned()));
        }
        if let Some(next) = value.get("next_agent").and_then(Value::as_str)
            && !self.workflow.members.contains_key(next)
        {
            let known: Vec<&str> = self.workflow.members.keys().map(String::as_str).collect();
            return Err(RetryError::call(
                crate::error::ErrorKind::OutputContract,
                format!(
                    "`next_agent` names `{}`, which is not an agent of this workflow",
                    crate::limits::truncate(next, 100)
                ),
                format!(
                    "Set `next_agent` to one of: {}, or leave it out",
                    known.join(", ")
                ),
            ));
        }
        agent.check_output(&value)?;
        Ok(Answer::Output(value))
    }

    /// The output's `next_agent` if it names one, else the next declared step.
    fn next_step(
        &self,
        current: &Step,
        output: &Value,
        state: &WorkflowState,
    ) -> Option<(Step, Option<usize>)> {
        if let Some(next) = output.get("next_agent").and_then(Value::as_str) {
            let declared = self.workflow.steps.iter().position(|s| s.agent == next);
            let task = declared.map_or_else(
                || format!("Previous specialist ({}) completed their analysis. Please review the conversation history and continue with your specialized analysis.", current.agent),
                |i| self.workflow.steps[i].task.clone(),
            );
            // An agent outside the declared steps keeps the last declared position, so the
            // goal goes on after it instead of starting over.
            let index = declared.or(state.step_index);
            let step = Step {
                agent: next.to_owned(),
                task,
            };
            return Some((step, index));
        }
        let index = state.step_index.map_or(0, |i| i + 1);
        self.workflow
            .steps
            .get(index)
            .map(|s| (s.clone(), Some(index)))
    }

    fn failed_handoff(
        &self,
        producer: &str,
        next: Option<&(Step, Option<usize>)>,
        output: &Value,
    ) -> Option<String> {
        let (consumer, _) = next?;
        self.workflow
            .handoffs
            .iter()
            .filter(|h| h.producer == producer && h.consumer == consumer.agent)
            .find_map(|h| (h.validate)(output).err())
    }

    /// Sends a validator's message back to the producer, or stops past the bound.
    fn refuse_handoff(
        &self,
        producer: &str,
        next: Option<&(Step, Option<usize>)>,
        message: String,
        state: &mut WorkflowState,
    ) -> Result<(), WorkflowError> {
        let consumer = next.map(|(s, _)| s.agent.clone()).unwrap_or_default();
        let attempts = state.retries.entry(producer.to_owned()).or_default();
        *attempts = attempts.saturating_add(1);
        tracing::warn!(producer, consumer = %consumer, attempts = *attempts, message = %message, "handoff refused");
        if *attempts > self.workflow.config.max_retries {
            return Err(WorkflowError::Handoff {
                producer: producer.to_owned(),
                consumer,
                attempts: *attempts,
                message,
            });
        }
        let retry = Message::user(format!(
            "The `{consumer}` agent cannot use your output: {message}\nFix it and answer again with one JSON object."
        ));
        self.record(producer, &retry);
        state.conversation.push(retry);
        state.phase = Phase::Answering;
        Ok(())
    }

    async fn finish(&self, state: &mut WorkflowState) -> Result<String, WorkflowError> {
        let Some(instruction) = &self.workflow.synthesis else {
            let last = state
                .conversation
                .iter()
                .rev()
                .find(|m| m.role == crate::Role::Assistant);
            return Ok(last.map(|m| m.content.clone()).unwrap_or_default());
        };
        let mut messages = vec![Message::system(format!(
            "You are the coordinator of the `{}` workflow. Synthesize the specialists' work for the user.",
            self.workflow.name
        ))];
        messages.extend(state.conversation.iter().cloned());
        let instruction = Message::user(instruction.clone());
        self.record("synthesis", &instruction);
        messages.push(instruction.clone());
        let request = ChatRequest::new("synthesis", messages, Vec::new());
        let reply = self.model.complete(&request).await?.message;
        self.record("synthesis", &reply);
        state.conversation.push(instruction);
        state.conversation.push(reply.clone());
        Ok(reply.content)
    }

    fn record(&self, agent: &str, message: &Message) {
        self.transcript.push(Event::Message {
            agent: agent.into(),
            message: message.clone(),
        });
    }
}
