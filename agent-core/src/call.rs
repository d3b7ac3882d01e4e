//! The one agent call: ask an agent until its answer passes its output contract or the retry
//! bound is hit.
//!
//! [`Runtime`](crate::Runtime) (a sub-agent called as a tool, or [`Runtime::call`]) and
//! workflows (a step, over the shared conversation) both drive this loop; neither keeps a retry
//! loop of its own. One call here owns the request, the model call (cancellable), the
//! transcript events, the JSON extraction, the output check, plain tools the agent may call,
//! and on every retry the message with the retry error and the "Previous attempt" section that
//! names the call's context ID.
//!
//! Tool calls go through one dispatch ([`Engine::call_tools`]) whoever makes them: a
//! workflow agent calling plain [`Tool`]s, or a parent model calling agents, which the runtime
//! adapts to [`Dispatch`]. One unknown-tool message, one way to run a turn's calls
//! concurrently and keep the model's order, one bound on tool turns (`Config::max_turns`).
//!
//! [`Runtime::call`]: crate::Runtime::call

use crate::chat::{BoxFuture, ChatModel, ChatRequest, Message, OutputSchema, ToolCallRequest};
use crate::chat::{Media, ModelError, StreamDelta, StreamSink, Usage};
use crate::config::Config;
use crate::delivery::{StreamEvent, Watch, delta_event};
use crate::error::{Error, Side};
use crate::ids::ContextId;
use crate::output::AgentOutput;
use crate::rerun::{PreviousAttempt, describe_retry_error};
use crate::telemetry::{self, CheckSide};
use crate::tool::{Tool, ToolOutcome, ToolPause};
use crate::transcript::{Event, Transcript};
use agent_contracts_contract::__private::extract_json_text;
use agent_contracts_contract::CheckedOutput;
use agent_contracts_contract::DynAgent;
use agent_contracts_contract::ToolDefinition;
use agent_contracts_contract::{Broken, Contract, ErrorKind, Limits, RetryError};
use agent_contracts_contract::{Repair, Repaired, repair_answer};
use futures_util::StreamExt as _;
use serde_json::Value;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;
use tracing::Instrument as _;

/// Most bytes of a failed answer repeated in the "Previous attempt" section: the answer also
/// stays in the conversation, and the section shows enough of it to point at the problem.
const PREVIOUS_ANSWER_BYTES: usize = 8 * 1024;

/// Checks an answer's `next_agent` (a workflow's routing) before the output contract.
pub(crate) type RouteCheck<'a> = &'a (dyn Fn(&Value) -> Result<(), RetryError> + Send + Sync);

/// What runs an agent call: the model, the bounds, and where events are recorded.
#[derive(Clone, Copy)]
pub(crate) struct Engine<'r> {
    pub(crate) model: &'r dyn ChatModel,
    pub(crate) config: &'r Config,
    pub(crate) transcript: &'r Transcript,
    /// Who sees the answers as they stream; `None`: answers arrive whole.
    pub(crate) watch: Option<&'r dyn Watch>,
}

impl<'r> Engine<'r> {
    /// An engine whose answers arrive as `config.delivery` says.
    pub(crate) fn new(
        model: &'r dyn ChatModel,
        config: &'r Config,
        transcript: &'r Transcript,
    ) -> Self {
        Self {
            model,
            config,
            transcript,
            watch: config.delivery.watch(),
        }
    }
}

/// A model's answer to one request.
pub(crate) enum Answered {
    /// The whole answer.
    Whole(Message),
    /// A streamed answer closed as soon as it could no longer pass its contract: what was
    /// received, and why.
    Stopped { partial: Message, broken: Broken },
}

/// One agent call: who answers, under which ID and system prompt, what else it may do, and
/// how its answer is taken and checked.
pub(crate) struct Ask<'a, C: ?Sized + 'a = dyn DynAgent + 'a> {
    pub(crate) agent: &'a dyn DynAgent,
    /// What a checked answer becomes ([`OutputCheck`]).
    pub(crate) check: &'a C,
    pub(crate) id: &'a ContextId,
    pub(crate) system: &'a str,
    /// Plain tools the agent may call before it answers.
    pub(crate) tools: &'a [Arc<dyn Tool>],
    pub(crate) policy: Policy<'a>,
    /// The number of this call's first answer (above 1 for a rerun or after a pause).
    pub(crate) attempt: u32,
}

/// What differs between the two kinds of agent call; the loop itself is the same.
#[derive(Clone, Copy)]
pub(crate) enum Policy<'a> {
    /// A sub-agent called as a tool (or through `Runtime::call`): its answer is its output,
    /// which providers that can are asked to constrain to the output contract.
    SubAgent,
    /// A step of a workflow: the agent may ask the user (`{"user_input_needed": true,
    /// "user_prompt": ..}`), may answer in plain text when it has no output contract, and
    /// names the next agent, which `route` checks before the output contract.
    Step {
        route: RouteCheck<'a>,
        answer: Answer,
    },
}

/// Where a workflow agent's output comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Answer {
    /// What the agent writes after its tool calls.
    #[default]
    Written,
    /// The first result of a tool it calls, as is: no model turn rewraps it.
    FirstToolResult,
}

impl Policy<'_> {
    fn answer(&self) -> Answer {
        match self {
            Self::SubAgent => Answer::Written,
            Self::Step { answer, .. } => *answer,
        }
    }
}

/// How an answer becomes the call's output: through the type-erased agent (a sub-agent called
/// as a tool, a workflow step), or as the agent's own output type, so that a typed call gets its
/// output back without a downcast.
pub(crate) trait OutputCheck: Sync {
    /// What a checked answer becomes.
    type Output: Send;
    /// Checks `answer` against the output contract (if any) and types it.
    fn check(&self, answer: &Value, limits: &Limits) -> Result<Self::Output, RetryError>;
    /// Keeps `text`, the answer as the model wrote it, where the output shows it again.
    fn written(output: Self::Output, _text: &str) -> Self::Output {
        output
    }
    /// Keeps the lossless repairs the answer needed, where the output carries them.
    fn repaired(output: Self::Output, _repairs: Vec<Repair>) -> Self::Output {
        output
    }
}

impl<'d> OutputCheck for dyn DynAgent + 'd {
    type Output = CheckedOutput;
    fn check(&self, answer: &Value, limits: &Limits) -> Result<CheckedOutput, RetryError> {
        self.check_output(answer, limits)
    }
    fn written(output: CheckedOutput, text: &str) -> CheckedOutput {
        output.with_text(text)
    }
    fn repaired(output: CheckedOutput, repairs: Vec<Repair>) -> CheckedOutput {
        output.with_repairs(repairs)
    }
}

/// An answer that goes back to its agent, and why.
pub(crate) struct Refused<'a> {
    pub(crate) agent: &'a dyn DynAgent,
    pub(crate) id: &'a ContextId,
    pub(crate) error: &'a RetryError,
    /// What the agent answered (its text, or its tool calls as JSON).
    pub(crate) answered: &'a str,
    pub(crate) attempt: u32,
    pub(crate) refusal: Refusal<'a>,
}

/// What an agent call ended with.
pub(crate) enum Reply<O> {
    /// An answer that passed the output contract, and the attempt that gave it.
    Output { output: O, attempt: u32 },
    /// A question for the user (workflows only).
    Question(String),
    /// A tool call waits on a person: the turn's calls held until it is answered (only an
    /// agent with tools, a workflow step, gets one).
    Paused(PausedTurn),
}

/// A turn's tool calls held while one of them waits on a person: from the first call that
/// waits, in the model's order. The calls before it are answered in the conversation; these
/// are answered when the person's answer comes ([`Engine::ask`] with a [`Resumed`] turn), so
/// the tool messages keep the model's order. A workflow keeps it in its paused state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PausedTurn {
    /// The held calls; the first one waits on a person.
    pub(crate) calls: Vec<HeldCall>,
}

impl PausedTurn {
    /// The call whose question is open, and its pause.
    pub(crate) fn asking(&self) -> Option<(&str, &ToolPause)> {
        match self.calls.first()? {
            HeldCall::Paused { tool, pause, .. } => Some((tool.as_str(), pause)),
            HeldCall::Done { .. } => None,
        }
    }
}

/// One held tool call of a [`PausedTurn`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HeldCall {
    /// A call that waits on a person.
    Paused {
        /// The model's ID of the call.
        id: String,
        /// The tool called.
        tool: String,
        /// Its question and what it needs to go on.
        pause: ToolPause,
    },
    /// A call that ran, after one that waits: the tool message it gets.
    Done {
        /// The model's ID of the call.
        id: String,
        /// The tool called.
        tool: String,
        /// The tool message's text.
        result: String,
        /// The call was refused (a made-up tool): its text is a retry error, no result.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        refused: bool,
        /// The media its result brought.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        media: Vec<Media>,
    },
}

impl HeldCall {
    /// The model's ID of the call.
    pub(crate) fn id(&self) -> &str {
        match self {
            Self::Paused { id, .. } | Self::Done { id, .. } => id,
        }
    }

    /// The tool called.
    pub(crate) fn tool(&self) -> &str {
        match self {
            Self::Paused { tool, .. } | Self::Done { tool, .. } => tool,
        }
    }
}

/// A paused turn and the person's answer to its open question: an agent call goes on from
/// there instead of asking its model first.
pub(crate) struct Resumed<'a> {
    pub(crate) turn: PausedTurn,
    pub(crate) answer: &'a str,
}

/// A turn's tool calls, once run (or resumed).
pub(crate) enum TurnEnd {
    /// Every call has its tool message in the conversation: the replies, in the model's
    /// order.
    Done(Vec<ToolReply>),
    /// A call waits on a person.
    Paused(PausedTurn),
}

/// A turn's tool calls as they are answered: the replies whose messages are in the
/// conversation, and the calls held from the first one that waits on a person.
struct Turn {
    replies: Vec<ToolReply>,
    held: Vec<HeldCall>,
}

impl Turn {
    fn with_capacity(calls: usize) -> Self {
        Self {
            replies: Vec::with_capacity(calls),
            held: Vec::new(),
        }
    }

    /// Done when nothing is held, else paused at the first held call.
    fn end(self) -> TurnEnd {
        match self.held.is_empty() {
            true => TurnEnd::Done(self.replies),
            false => TurnEnd::Paused(PausedTurn { calls: self.held }),
        }
    }
}

/// Why an answer goes back to its agent.
#[derive(Clone, Copy)]
pub(crate) enum Refusal<'a> {
    /// It broke the output contract (or named an unknown tool or agent).
    Output,
    /// A handoff validator refused it for `consumer`.
    Handoff { consumer: &'a str, message: &'a str },
}

impl Engine<'_> {
    /// Asks `ask.agent` over `conversation` (the messages after the system prompt) until it
    /// answers with an output that passes its contract, or asks a question. `failures` counts
    /// failed answers in a row (a workflow keeps it in its state across a pause).
    ///
    /// A `resumed` turn (a tool call answered by a person) is finished first: its results
    /// are the turn's, as if they had just come.
    pub(crate) async fn ask<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        conversation: &mut Vec<Message>,
        failures: &mut u32,
        mut resumed: Option<Resumed<'_>>,
    ) -> Result<Reply<C::Output>, Error> {
        let name = ask.agent.name();
        let tools = Toolbox::new(ask.tools.iter().map(|t| t as &dyn Dispatch).collect());
        let mut tool_turns = 0u32;
        let mut attempt = ask.attempt;
        loop {
            if let Some(Resumed { turn, answer }) = resumed.take() {
                let replies = match self
                    .resume_turn(name, ask.id, &tools, turn, answer, conversation)
                    .await?
                {
                    TurnEnd::Paused(turn) => return Ok(Reply::Paused(turn)),
                    TurnEnd::Done(replies) => replies,
                };
                let asked = conversation
                    .iter()
                    .rev()
                    .find(|m| !m.tool_calls.is_empty())
                    .map(|m| serde_json::to_string(&m.tool_calls).unwrap_or_default())
                    .unwrap_or_default();
                let Some(checked) = self.after_tools(ask, &tools, replies, &mut tool_turns)? else {
                    continue;
                };
                match self.verdict(ask, checked, attempt) {
                    Ok(reply) => return Ok(reply),
                    Err(error) => {
                        attempt =
                            self.refused(ask, &error, &asked, attempt, failures, conversation)?;
                        continue;
                    }
                }
            }
            let mut messages = Vec::with_capacity(conversation.len() + 1);
            messages.push(Message::system(ask.system));
            messages.extend(conversation.iter().cloned());
            // A sub-agent's answer is its output: providers that can constrain it to the
            // output contract are asked to. A workflow agent may also ask the user a question.
            let output_schema = match ask.policy {
                Policy::SubAgent => ask.agent.output_contract().map(OutputSchema::from_contract),
                Policy::Step { .. } => None,
            };
            let request = ChatRequest {
                output_schema,
                ..ChatRequest::new(name, messages, tools.definitions.clone())
            };
            // A sub-agent's answer is its output from its first byte: while it streams it is
            // checked against the output contract. A workflow agent's may be a question.
            let prefix = match ask.policy {
                Policy::SubAgent => ask.agent.output_contract(),
                Policy::Step { .. } => None,
            };
            let reply = match self.answer(&request, prefix, ask.id.run_id()).await? {
                Answered::Whole(reply) => reply,
                Answered::Stopped { partial, broken } => {
                    telemetry::contract_check(
                        name,
                        CheckSide::Output,
                        prefix,
                        Some(&broken.error),
                        attempt,
                        Some(broken.at),
                    );
                    self.record(name, &partial);
                    conversation.push(partial.clone());
                    self.transcript.push(Event::Stopped {
                        agent: name.into(),
                        received: partial.content.len(),
                        at: broken.at,
                    });
                    let refused = Refused {
                        agent: ask.agent,
                        id: ask.id,
                        error: &broken.error,
                        answered: &partial.content,
                        attempt,
                        refusal: Refusal::Output,
                    };
                    self.refuse(&refused, failures, conversation)?;
                    attempt = attempt.saturating_add(1);
                    continue;
                }
            };
            self.record(name, &reply);
            conversation.push(reply.clone());
            let answered = match reply.tool_calls.is_empty() {
                true => reply.content.clone(),
                false => serde_json::to_string(&reply.tool_calls).unwrap_or_default(),
            };
            let checked = if reply.tool_calls.is_empty() {
                self.check_text(ask, &reply.content, attempt)
            } else {
                let replies = match self
                    .call_tools(name, ask.id, &tools, &reply.tool_calls, conversation)
                    .await?
                {
                    TurnEnd::Done(replies) => replies,
                    TurnEnd::Paused(turn) => return Ok(Reply::Paused(turn)),
                };
                match self.after_tools(ask, &tools, replies, &mut tool_turns)? {
                    None => continue,
                    Some(checked) => checked,
                }
            };
            match self.verdict(ask, checked, attempt) {
                Ok(reply) => return Ok(reply),
                Err(error) => {
                    attempt =
                        self.refused(ask, &error, &answered, attempt, failures, conversation)?;
                }
            }
        }
    }

    /// After a turn's tool calls: `None` when the agent writes its answer next (the turn
    /// counted against the bound), else its output, the first result of a tool it has (a
    /// made-up tool name is an error to retry, never an output).
    fn after_tools<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        tools: &Toolbox<'_>,
        replies: Vec<ToolReply>,
        tool_turns: &mut u32,
    ) -> Result<Option<Verdict<C::Output>>, Error> {
        if ask.policy.answer() == Answer::Written {
            *tool_turns += 1;
            if *tool_turns > self.config.max_turns {
                return Err(Error::TooManyTurns {
                    agent: ask.agent.name().to_owned(),
                    turns: *tool_turns,
                });
            }
            return Ok(None);
        }
        let first = replies.into_iter().find_map(|result| match result {
            ToolReply::Value(value, _) => Some(value),
            _ => None,
        });
        Ok(Some(match first {
            Some(result) => self.check_value(ask, result),
            None => Err(unknown_tool(tools, None)),
        }))
    }

    /// An answer's verdict, recorded: the reply the call ends with, or the error the answer
    /// goes back to the agent with.
    fn verdict<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        checked: Result<Checked<C::Output>, RetryError>,
        attempt: u32,
    ) -> Result<Reply<C::Output>, RetryError> {
        // A question is no answer to check; every other answer gets its verdict.
        if !matches!(checked, Ok(Checked::Question(_))) {
            telemetry::contract_check(
                ask.agent.name(),
                CheckSide::Output,
                ask.agent.output_contract(),
                checked.as_ref().err(),
                attempt,
                None,
            );
        }
        match checked? {
            Checked::Output(output) => Ok(Reply::Output { output, attempt }),
            Checked::Question(prompt) => Ok(Reply::Question(prompt)),
        }
    }

    /// Sends `answered`, refused with `error`, back to the agent ([`Engine::refuse`]): the
    /// number of the next attempt.
    fn refused<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        error: &RetryError,
        answered: &str,
        attempt: u32,
        failures: &mut u32,
        conversation: &mut Vec<Message>,
    ) -> Result<u32, Error> {
        let refused = Refused {
            agent: ask.agent,
            id: ask.id,
            error,
            answered,
            attempt,
            refusal: Refusal::Output,
        };
        self.refuse(&refused, failures, conversation)?;
        Ok(attempt.saturating_add(1))
    }

    /// Sends a refused answer back to its agent: counts the failure (past the bound the call
    /// ends with [`Error::RetriesExhausted`]), records the retry error, and appends the message
    /// with the error and the "Previous attempt" section naming the call.
    pub(crate) fn refuse(
        &self,
        refused: &Refused<'_>,
        failures: &mut u32,
        conversation: &mut Vec<Message>,
    ) -> Result<(), Error> {
        let Refused {
            agent,
            id,
            error,
            answered,
            attempt,
            refusal,
        } = *refused;
        let name = agent.name();
        *failures = failures.saturating_add(1);
        let traced = serde_json::to_value(error.with_context_id(id)).unwrap_or_default();
        tracing::warn!(agent = name, attempts = *failures, error = %error, "output retry");
        self.transcript.push(Event::OutputRetry {
            agent: name.into(),
            error: traced.clone(),
        });
        if *failures > self.config.max_retries {
            let side = match refusal {
                Refusal::Output => Side::Output,
                Refusal::Handoff { consumer, .. } => Side::Handoff {
                    consumer: consumer.to_owned(),
                },
            };
            return Err(Error::RetriesExhausted {
                agent: name.to_owned(),
                side,
                attempts: *failures,
                last: error.clone(),
            });
        }
        let answered =
            agent_contracts_contract::__private::truncate(answered, PREVIOUS_ANSWER_BYTES);
        let previous = PreviousAttempt::new(id.clone(), answered.into_owned(), attempt)
            .with_error(describe_retry_error(error));
        let section =
            previous
                .render()
                .map_err(|source| agent_contracts_contract::PromptError {
                    agent: name.to_owned(),
                    source: Box::new(source),
                })?;
        let text = match refusal {
            Refusal::Output => {
                let json =
                    serde_json::to_string_pretty(&error.with_context_id(id)).unwrap_or_default();
                crate::texts::output_retry(&json, &section)
            }
            Refusal::Handoff { consumer, message } => {
                crate::texts::handoff_refused(consumer, message, &section)
            }
        };
        let message = Message::user(text);
        self.record(name, &message);
        conversation.push(message);
        Ok(())
    }

    /// One model call, ended early by the run's cancellation token. Its usage goes into the
    /// transcript, and a run past its token budget stops here.
    pub(crate) async fn complete(
        &self,
        request: &ChatRequest,
        run_id: &str,
    ) -> Result<Message, Error> {
        match self.answer(request, None, run_id).await? {
            Answered::Whole(message) => Ok(message),
            // Without a contract to check, nothing stops a stream.
            Answered::Stopped { partial, .. } => Ok(partial),
        }
    }

    /// One model call, whole or streamed as the engine delivers. Streamed, each delta goes to
    /// the watch and, when `contract` is given, to its prefix check: the stream is closed at
    /// the first byte after which the answer can no longer pass, and the call answers
    /// [`Answered::Stopped`] with what was received. Usage is recorded either way.
    ///
    /// The call is a `chat` span of the run `run_id` (see [`telemetry`]).
    pub(crate) async fn answer(
        &self,
        request: &ChatRequest,
        contract: Option<&Contract>,
        run_id: &str,
    ) -> Result<Answered, Error> {
        let span = telemetry::chat(&request.agent, Some(run_id));
        let answered = self.answer_in(request, contract, &span).await;
        telemetry::end(&span, &answered);
        answered
    }

    /// [`Engine::answer`] inside `span`: the model is called in it (a model names itself on
    /// the span as it is called), and the response is recorded on it.
    async fn answer_in(
        &self,
        request: &ChatRequest,
        contract: Option<&Contract>,
        span: &tracing::Span,
    ) -> Result<Answered, Error> {
        let agent = request.agent.as_str();
        let Some(watch) = self.watch else {
            let call = span
                .in_scope(|| self.model.complete(request))
                .instrument(span.clone());
            let response = self.cancellable(agent, call).await??;
            telemetry::record_response(span, &response);
            self.account(agent, response.usage, response.model.as_deref())?;
            return Ok(Answered::Whole(response.message));
        };
        let mut sink = CallSink {
            agent,
            watch,
            contract,
            limits: &self.config.limits,
            check: contract.map(|c| c.prefix_check(&self.config.limits)),
            broken: None,
            received: 0,
            transcript: self.transcript,
        };
        let call = span
            .in_scope(|| self.model.stream(request, &mut sink))
            .instrument(span.clone());
        let streamed = self.cancellable(agent, call).await?;
        match (streamed, sink.broken) {
            (Ok(response), _) => {
                telemetry::record_response(span, &response);
                watch.event(StreamEvent::Done { agent });
                self.account(agent, response.usage, response.model.as_deref())?;
                Ok(Answered::Whole(response.message))
            }
            (Err(ModelError::Stopped { partial }), Some(broken)) => {
                let partial = *partial;
                if let Some(usage) = &partial.usage {
                    telemetry::record_usage(span, usage);
                }
                watch.event(StreamEvent::Stopped {
                    agent,
                    received: partial.message.content.len(),
                    error: &broken.error,
                });
                self.account(agent, partial.usage, partial.model.as_deref())?;
                Ok(Answered::Stopped {
                    partial: partial.message,
                    broken,
                })
            }
            (Err(error), _) => Err(error.into()),
        }
    }

    /// Records what a model call used; a run past its token or cost budget stops here.
    fn account(&self, agent: &str, usage: Option<Usage>, model: Option<&str>) -> Result<(), Error> {
        let Some(usage) = usage else {
            return Ok(());
        };
        self.transcript.push(Event::Usage {
            agent: agent.to_owned(),
            usage,
            model: model.map(str::to_owned),
        });
        if let Some(budget) = self.config.token_budget {
            let used = self.transcript.usage().total_tokens();
            if used > budget {
                return Err(Error::TokenBudget {
                    agent: agent.to_owned(),
                    used,
                    budget,
                });
            }
        }
        self.keep_cost_budget(agent, model)
    }

    /// Stops a run with a cost budget that passed it, or whose last call (answered by
    /// `model`) the price table cannot price.
    fn keep_cost_budget(&self, agent: &str, model: Option<&str>) -> Result<(), Error> {
        let Some(budget) = self.config.cost_budget else {
            return Ok(());
        };
        let prices = &self.config.prices;
        if model.and_then(|m| prices.price(m)).is_none() {
            return Err(Error::Unpriced {
                agent: agent.to_owned(),
                model: model.map(str::to_owned),
            });
        }
        let spent = self.transcript.cost(prices);
        if spent > budget {
            return Err(Error::CostBudget {
                agent: agent.to_owned(),
                spent,
                budget,
            });
        }
        Ok(())
    }

    /// Runs `work` unless the run is cancelled first.
    pub(crate) async fn cancellable<T>(
        &self,
        agent: &str,
        work: impl Future<Output = T>,
    ) -> Result<T, Error> {
        let cancelled = || Error::Cancelled {
            agent: agent.to_owned(),
        };
        if self.config.cancel.is_cancelled() {
            return Err(cancelled());
        }
        tokio::select! {
            biased;
            () = self.config.cancel.cancelled() => Err(cancelled()),
            value = work => Ok(value),
        }
    }

    /// Runs one reply's tool calls, up to `max_concurrency` at a time, and appends their
    /// results to the conversation in the model's order. A call of a tool `caller` does not
    /// have gets the retry error naming the ones it has, with the caller's own context ID:
    /// there is no callee to number. The first error (in the model's order) ends the turn.
    ///
    /// A call that waits on a person ([`ToolReply::Paused`]) holds its own message and those
    /// of the calls after it: the turn ends [`TurnEnd::Paused`], to go on with
    /// [`resume_turn`](Self::resume_turn).
    pub(crate) async fn call_tools(
        &self,
        caller: &str,
        caller_id: &ContextId,
        tools: &Toolbox<'_>,
        calls: &[ToolCallRequest],
        conversation: &mut Vec<Message>,
    ) -> Result<TurnEnd, Error> {
        // Collected first: a stream over a closure's map is not `Send` for every lifetime.
        let runs: Vec<_> = calls
            .iter()
            .map(|call| dispatch(tools, caller, call, caller_id.run_id()))
            .collect();
        let work = futures_util::stream::iter(runs)
            .buffered(self.config.max_concurrency.max(1))
            .collect::<Vec<_>>();
        let results = self.cancellable(caller, work).await?;
        let mut turn = Turn::with_capacity(results.len());
        for (call, result) in calls.iter().zip(results) {
            let reply = match result? {
                Some(reply) => reply,
                None => {
                    let error = unknown_tool(tools, Some(&call.name));
                    self.reject(caller, &call.name, &error, caller_id);
                    ToolReply::Retry {
                        error,
                        context_id: caller_id.clone(),
                    }
                }
            };
            self.answer_call(caller, &call.id, &call.name, reply, conversation, &mut turn);
        }
        Ok(turn.end())
    }

    /// One call's reply, in the model's order: its tool message, or held (it waits on a
    /// person, or a call before it does).
    fn answer_call(
        &self,
        caller: &str,
        id: &str,
        tool: &str,
        reply: ToolReply,
        conversation: &mut Vec<Message>,
        turn: &mut Turn,
    ) {
        let Turn { replies, held } = turn;
        if let ToolReply::Paused(pause) = reply {
            tracing::info!(caller, tool, "tool call waits on a person");
            self.transcript.push(Event::ToolPaused {
                agent: caller.into(),
                tool: tool.into(),
                question: pause.question.clone(),
            });
            held.push(HeldCall::Paused {
                id: id.to_owned(),
                tool: tool.to_owned(),
                pause,
            });
            return;
        }
        let text = serde_json::to_string(&reply).unwrap_or_default();
        let media = match &reply {
            ToolReply::Value(_, media) => media.clone(),
            _ => Vec::new(),
        };
        if held.is_empty() {
            let message = Message::tool(id, text).with_media(media);
            self.record(caller, &message);
            conversation.push(message);
            replies.push(reply);
        } else {
            held.push(HeldCall::Done {
                id: id.to_owned(),
                tool: tool.to_owned(),
                result: text,
                refused: matches!(reply, ToolReply::Retry { .. }),
                media,
            });
        }
    }

    /// Goes on with a paused turn given the person's `answer`: the call that asked is resumed
    /// with it, then each held call's message is appended in the model's order, until one
    /// waits on a person again (its question is the next pause) or the turn is done. The
    /// replies of a done turn are those of the held calls, in order.
    pub(crate) async fn resume_turn(
        &self,
        caller: &str,
        caller_id: &ContextId,
        tools: &Toolbox<'_>,
        turn: PausedTurn,
        answer: &str,
        conversation: &mut Vec<Message>,
    ) -> Result<TurnEnd, Error> {
        let mut answer = Some(answer);
        let mut done = Turn::with_capacity(turn.calls.len());
        for call in turn.calls {
            let reply = match call {
                // Held behind a call that waits again: held as it was.
                call if !done.held.is_empty() => {
                    done.held.push(call);
                    continue;
                }
                HeldCall::Done {
                    id,
                    result,
                    refused,
                    media,
                    ..
                } => {
                    let message = Message::tool(&id, result).with_media(media.clone());
                    self.record(caller, &message);
                    // A refused call's retry error is no tool's result.
                    if !refused {
                        let value = serde_json::from_str(&message.content).unwrap_or_default();
                        done.replies.push(ToolReply::Value(value, media));
                    }
                    conversation.push(message);
                    continue;
                }
                HeldCall::Paused { id, tool, pause } => match answer.take() {
                    // The next question of the turn: asked once this one is answered.
                    None => {
                        done.held.push(HeldCall::Paused { id, tool, pause });
                        continue;
                    }
                    Some(answer) => {
                        let run = resume_dispatch(
                            tools,
                            caller,
                            &tool,
                            &id,
                            &pause,
                            answer,
                            caller_id.run_id(),
                        );
                        let reply = self.cancellable(caller, run).await??;
                        (id, tool, reply)
                    }
                },
            };
            let (id, tool, reply) = reply;
            self.answer_call(caller, &id, &tool, reply, conversation, &mut done);
        }
        Ok(done.end())
    }

    /// Records a tool call that broke an input contract (or named no tool of the caller's).
    pub(crate) fn reject(
        &self,
        caller: &str,
        tool: &str,
        error: &RetryError,
        context_id: &ContextId,
    ) {
        tracing::warn!(caller, tool, error = %error, "input retry");
        self.transcript.push(Event::InputRetry {
            caller: caller.into(),
            tool: tool.into(),
            error: serde_json::to_value(error.with_context_id(context_id)).unwrap_or_default(),
        });
    }

    /// An answer's text: its JSON, or (for a workflow agent without an output contract) the
    /// text itself. An answer refused as written gets the lossless repairs
    /// ([`Config::repairs`](crate::Config::repairs)) before it goes back to its agent: one they
    /// make pass is taken, the repairs recorded (transcript, the agent's span, the output);
    /// otherwise the error of the answer as written stands.
    fn check_text<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        content: &str,
        attempt: u32,
    ) -> Result<Checked<C::Output>, RetryError> {
        let error = match self.check_written(ask, content) {
            Ok(checked) => return Ok(checked),
            Err(error) => error,
        };
        let limits = &self.config.limits;
        let contract = ask.agent.output_contract();
        let Some(repaired) = repair_answer(content, contract, self.config.repairs, limits) else {
            return Err(error);
        };
        let Repaired {
            value,
            text,
            repairs,
            ..
        } = repaired;
        let checked = match self.check_json(ask, value, &text) {
            Ok(checked) => checked,
            Err(_) => return Err(error),
        };
        let name = ask.agent.name();
        telemetry::repaired(name, CheckSide::Output, &repairs, attempt);
        self.transcript.push(Event::OutputRepaired {
            agent: name.into(),
            repairs: repairs.clone(),
        });
        Ok(match checked {
            Checked::Output(output) => Checked::Output(C::repaired(output, repairs)),
            question => question,
        })
    }

    /// An answer's text as written: its JSON, or (for a workflow agent without an output
    /// contract) the text itself.
    fn check_written<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        content: &str,
    ) -> Result<Checked<C::Output>, RetryError> {
        let (value, text) = match extract_json_text(content, &self.config.limits) {
            Ok(found) => found,
            Err(_)
                if matches!(ask.policy, Policy::Step { .. })
                    && ask.agent.output_contract().is_none() =>
            {
                (Value::String(content.to_owned()), "")
            }
            Err(e) => return Err(e),
        };
        self.check_json(ask, value, text)
    }

    /// An answer's JSON `value`, read from `text`: checked, the text kept for the output.
    fn check_json<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        mut value: Value,
        mut text: &str,
    ) -> Result<Checked<C::Output>, RetryError> {
        // A strict provider answers `null` for the optional properties the rewrite it was
        // sent made nullable: gone, the answer is checked against the contract as written,
        // and the model's text, which no longer matches it, is not kept.
        if let Some(contract) = ask.agent.output_contract()
            && contract.remove_strict_nulls(&mut value)
        {
            text = "";
        }
        // The output keeps the text the model wrote, to be shown again as written.
        Ok(match self.check_value(ask, value)? {
            Checked::Output(output) if !text.is_empty() => {
                Checked::Output(C::written(output, text))
            }
            checked => checked,
        })
    }

    /// A parsed answer: a question, or an output whose routing (if any) is accepted and which
    /// passes the output contract.
    fn check_value<C: OutputCheck + ?Sized>(
        &self,
        ask: &Ask<'_, C>,
        value: Value,
    ) -> Result<Checked<C::Output>, RetryError> {
        if let Policy::Step { route, .. } = ask.policy {
            if value.get("user_input_needed") == Some(&Value::Bool(true)) {
                let prompt = value
                    .get("user_prompt")
                    .and_then(Value::as_str)
                    .unwrap_or("Please provide input");
                return Ok(Checked::Question(prompt.to_owned()));
            }
            route(&value)?;
        }
        let output = ask.check.check(&value, &self.config.limits)?;
        Ok(Checked::Output(output))
    }

    /// Records a message of `agent`'s conversation.
    pub(crate) fn record(&self, agent: &str, message: &Message) {
        self.transcript.push(Event::Message {
            agent: agent.into(),
            message: message.clone(),
        });
    }
}

/// What one streamed model call's deltas go to: the watch and the prefix check of the
/// answer's contract. A cut stream that a retrying layer asks again starts it over
/// ([`StreamSink::restart`]): the partial answer is forgotten, the watch told, the transcript
/// records the cut.
struct CallSink<'a> {
    agent: &'a str,
    watch: &'a dyn Watch,
    contract: Option<&'a Contract>,
    limits: &'a Limits,
    check: Option<agent_contracts_contract::PrefixCheck<'a>>,
    /// The verdict that closed the stream, if its contract did.
    broken: Option<Broken>,
    /// Bytes of answer text received in this attempt.
    received: usize,
    transcript: &'a Transcript,
}

impl StreamSink for CallSink<'_> {
    fn delta(&mut self, delta: StreamDelta<'_>) -> ControlFlow<()> {
        self.watch.event(delta_event(self.agent, delta));
        if let StreamDelta::Text(text) = delta {
            self.received = self.received.saturating_add(text.len());
            if let Some(check) = self.check.as_mut()
                && let Err(found) = check.feed(text)
            {
                self.broken = Some(found);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    fn restart(&mut self) -> bool {
        self.watch.event(StreamEvent::Cut {
            agent: self.agent,
            received: self.received,
        });
        self.transcript.push(Event::StreamRetry {
            agent: self.agent.to_owned(),
            received: self.received,
        });
        self.check = self.contract.map(|c| c.prefix_check(self.limits));
        self.broken = None;
        self.received = 0;
        true
    }
}

/// A tool as the call loops dispatch it: a plain [`Tool`], or an agent that the runtime
/// calls as a tool (its adapter lives with the runtime).
pub(crate) trait Dispatch: Sync {
    /// What the model sees; the model calls it by the definition's name. Built once per
    /// loop ([`Toolbox`]): a plain tool's definition is its whole parameters schema.
    fn definition(&self) -> ToolDefinition;
    /// Its `gen_ai.tool.type` (`function`, `extension`, `datastore`).
    fn tool_type(&self) -> &'static str {
        "function"
    }
    /// Runs one call of `caller`'s on the model's arguments (untrusted JSON text).
    fn dispatch<'a>(
        &'a self,
        caller: &'a str,
        arguments: &'a str,
    ) -> BoxFuture<'a, Result<ToolReply, Error>>;
    /// Goes on with a call of `caller`'s that paused ([`ToolReply::Paused`]), given a
    /// person's `answer`. The default, for what never pauses, tells the model so.
    fn resume<'a>(
        &'a self,
        caller: &'a str,
        pause: &'a ToolPause,
        answer: &'a str,
    ) -> BoxFuture<'a, Result<ToolReply, Error>> {
        let _ = (caller, pause, answer);
        Box::pin(async move {
            Ok(ToolReply::Value(
                serde_json::json!({
                    "success": false,
                    "tool": self.definition().name,
                    "error": "this tool asks no question, so it takes no answer",
                }),
                Vec::new(),
            ))
        })
    }
}

/// A plain tool's result is JSON the model reads; it cannot fail the run. A call may wait on
/// a person ([`Tool::start`]).
impl Dispatch for Arc<dyn Tool> {
    fn definition(&self) -> ToolDefinition {
        (**self).definition()
    }
    fn tool_type(&self) -> &'static str {
        (**self).tool_type()
    }
    fn dispatch<'a>(
        &'a self,
        _: &'a str,
        arguments: &'a str,
    ) -> BoxFuture<'a, Result<ToolReply, Error>> {
        Box::pin(async move { Ok(self.start(arguments).await.into()) })
    }
    fn resume<'a>(
        &'a self,
        _: &'a str,
        pause: &'a ToolPause,
        answer: &'a str,
    ) -> BoxFuture<'a, Result<ToolReply, Error>> {
        Box::pin(async move { Ok(Tool::resume(&**self, pause, answer).await.into()) })
    }
}

impl From<ToolOutcome> for ToolReply {
    fn from(outcome: ToolOutcome) -> Self {
        match outcome {
            ToolOutcome::Done(output) => Self::Value(output.value, output.media),
            ToolOutcome::Paused(pause) => Self::Paused(pause),
        }
    }
}

/// A loop's tools with their definitions, built once per loop: the model is sent the
/// definitions, and a call finds its tool by the definition's name, without building a
/// definition (a plain tool's is its whole parameters schema) per call or per turn.
pub(crate) struct Toolbox<'t> {
    tools: Vec<&'t dyn Dispatch>,
    /// `definitions[i]` is `tools[i]`'s.
    pub(crate) definitions: Vec<ToolDefinition>,
}

impl<'t> Toolbox<'t> {
    pub(crate) fn new(tools: Vec<&'t dyn Dispatch>) -> Self {
        let definitions = tools.iter().map(|t| t.definition()).collect();
        Self { tools, definitions }
    }

    /// The tool the model calls `name`.
    fn find(&self, name: &str) -> Option<&'t dyn Dispatch> {
        let at = self.definitions.iter().position(|d| d.name == name)?;
        self.tools.get(at).copied()
    }
}

/// A tool call's result, as the calling model reads it.
///
/// Serializes as the plain tool's JSON; as `{"success": true, "agent", "context_id",
/// "output"}` for an agent's output (and `"repairs"` when the call needed lossless repairs); or as the retry error with `context_id` after its keys.
#[derive(Debug, Clone)]
pub(crate) enum ToolReply {
    /// A plain tool's result, and the media it brings.
    Value(Value, Vec<Media>),
    /// A sub-agent ran and its answer passed its output contract.
    Output(AgentOutput),
    /// The call could not be used (an unknown tool, a broken input contract): the caller
    /// should fix it and call again.
    Retry {
        /// What is wrong.
        error: RetryError,
        /// The rejected call (for a call of an unknown tool, the caller's own).
        context_id: ContextId,
    },
    /// The call waits on a person: the turn is held until the answer comes (never a
    /// tool message).
    Paused(ToolPause),
}

impl serde::Serialize for ToolReply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // What the calling model reads: keys in this order, the output as its agent wrote it.
        #[derive(serde::Serialize)]
        struct Success<'a> {
            success: bool,
            agent: &'a str,
            context_id: &'a ContextId,
            output: agent_contracts_contract::__private::Shown<'a>,
            /// The fixes the caller's kwargs needed, so its model learns the form.
            #[serde(skip_serializing_if = "<[Repair]>::is_empty")]
            repairs: &'a [Repair],
        }
        match self {
            Self::Value(value, _) => value.serialize(s),
            Self::Output(output) => Success {
                success: true,
                agent: &output.agent,
                context_id: &output.context_id,
                output: output.output.as_written(),
                repairs: &output.repairs,
            }
            .serialize(s),
            Self::Retry { error, context_id } => error.with_context_id(context_id).serialize(s),
            Self::Paused(pause) => pause.serialize(s),
        }
    }
}

/// One tool call: the tool's reply, or `None` for a tool the caller does not have. A named
/// function, so the future is `Send` for every lifetime (a closure's async block is not
/// general enough for that).
///
/// Each call is an `execute_tool` span of the run `run_id`; a sub-agent's `invoke_agent` is
/// beneath it.
async fn dispatch(
    tools: &Toolbox<'_>,
    caller: &str,
    call: &ToolCallRequest,
    run_id: &str,
) -> Result<Option<ToolReply>, Error> {
    let tool = tools.find(&call.name);
    let kind = tool.map_or("function", |t| t.tool_type());
    let span = telemetry::execute_tool(&call.name, &call.id, kind, run_id);
    let Some(tool) = tool else {
        telemetry::fail(&span, "unknown_tool");
        return Ok(None);
    };
    let result = tool
        .dispatch(caller, &call.arguments)
        .instrument(span.clone())
        .await;
    match &result {
        Ok(ToolReply::Retry { .. }) => telemetry::fail(&span, telemetry::CONTRACT_VIOLATION),
        Ok(_) => {}
        Err(error) => telemetry::fail(&span, telemetry::error_type(error)),
    }
    result.map(Some)
}

/// One paused call of `caller`'s resumed with a person's `answer`, as [`dispatch`] runs a
/// call: an `execute_tool` span of the run `run_id`. A tool the caller no longer has gets the
/// unknown-tool retry error.
async fn resume_dispatch(
    tools: &Toolbox<'_>,
    caller: &str,
    name: &str,
    id: &str,
    pause: &ToolPause,
    answer: &str,
    run_id: &str,
) -> Result<ToolReply, Error> {
    let tool = tools.find(name);
    let kind = tool.map_or("function", |t| t.tool_type());
    let span = telemetry::execute_tool(name, id, kind, run_id);
    let Some(tool) = tool else {
        telemetry::fail(&span, "unknown_tool");
        return Ok(ToolReply::Value(
            serde_json::to_value(unknown_tool(tools, Some(name))).unwrap_or_default(),
            Vec::new(),
        ));
    };
    let result = tool
        .resume(caller, pause, answer)
        .instrument(span.clone())
        .await;
    if let Err(error) = &result {
        telemetry::fail(&span, telemetry::error_type(error));
    }
    result
}

/// An answer checked: what it is, or the error it goes back with.
type Verdict<O> = Result<Checked<O>, RetryError>;

enum Checked<O> {
    Output(O),
    Question(String),
}

/// The retry error for a tool call that names none of the caller's tools (`called`, or none
/// at all), listing the ones it has: the one message for plain tools and agents alike.
fn unknown_tool(tools: &Toolbox<'_>, called: Option<&str>) -> RetryError {
    let names: Vec<&str> = tools.definitions.iter().map(|d| d.name.as_str()).collect();
    let message = match called {
        Some(name) => format!(
            "there is no tool named `{}`",
            agent_contracts_contract::__private::truncate(name, 100)
        ),
        None => "the answer called no tool the agent has".to_owned(),
    };
    RetryError::call(
        ErrorKind::UnknownTool,
        message,
        format!("Call one of: {}", names.join(", ")),
    )
}
