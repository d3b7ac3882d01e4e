//! The agent runtime: a model runs with agents as tools, each tool call goes through the
//! contract path, and both sides retry within bounds.
//!
//! - Input retry: kwargs that break a sub-agent's input contract come back to the caller as the
//!   retry error, as the tool result; the caller may call again.
//! - Output retry: an answer that breaks the sub-agent's output contract goes back to the
//!   sub-agent with the error and a "Previous attempt" section; it may answer again. The loop
//!   that asks is the one workflows use too.
//!
//! Every agent call (a loop, a tool call, a sub-agent call) gets a [`ContextId`] from the
//! runtime's [`ContextIdGenerator`]: tool results, retry errors, outputs, the transcript and
//! the `invoke_agent` span ([`telemetry`](crate::telemetry)) carry it. Sub-agent system prompts are assembled by the
//! runtime's [`ContributorRegistry`].

use crate::ask::UserAsk;
use crate::call::{
    Ask, Dispatch, Engine, OutputCheck, PausedTurn, Policy, Reply, Resumed, ToolReply, Toolbox,
    TurnEnd,
};
use crate::chat::{BoxFuture, ChatModel, ChatRequest, Message, ToolCallRequest};
use crate::config::Config;
use crate::contributor::{ContributorRegistry, PromptContext};
use crate::delivery::{StreamEvent, Watch};
use crate::error::{Error, Side};
use crate::ids::{ContextId, ContextIdGenerator};
use crate::output::AgentOutput;
use crate::rerun::PreviousAttempt;
use crate::telemetry::{self, CheckSide};
use crate::tool::{Tool, ToolPause};
use crate::transcript::{Event, Transcript};
use crate::upstream::UpstreamContext;
use agent_contracts_contract::Agent;
use agent_contracts_contract::{DynAgent, PrepareError, PreparedCall};
use agent_contracts_contract::{ErrorKind, Limits, RetryError, ToolDefinition};
use agent_contracts_contract::{PartialJson, PartialOutput};
use agent_contracts_contract::{Repair, repair_kwargs};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::sync::Arc;
use tracing::Instrument as _;

/// What a tool-calling loop run by [`Runtime::run_loop_pausable`] ended with: it answers,
/// or it waits (there is no third way).
#[derive(Debug)]
pub enum LoopOutcome {
    /// The agent answered without calling a tool.
    Done(Outcome),
    /// A tool call waits on a person: answer it with [`Runtime::resume_loop`].
    Paused(LoopPause),
}

/// A tool-calling loop stopped at a tool's question, with everything it needs to go on in
/// this process ([`Runtime::resume_loop`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct LoopPause {
    /// The loop's agent.
    pub agent: String,
    /// The tool whose call asks.
    pub tool: String,
    /// The question for a person.
    pub question: String,
    context_id: ContextId,
    messages: Vec<Message>,
    outputs: Vec<AgentOutput>,
    turn: PausedTurn,
}

/// What an agent loop ended with.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outcome {
    /// The final assistant text.
    pub content: String,
    /// The whole conversation of the loop.
    pub messages: Vec<Message>,
    /// The loop's agent call.
    pub context_id: ContextId,
    /// Every sub-agent call that returned a checked output, in the order the model asked for
    /// them.
    pub outputs: Vec<AgentOutput>,
}

impl Outcome {
    /// The typed output of the last call of `A`, if there was one.
    pub fn output_of<A: Agent>(&self) -> Option<&A::Output> {
        self.outputs
            .iter()
            .rev()
            .find_map(|output| output.typed::<A>())
    }
}

/// What a sub-agent call knows beyond its kwargs: who calls, and what reaches the prompt
/// contributors.
#[non_exhaustive]
#[derive(Debug, Clone, Default)]
pub struct CallOptions<'a> {
    /// Who calls, for the transcript and the traces (`user` when `None`).
    pub caller: Option<&'a str>,
    /// The upstream parts the call's context was built from.
    pub upstream: Option<&'a UpstreamContext>,
    /// The attempt this call redoes: the user prompt gets the "Previous attempt" section.
    pub previous: Option<&'a PreviousAttempt>,
    /// Anything else the contributors may use.
    pub metadata: Map<String, Value>,
}

impl<'a> CallOptions<'a> {
    /// These options with the [`caller`](Self::caller) named.
    pub fn with_caller(mut self, caller: &'a str) -> Self {
        self.caller = Some(caller);
        self
    }

    /// These options with the [`upstream`](Self::upstream) parts.
    pub fn with_upstream(mut self, upstream: &'a UpstreamContext) -> Self {
        self.upstream = Some(upstream);
        self
    }

    /// These options with the attempt the call redoes ([`previous`](Self::previous)).
    pub fn with_previous(mut self, previous: &'a PreviousAttempt) -> Self {
        self.previous = Some(previous);
        self
    }

    /// These options with [`metadata`](Self::metadata) for the contributors.
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = metadata;
        self
    }
}

/// Runs agents on a model and records a transcript.
///
/// ```
/// use agent_contracts::{Agent, Error, Message, Runtime, ScriptedModel};
/// use std::sync::Arc;
///
/// /// Writes crawl plans.
/// #[derive(Agent)]
/// #[agent(
///     name = "plan_generator_agent",
///     input = "../schemas/plan_generator_agent/input.schema.json",
///     output = "../schemas/plan_generator_agent/output.schema.json",
/// )]
/// struct PlanGeneratorAgent;
///
/// let model = ScriptedModel::default().script("plan_generator_agent", [Message::assistant(
///     r#"{"plan_file_path": "plans/login.md", "status": "success",
///         "agent_response_content": "Fill the form, submit."}"#,
/// )]);
/// let runtime = Runtime::new(Arc::new(model));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let kwargs = r#"{"task": "Plan it", "target_url": "https://myapp.com/login",
///     "task_name": "login", "collected_information": [
///     {"agent_name": "discovery_agent", "description": "Found the form",
///      "output": {"page_title": "Login", "discovered_elements": []}},
///     {"agent_name": "selector_agent", "description": "Chose the selectors",
///      "output": {"selectors": {}, "strategy": "id-first"}}]}"#;
/// let plan = runtime.call::<PlanGeneratorAgent>(kwargs).await?;
/// assert_eq!(plan.plan_file_path.as_str(), "plans/login.md");
///
/// // A call that breaks the input contract never reaches the model.
/// let error = runtime.call::<PlanGeneratorAgent>(r#"{"task": "Plan it"}"#).await.unwrap_err();
/// let retry = error.retry_error().unwrap();
/// assert_eq!(retry.missing_fields, ["target_url", "task_name", "collected_information"]);
/// # Ok::<(), Error>(()) }).unwrap();
/// ```
pub struct Runtime {
    model: Arc<dyn ChatModel>,
    config: Config,
    transcript: Transcript,
    context_ids: Arc<ContextIdGenerator>,
    contributors: ContributorRegistry,
    /// Plain tools every [`Runtime::run_loop`] offers beside its agents.
    tools: Vec<Arc<dyn Tool>>,
}

impl Runtime {
    /// A runtime over `model` (any [`ChatModel`], or one shared as `Arc<dyn ChatModel>`) with
    /// the default [`Config`].
    pub fn new(model: impl ChatModel + 'static) -> Self {
        Self::with_config(model, Config::default())
    }

    /// A runtime with explicit bounds and limits.
    pub fn with_config(model: impl ChatModel + 'static, config: Config) -> Self {
        Self {
            model: Arc::new(model),
            transcript: Transcript::with_sink(config.transcript_sink.clone()),
            config,
            context_ids: Arc::new(ContextIdGenerator::fresh()),
            contributors: ContributorRegistry::default(),
            tools: Vec::new(),
        }
    }

    /// Issues context IDs from `ids` (shared with the workflows of the same run) instead of
    /// a generator of its own for a fresh run.
    pub fn with_context_ids(mut self, ids: Arc<ContextIdGenerator>) -> Self {
        self.context_ids = ids;
        self
    }

    /// Assembles system prompts with `contributors` instead of
    /// [`ContributorRegistry::default`].
    pub fn with_contributors(mut self, contributors: ContributorRegistry) -> Self {
        self.contributors = contributors;
        self
    }

    /// Offers `tool` (a database query, an HTTP API, an MCP server's tool) to the model of every
    /// [`Runtime::run_loop`], beside the agents the loop is given. Its calls go through the
    /// same dispatch as the agents' (concurrency, the turn bound, the transcript).
    pub fn with_tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// What happened so far (kept after an error or a cancellation).
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    fn engine(&self) -> Engine<'_> {
        Engine::new(&*self.model, &self.config, &self.transcript)
    }

    /// Calls the agent `A` with kwargs text, as a parent model would: the input contract, the
    /// rendered user prompt, the model, and the output contract with bounded retries. Returns
    /// the typed output.
    ///
    /// A call that breaks the input contract returns [`Error::Retry`] with the retry error and
    /// never reaches the model.
    pub async fn call<A: Agent>(&self, kwargs: &str) -> Result<A::Output, Error> {
        self.typed_call::<A>(self.engine(), kwargs).await
    }

    /// Calls the agent `A` as [`Runtime::call`] does, its answer streamed: the stream yields
    /// the answer's typed partial value each time more of it is known ([`Streamed::Partial`]:
    /// every field optional, a string growing, an array by complete items), and ends with
    /// the checked output ([`Streamed::Output`]), after the same retries as `call`. The
    /// answer is checked against the output contract while it streams: one that can no longer
    /// pass is closed at once and asked again ([`Streamed::Retry`]: the partials start over).
    ///
    /// The runtime's [`Config::delivery`] watch, if any, sees the deltas too.
    ///
    /// ```
    /// use agent_contracts::{Agent, Error, Runtime, ScriptedModel, stream::Streamed};
    /// use futures_util::StreamExt as _;
    ///
    /// /// Writes crawl plans.
    /// #[derive(Agent)]
    /// #[agent(
    ///     name = "plan_generator_agent",
    ///     input = "../schemas/plan_generator_agent/input.schema.json",
    ///     output = "../schemas/plan_generator_agent/output.schema.json",
    /// )]
    /// struct PlanGeneratorAgent;
    ///
    /// let model = ScriptedModel::default().chunk_size(8).script("plan_generator_agent", [
    ///     // Broken in its first bytes: no `status` starts with "d". Closed there.
    ///     r#"{"status": "done", "plan_file_path": "plans/login.md", "agent_response_content": "..."}"#,
    ///     r#"{"plan_file_path": "plans/login.md", "status": "success",
    ///         "agent_response_content": "Fill the form, submit."}"#,
    /// ]);
    /// let runtime = Runtime::new(model);
    /// let kwargs = r#"{"task": "Plan it", "target_url": "https://myapp.com/login",
    ///     "task_name": "login", "collected_information": [
    ///     {"agent_name": "discovery_agent", "description": "Found the form",
    ///      "output": {"page_title": "Login", "discovered_elements": []}},
    ///     {"agent_name": "selector_agent", "description": "Chose the selectors",
    ///      "output": {"selectors": {}, "strategy": "id-first"}}]}"#;
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut stream = runtime.stream::<PlanGeneratorAgent>(kwargs);
    /// let (mut paths, mut retries) = (Vec::new(), 0);
    /// let plan = loop {
    ///     match stream.next().await.expect("the stream ends with the output")? {
    ///         Streamed::Partial(plan) => paths.extend(plan.plan_file_path),
    ///         Streamed::Retry => retries += 1,
    ///         Streamed::Output(plan) => break plan,
    ///     }
    /// };
    /// assert_eq!(retries, 1);
    /// assert_eq!(paths.last().map(String::as_str), Some("plans/login.md"));
    /// assert!(paths.len() > 1, "the path arrived in pieces: {paths:?}");
    /// assert_eq!(plan.plan_file_path.as_str(), "plans/login.md");
    /// # Ok::<(), Error>(()) }).unwrap();
    /// ```
    pub fn stream<'a, A>(&'a self, kwargs: &'a str) -> OutputStream<'a, A>
    where
        A: Agent + 'a,
        A::Output: PartialOutput,
    {
        let partials = Arc::new(Partials::<A> {
            outer: self.config.delivery.watch_arc(),
            state: std::sync::Mutex::new(PartialState::default()),
        });
        let watch = partials.clone();
        let call = Box::pin(async move {
            let engine = Engine {
                watch: Some(&*watch),
                ..self.engine()
            };
            self.typed_call::<A>(engine, kwargs).await
        });
        OutputStream {
            call: Some(call),
            end: None,
            partials,
        }
    }

    /// A typed call of `A` run by `engine`.
    async fn typed_call<A: Agent>(
        &self,
        engine: Engine<'_>,
        kwargs: &str,
    ) -> Result<A::Output, Error> {
        let agent = ByType::<A>(PhantomData);
        let id = self.context_ids.next(A::NAME)?;
        let span = telemetry::invoke_agent(A::NAME, Some(&id), id.run_id());
        let call = async {
            let (prepared, _) = self.prepare("user", &agent, kwargs, &id, 1)?;
            // Checked as `A` itself: the answer becomes `A::Output`, with no type erased on
            // the way back.
            let (output, _) = self
                .sub_agent(
                    engine,
                    &agent,
                    &agent,
                    &prepared,
                    &id,
                    &CallOptions::default(),
                )
                .await?;
            Ok(output)
        };
        let result = call.instrument(span.clone()).await;
        telemetry::end(&span, &result);
        result
    }

    /// Runs `agent` (a name for routing and the transcript, and the agent type of the loop's
    /// context ID) with `tools` (and the runtime's plain tools, [`Runtime::with_tool`]) until it
    /// answers without calling a tool.
    ///
    /// The system prompt is `system`, then the parts of the contributors that apply to
    /// `agent` (the standard ones add nothing to a loop: it is not a contract agent). The tool
    /// calls of one model turn run concurrently, up to [`Config::max_concurrency`], and their
    /// results are kept in the model's order.
    pub async fn run_loop(
        &self,
        agent: &str,
        system: &str,
        user: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<Outcome, Error> {
        match self.run_loop_pausable(agent, system, user, tools).await? {
            LoopOutcome::Done(outcome) => Ok(outcome),
            // A loop run this way keeps no pause to resume: a question for a person ends it,
            // rather than leaving the model to answer for the person.
            LoopOutcome::Paused(pause) => Err(Error::ToolPaused {
                agent: pause.agent,
                tool: pause.tool,
                question: pause.question,
            }),
        }
    }

    /// Runs a tool-calling loop as [`Runtime::run_loop`] does, except that a tool call that
    /// waits on a person ([`Tool::start`](crate::Tool::start): a remote agent's question, say)
    /// pauses it: [`LoopOutcome::Paused`] holds the question and the loop, and
    /// [`Runtime::resume_loop`] goes on with the person's answer, in this process.
    pub async fn run_loop_pausable(
        &self,
        agent: &str,
        system: &str,
        user: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<LoopOutcome, Error> {
        let id = self.context_ids.next(agent)?;
        let span = telemetry::invoke_agent(agent, Some(&id), id.run_id());
        let result = self
            .agent_loop(agent, id, system, user, tools)
            .instrument(span.clone())
            .await;
        telemetry::end(&span, &result);
        result
    }

    /// Goes on with a paused loop: the person's `answer` goes to the tool that asked (its
    /// result is the call's), then the loop runs on with the same `tools`, until it answers
    /// or a tool asks again.
    pub async fn resume_loop(
        &self,
        pause: LoopPause,
        answer: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<LoopOutcome, Error> {
        let span = telemetry::invoke_agent(
            &pause.agent,
            Some(&pause.context_id),
            pause.context_id.run_id(),
        );
        let adapters = self.adapters(tools);
        let toolbox = self.toolbox(&adapters);
        let LoopPause {
            agent,
            context_id,
            messages,
            outputs,
            turn,
            ..
        } = pause;
        let resumed = Resumed { turn, answer };
        let result = self
            .drive_loop(
                &agent,
                context_id,
                messages,
                outputs,
                &toolbox,
                Some(resumed),
            )
            .instrument(span.clone())
            .await;
        telemetry::end(&span, &result);
        result
    }

    /// Each agent as a tool, through its adapter.
    fn adapters<'r>(&'r self, tools: &[&'r dyn DynAgent]) -> Vec<AgentTool<'r>> {
        tools
            .iter()
            .map(|&agent| AgentTool {
                runtime: self,
                agent,
            })
            .collect()
    }

    /// A loop's tools: the agents' adapters, then the runtime's plain tools. The dispatch is
    /// the one workflow agents' plain tools go through.
    fn toolbox<'t>(&'t self, adapters: &'t [AgentTool<'t>]) -> Toolbox<'t> {
        Toolbox::new(
            adapters
                .iter()
                .map(|t| t as &dyn Dispatch)
                .chain(self.tools.iter().map(|t| t as &dyn Dispatch))
                .collect(),
        )
    }

    async fn agent_loop(
        &self,
        agent: &str,
        id: ContextId,
        system: &str,
        user: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<LoopOutcome, Error> {
        self.transcript.push(Event::AgentCall {
            agent: agent.into(),
            context_id: id.clone(),
            attempt: 1,
        });
        let extra = self
            .contributors
            .assemble(&PromptContext::new(agent, &id))?;
        let system = match (system.is_empty(), extra.is_empty()) {
            (_, true) => system.to_owned(),
            (true, false) => extra,
            (false, false) => format!("{system}\n\n{extra}"),
        };
        let messages = vec![Message::system(system), Message::user(user)];
        for m in &messages {
            self.engine().record(agent, m);
        }
        let adapters = self.adapters(tools);
        let toolbox = self.toolbox(&adapters);
        self.drive_loop(agent, id, messages, Vec::new(), &toolbox, None)
            .await
    }

    /// The loop over `messages`: the model's turns and their tool calls, from a `resumed`
    /// turn first if any, until the agent answers without calling a tool, a tool call waits
    /// on a person, or the turn bound is hit.
    async fn drive_loop(
        &self,
        agent: &str,
        id: ContextId,
        mut messages: Vec<Message>,
        mut outputs: Vec<AgentOutput>,
        tools: &Toolbox<'_>,
        mut resumed: Option<Resumed<'_>>,
    ) -> Result<LoopOutcome, Error> {
        let paused = |turn: PausedTurn, messages: Vec<Message>, outputs: Vec<AgentOutput>| {
            let (tool, question) = turn
                .asking()
                .map(|(tool, pause)| (tool.to_owned(), pause.question.clone()))
                .unwrap_or_default();
            LoopOutcome::Paused(LoopPause {
                agent: agent.to_owned(),
                tool,
                question,
                context_id: id.clone(),
                messages,
                outputs,
                turn,
            })
        };
        let mut failures: BTreeMap<String, u32> = BTreeMap::new();
        for _ in 0..self.config.max_turns {
            if let Some(Resumed { turn, answer }) = resumed.take() {
                let engine = self.engine();
                match engine
                    .resume_turn(agent, &id, tools, turn, answer, &mut messages)
                    .await?
                {
                    TurnEnd::Paused(turn) => return Ok(paused(turn, messages, outputs)),
                    TurnEnd::Done(_) => {}
                }
            }
            let request = ChatRequest::new(agent, messages.clone(), tools.definitions.clone());
            let reply = self.engine().complete(&request, id.run_id()).await?;
            self.engine().record(agent, &reply);
            messages.push(reply.clone());
            if reply.tool_calls.is_empty() {
                return Ok(LoopOutcome::Done(Outcome {
                    content: reply.content,
                    messages,
                    context_id: id.clone(),
                    outputs,
                }));
            }
            let replies = match self
                .engine()
                .call_tools(agent, &id, tools, &reply.tool_calls, &mut messages)
                .await?
            {
                TurnEnd::Done(replies) => replies,
                TurnEnd::Paused(turn) => return Ok(paused(turn, messages, outputs)),
            };
            // One reply may call a tool several times in parallel: the caller saw none of those
            // errors yet, so they count as one failed attempt per tool.
            let mut counted = BTreeSet::new();
            for (call, result) in reply.tool_calls.iter().zip(replies) {
                self.count_failure(agent, call, &result, &mut failures, &mut counted)?;
                if let ToolReply::Output(output) = result {
                    outputs.push(output);
                }
            }
        }
        Err(Error::TooManyTurns {
            agent: agent.to_owned(),
            turns: self.config.max_turns,
        })
    }

    /// Counts failed calls in a row per tool; past the bound the run stops.
    fn count_failure(
        &self,
        caller: &str,
        call: &ToolCallRequest,
        result: &ToolReply,
        failures: &mut BTreeMap<String, u32>,
        counted: &mut BTreeSet<String>,
    ) -> Result<(), Error> {
        // Made-up tool names share one count, so inventing new names buys no retries.
        let key = match result {
            ToolReply::Retry { error, .. } if error.kind == ErrorKind::UnknownTool => "",
            _ => call.name.as_str(),
        };
        let ToolReply::Retry { error, .. } = result else {
            failures.remove(key);
            return Ok(());
        };
        if !counted.insert(key.to_owned()) {
            return Ok(());
        }
        let count = failures.entry(key.to_owned()).or_default();
        *count = count.saturating_add(1);
        if *count > self.config.max_retries {
            let agent = call.name.strip_prefix("run_").unwrap_or(&call.name);
            return Err(Error::RetriesExhausted {
                agent: agent_contracts_contract::__private::truncate(agent, 100).into_owned(),
                side: Side::Input {
                    caller: caller.to_owned(),
                },
                attempts: *count,
                last: error.clone(),
            });
        }
        Ok(())
    }

    /// Calls `agent` with kwargs text, as [`Runtime::call`] does for a type: the input
    /// contract, the rendered user prompt, then the agent's own conversation until its answer
    /// passes its output contract, each failure sent back to it, at most `max_retries` times.
    /// `options` names the caller and carries what the contributors should see (upstream
    /// parts, metadata) and, for a redo, the previous attempt.
    ///
    /// The call gets its context ID before its input is checked: a call that breaks the input
    /// contract is [`Error::Retry`] with that ID, and never reaches the model.
    pub async fn call_sub_agent(
        &self,
        agent: &dyn DynAgent,
        kwargs: &str,
        options: CallOptions<'_>,
    ) -> Result<AgentOutput, Error> {
        let caller = options.caller.unwrap_or("user");
        let id = self.context_ids.next(agent.name())?;
        let span = telemetry::invoke_agent(agent.name(), Some(&id), id.run_id());
        let attempt = options.previous.map_or(1, |p| p.attempt.saturating_add(1));
        let call = async {
            let (prepared, repairs) = self.prepare(caller, agent, kwargs, &id, attempt)?;
            let (output, attempt) = self
                .sub_agent(self.engine(), agent, agent, &prepared, &id, &options)
                .await?;
            Ok(AgentOutput {
                agent: agent.name().to_owned(),
                context_id: id,
                output,
                attempt,
                repairs,
            })
        };
        let result = call.instrument(span.clone()).await;
        telemetry::end(&span, &result);
        // The caller is a model (a parent, an MCP or A2A peer): a call with faults of its own
        // is sent back without the fields only a person can give, which it would invent.
        result.map_err(|error| match error {
            Error::Retry {
                agent: name,
                context_id,
                error,
            } => Error::Retry {
                agent: name,
                context_id,
                error: agent.input_contract().for_calling_model(error),
            },
            other => other,
        })
    }

    /// The input path of the call `id` of `agent` by `caller`, shared by the typed and the
    /// type-erased call: the kwargs checked against the input contract and the user prompt
    /// rendered within the limits. Kwargs refused as written get the lossless repairs
    /// ([`Config::repairs`]) first: a call they make pass is taken, and its repairs, recorded
    /// (transcript, span), come back beside the prepared call. A broken call is recorded and
    /// becomes [`Error::Retry`] naming the call, with the error of the kwargs as written.
    /// Either way the input contract's verdict is an event of the current span, the call's
    /// `invoke_agent`, for `attempt`.
    fn prepare(
        &self,
        caller: &str,
        agent: &dyn DynAgent,
        kwargs: &str,
        id: &ContextId,
        attempt: u32,
    ) -> Result<(PreparedCall, Vec<Repair>), Error> {
        let tool = format!("run_{}", agent.name());
        tracing::info!(caller, tool, "tool call");
        let limits = &self.config.limits;
        let mut repairs = Vec::new();
        let prepared = match agent.prepare(kwargs, limits) {
            Err(PrepareError::Retry(error)) => {
                let contract = agent.input_contract();
                let repaired = repair_kwargs(kwargs, contract, self.config.repairs, limits)
                    .and_then(|repaired| {
                        let prepared = agent.prepare(&repaired.text, limits).ok()?;
                        Some((prepared, repaired.repairs))
                    });
                match repaired {
                    Some((prepared, fixes)) => {
                        telemetry::repaired(agent.name(), CheckSide::Input, &fixes, attempt);
                        self.transcript.push(Event::InputRepaired {
                            caller: caller.into(),
                            tool: tool.clone(),
                            repairs: fixes.clone(),
                        });
                        repairs = fixes;
                        Ok(prepared)
                    }
                    None => Err(PrepareError::Retry(error)),
                }
            }
            prepared => prepared,
        };
        if let Ok(_) | Err(PrepareError::Retry(_)) = &prepared {
            let error = match &prepared {
                Err(PrepareError::Retry(error)) => Some(error),
                _ => None,
            };
            let contract = Some(agent.input_contract());
            telemetry::contract_check(
                agent.name(),
                CheckSide::Input,
                contract,
                error,
                attempt,
                None,
            );
        }
        match prepared {
            Ok(prepared) => {
                let keys: Vec<&str> = prepared.call.entries().map(|(key, _)| key).collect();
                tracing::info!(agent = agent.name(), ?keys, "context received");
                Ok((prepared, repairs))
            }
            Err(PrepareError::Retry(error)) => {
                self.engine().reject(caller, &tool, &error, id);
                Err(Error::Retry {
                    agent: agent.name().to_owned(),
                    context_id: Some(id.clone()),
                    error,
                })
            }
            Err(PrepareError::Prompt(e)) => Err(e.into()),
        }
    }

    /// One sub-agent call on its own conversation, through the shared agent-call loop: its
    /// output as `check` makes it, and the attempt that gave it.
    async fn sub_agent<C: OutputCheck + ?Sized>(
        &self,
        engine: Engine<'_>,
        agent: &dyn DynAgent,
        check: &C,
        prepared: &PreparedCall,
        id: &ContextId,
        options: &CallOptions<'_>,
    ) -> Result<(C::Output, u32), Error> {
        let name = agent.name();
        let attempt = options.previous.map_or(1, |p| p.attempt.saturating_add(1));
        self.transcript.push(Event::AgentCall {
            agent: name.into(),
            context_id: id.clone(),
            attempt,
        });
        let user = match options.previous {
            Some(previous) => previous
                .append_to(&prepared.user_prompt)
                .map_err(|source| agent_contracts_contract::PromptError {
                    agent: name.to_owned(),
                    source: Box::new(source),
                })?,
            None => prepared.user_prompt.clone(),
        };
        self.transcript.push(Event::RenderedPrompt {
            agent: name.into(),
            prompt: user.clone(),
        });
        let ctx = PromptContext {
            upstream: options.upstream,
            previous: options.previous,
            metadata: options.metadata.clone(),
            ..PromptContext::for_agent(agent, id)
        };
        let system = self.contributors.assemble(&ctx)?;
        let ask = Ask {
            agent,
            check,
            id,
            system: &system,
            tools: &[],
            policy: Policy::SubAgent,
            attempt,
        };
        // A contract's media stay where its prompt put them: a previous attempt is appended.
        let mut conversation = vec![Message::user(user).with_media(prepared.media.clone())];
        match engine.ask(&ask, &mut conversation, &mut 0, None).await? {
            Reply::Output { output, attempt } => Ok((output, attempt)),
            // Questions are a workflow's: `Policy::SubAgent` never yields one, and a
            // sub-agent has no tools to pause.
            Reply::Question(_) | Reply::Paused(_) => {
                unreachable!("a runtime call never takes a question")
            }
        }
    }
}

/// An agent known only by its type, as a [`DynAgent`]: every method of the blanket impl reads
/// the type's associated items, so no value of `A` is needed.
struct ByType<A>(PhantomData<fn() -> A>);

/// A typed call's answer becomes `A::Output` itself.
impl<A: Agent> OutputCheck for ByType<A> {
    type Output = A::Output;
    fn check(&self, answer: &Value, limits: &Limits) -> Result<A::Output, RetryError> {
        agent_contracts_contract::check_output::<A>(answer, limits)
    }
}

impl<A: Agent> Agent for ByType<A> {
    const NAME: &'static str = A::NAME;
    const DESCRIPTION: &'static str = A::DESCRIPTION;
    type Input = A::Input;
    type Output = A::Output;

    fn output_contract() -> Option<&'static agent_contracts_contract::Contract> {
        A::output_contract()
    }

    fn render_user_prompt(
        call: &agent_contracts_contract::ToolCall,
        input: &Self::Input,
    ) -> Result<String, agent_contracts_contract::PromptError> {
        A::render_user_prompt(call, input)
    }
}

/// An agent as a tool of a parent model's loop: a call is [`Runtime::call_sub_agent`] on the
/// model's arguments, and a broken call is a retry error the parent reads, except a call that
/// omitted only fields a person must give ([`UserAsk`]): that call waits on a person
/// ([`ToolReply::Paused`]), and their answer, merged into the call, runs it.
struct AgentTool<'r> {
    runtime: &'r Runtime,
    agent: &'r dyn DynAgent,
}

/// The keys of an [`AgentTool`]'s pause state: the call's kwargs text so far, and the field
/// asked.
const KWARGS: &str = "kwargs";
const FIELD: &str = "field";

impl AgentTool<'_> {
    /// Runs the call on `kwargs`; `asked` is the field a person just answered, whose refused
    /// answer is asked again.
    async fn run(
        &self,
        caller: &str,
        kwargs: &str,
        asked: Option<&str>,
    ) -> Result<ToolReply, Error> {
        let options = CallOptions {
            caller: Some(caller),
            ..CallOptions::default()
        };
        match self
            .runtime
            .call_sub_agent(self.agent, kwargs, options)
            .await
        {
            Ok(output) => Ok(ToolReply::Output(output)),
            Err(Error::Retry {
                error,
                context_id: Some(context_id),
                ..
            }) => {
                let ask = UserAsk::of(self.agent, &error).or_else(|| {
                    asked.and_then(|field| UserAsk::refused(self.agent, field, &error))
                });
                Ok(match ask {
                    Some(ask) => ToolReply::Paused(ToolPause::new(
                        ask.question,
                        serde_json::json!({KWARGS: kwargs, FIELD: ask.field.name}),
                    )),
                    None => ToolReply::Retry { error, context_id },
                })
            }
            Err(error) => Err(error),
        }
    }
}

impl Dispatch for AgentTool<'_> {
    fn definition(&self) -> ToolDefinition {
        self.agent.tool_definition()
    }
    fn dispatch<'a>(
        &'a self,
        caller: &'a str,
        arguments: &'a str,
    ) -> BoxFuture<'a, Result<ToolReply, Error>> {
        Box::pin(self.run(caller, arguments, None))
    }
    /// The person's answer to the field the pause asked, merged into the call's kwargs; the
    /// state is read back untrusted (a stored run): a state this adapter did not write, or
    /// one past the size limit, is a retry error for the caller.
    fn resume<'a>(
        &'a self,
        caller: &'a str,
        pause: &'a ToolPause,
        answer: &'a str,
    ) -> BoxFuture<'a, Result<ToolReply, Error>> {
        Box::pin(async move {
            let kwargs = pause.state.get(KWARGS).and_then(Value::as_str);
            let field = pause.state.get(FIELD).and_then(Value::as_str);
            let limits = &self.runtime.config.limits;
            let merged = match (kwargs, field) {
                (Some(kwargs), Some(field)) if kwargs.len() <= limits.max_bytes => {
                    UserAsk::field_of(self.agent, field).and_then(|ask| {
                        let merged = ask.with_answer(kwargs, ask.value_of_text(answer))?;
                        Some((merged, field))
                    })
                }
                _ => None,
            };
            match merged {
                Some((merged, field)) => self.run(caller, &merged, Some(field)).await,
                None => Ok(ToolReply::Value(
                    serde_json::json!({
                        "success": false,
                        "tool": format!("run_{}", self.agent.name()),
                        "error": "the paused call's state is not one this tool wrote, so the answer cannot be used; call the tool again",
                    }),
                    Vec::new(),
                )),
            }
        })
    }
}

/// What a streamed typed call ([`Runtime::stream`]) yields.
pub enum Streamed<A: Agent>
where
    A::Output: PartialOutput,
{
    /// The answer so far, typed: every field optional.
    Partial(<A::Output as PartialOutput>::Partial),
    /// The answer was refused (as it streamed, or once complete) and the agent is asked
    /// again: the partials that follow are of the new answer.
    Retry,
    /// The checked output: the last item.
    Output(A::Output),
}

/// The stream of a typed call's partial values and its output: see [`Runtime::stream`]. It
/// runs the call as it is polled; dropping it cancels the call.
pub struct OutputStream<'a, A: Agent>
where
    A::Output: PartialOutput,
{
    call: Option<BoxFuture<'a, Result<A::Output, Error>>>,
    /// The call's end, once it came, until the items before it are handed out.
    end: Option<Result<A::Output, Error>>,
    partials: Arc<Partials<A>>,
}

/// Nothing of it is pinned in place: the call is boxed, the output is moved out whole.
impl<A: Agent> Unpin for OutputStream<'_, A> where A::Output: PartialOutput {}

impl<A: Agent> futures_util::Stream for OutputStream<'_, A>
where
    A::Output: PartialOutput,
{
    type Item = Result<Streamed<A>, Error>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        // The call runs the watch as it is polled: what it saw is handed out first, the
        // call's end last.
        if let Some(call) = this.call.as_mut()
            && let Poll::Ready(result) = call.as_mut().poll(cx)
        {
            this.call = None;
            this.end = Some(result);
        }
        if let Some(item) = this.partials.lock().queue.pop_front() {
            return Poll::Ready(Some(Ok(item)));
        }
        match this.end.take() {
            Some(end) => Poll::Ready(Some(end.map(Streamed::Output))),
            None if this.call.is_some() => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}

/// Items a streamed typed call holds for its reader; past it, a new partial value replaces the
/// last one held.
const HELD_ITEMS: usize = 64;

/// The watch of a streamed typed call: the answer read as it arrives, and the items not yet
/// handed out (at most [`HELD_ITEMS`]: a reader that falls behind skips values, and a call
/// never holds more).
struct Partials<A: Agent>
where
    A::Output: PartialOutput,
{
    /// The runtime's own watch, which sees every event too.
    outer: Option<Arc<dyn Watch>>,
    state: std::sync::Mutex<PartialState<A>>,
}

struct PartialState<A: Agent>
where
    A::Output: PartialOutput,
{
    answer: PartialJson,
    /// The last value handed out, so an unchanged one is not handed out again.
    last: Option<Value>,
    /// The answer in hand is complete: more text is a new answer.
    ended: bool,
    queue: std::collections::VecDeque<Streamed<A>>,
}

impl<A: Agent> Default for PartialState<A>
where
    A::Output: PartialOutput,
{
    fn default() -> Self {
        Self {
            answer: PartialJson::default(),
            last: None,
            ended: false,
            queue: std::collections::VecDeque::new(),
        }
    }
}

impl<A: Agent> Partials<A>
where
    A::Output: PartialOutput,
{
    fn lock(&self) -> std::sync::MutexGuard<'_, PartialState<A>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<A: Agent> PartialState<A>
where
    A::Output: PartialOutput,
{
    /// A new answer begins: the reader is told, and the partials start over.
    fn restart(&mut self) {
        self.answer = PartialJson::default();
        self.last = None;
        self.ended = false;
        self.queue.push_back(Streamed::Retry);
    }
}

impl<A: Agent> Watch for Partials<A>
where
    A::Output: PartialOutput,
{
    fn event(&self, event: StreamEvent<'_>) {
        if let Some(outer) = &self.outer {
            outer.event(event);
        }
        let mut state = self.lock();
        match event {
            StreamEvent::Text { text, .. } => {
                if state.ended {
                    state.restart();
                }
                state.answer.feed(text);
                let value = state.answer.value();
                if value.is_none() || value == state.last {
                    return;
                }
                let partial = <A::Output as PartialOutput>::partial(&state.answer);
                state.last = value;
                if state.queue.len() >= HELD_ITEMS
                    && let Some(Streamed::Partial(_)) = state.queue.back()
                {
                    state.queue.pop_back();
                }
                state.queue.push_back(Streamed::Partial(partial));
            }
            StreamEvent::Stopped { .. } | StreamEvent::Cut { .. } => state.restart(),
            StreamEvent::Done { .. } => state.ended = true,
            _ => {}
        }
    }
}
