//! The agent runtime: a model runs with agents as tools, each tool call goes through the
//! contract path, and both sides retry within bounds.
//!
//! - Input retry: kwargs that break a sub-agent's input contract come back to the caller as the
//!   retry error, as the tool result; the caller may call again.
//! - Output retry: an answer that breaks the sub-agent's output contract goes back to the
//!   sub-agent with the error and a "Previous attempt" section; it may answer again.
//!
//! Every agent call (a loop, a tool call, a sub-agent call) gets a [`ContextId`] from the
//! runtime's [`ContextIdGenerator`]: tool results, retry errors, outputs, the transcript and
//! the `agent_call` tracing span carry it. Sub-agent system prompts are assembled by the
//! runtime's [`ContributorRegistry`].

use crate::contributor::{AssemblyError, ContributorRegistry, PromptContext};
use crate::error::{ErrorKind, RetryError};
use crate::extract::extract_json;
use crate::ids::{ContextId, ContextIdError, ContextIdGenerator};
use crate::limits::Limits;
use crate::model::{ChatModel, ChatRequest, Message, ModelError, ToolCallRequest};
use crate::prompt::PromptError;
use crate::rerun::{AgentOutput, CallOptions, PreviousAttempt, describe_retry_error};
use crate::tool::{DynAgent, PrepareError, PreparedCall};
use crate::transcript::{Event, Transcript};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use tracing::Instrument as _;

/// Most bytes of a failed answer repeated in the "Previous attempt" section.
const PREVIOUS_ANSWER_BYTES: usize = 8 * 1024;

/// Bounds of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Retries after a first failed attempt, per tool (input) and per sub-agent call (output).
    pub max_retries: usize,
    /// Model turns one agent loop may take before it is stopped.
    pub max_turns: usize,
    /// Limits on every tool call's arguments and every answer.
    pub limits: Limits,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_turns: 16,
            limits: Limits::default(),
        }
    }
}

/// A run that could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The caller kept sending calls that break a tool's input contract.
    #[error(
        "`{caller}` called `{tool}` {attempts} times (1 call and {retries} retries) and every call broke its input contract; last error: {last}",
        retries = attempts - 1
    )]
    InputRetriesExhausted {
        /// The calling agent.
        caller: String,
        /// The tool.
        tool: String,
        /// Failed calls in a row.
        attempts: usize,
        /// The last retry error.
        last: RetryError,
    },
    /// A sub-agent kept answering against its output contract.
    #[error(
        "`{agent}` answered {attempts} times (1 answer and {retries} retries) and every answer broke its output contract; last error: {last}",
        retries = attempts - 1
    )]
    OutputRetriesExhausted {
        /// The sub-agent.
        agent: String,
        /// Answers given.
        attempts: usize,
        /// The last retry error.
        last: RetryError,
    },
    /// An agent loop took too many turns.
    #[error("`{agent}` did not finish within {turns} model turns")]
    TooManyTurns {
        /// The agent.
        agent: String,
        /// The bound.
        turns: usize,
    },
    /// The model failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A prompt template failed on valid input.
    #[error(transparent)]
    Prompt(#[from] crate::prompt::PromptError),
    /// An agent's name cannot be the agent type of a context ID.
    #[error(transparent)]
    ContextId(#[from] ContextIdError),
    /// A prompt contributor failed to give its part of a system prompt.
    #[error(transparent)]
    Contributor(#[from] AssemblyError),
}

/// What an agent loop ended with.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The final assistant text.
    pub content: String,
    /// The whole conversation of the loop.
    pub messages: Vec<Message>,
    /// The loop's agent call.
    pub context_id: ContextId,
}

/// Runs agents on a model and records a transcript.
pub struct Runtime {
    model: Arc<dyn ChatModel>,
    config: RunConfig,
    transcript: Transcript,
    context_ids: Arc<ContextIdGenerator>,
    contributors: ContributorRegistry,
}

impl Runtime {
    /// A runtime over `model` with default bounds.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        Self::with_config(model, RunConfig::default())
    }

    /// A runtime with explicit bounds.
    pub fn with_config(model: Arc<dyn ChatModel>, config: RunConfig) -> Self {
        Self {
            model,
            config,
            transcript: Transcript::default(),
            context_ids: Arc::new(ContextIdGenerator::fresh()),
            contributors: ContributorRegistry::standard(),
        }
    }

    /// Issues context IDs from `ids` (shared with the workflows of the same run) instead of
    /// a generator of its own for a fresh run.
    pub fn with_context_ids(mut self, ids: Arc<ContextIdGenerator>) -> Self {
        self.context_ids = ids;
        self
    }

    /// Assembles system prompts with `contributors` instead of
    /// [`ContributorRegistry::standard`].
    pub fn with_contributors(mut self, contributors: ContributorRegistry) -> Self {
        self.contributors = contributors;
        self
    }

    /// What happened so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The generator of this run's context IDs.
    pub fn context_ids(&self) -> &Arc<ContextIdGenerator> {
        &self.context_ids
    }

    /// The contributors of system prompts.
    pub fn contributors(&self) -> &ContributorRegistry {
        &self.contributors
    }

    /// Runs `agent` (a name for routing and the transcript, and the agent type of the loop's
    /// context ID) with `tools` until it answers without calling a tool.
    ///
    /// The system prompt is `system`, then the parts of the contributors that apply to
    /// `agent` (the standard ones add nothing to a loop: it is not a contract agent).
    pub async fn run_loop(
        &self,
        agent: &str,
        system: &str,
        user: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<Outcome, RunError> {
        let id = self.context_ids.next(agent)?;
        let span = tracing::info_span!("agent_call", context_id = %id, agent);
        self.agent_loop(agent, id, system, user, tools)
            .instrument(span)
            .await
    }

    async fn agent_loop(
        &self,
        agent: &str,
        id: ContextId,
        system: &str,
        user: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<Outcome, RunError> {
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
        let mut messages = vec![Message::system(system), Message::user(user)];
        for m in &messages {
            self.transcript.push(Event::Message {
                agent: agent.into(),
                message: m.clone(),
            });
        }
        let definitions: Vec<_> = tools.iter().map(|t| t.tool_definition()).collect();
        let mut failures: BTreeMap<String, usize> = BTreeMap::new();
        for _ in 0..self.config.max_turns {
            let request = ChatRequest::new(agent, messages.clone(), definitions.clone());
            let reply = self.model.complete(&request).await?.message;
            self.transcript.push(Event::Message {
                agent: agent.into(),
                message: reply.clone(),
            });
            messages.push(reply.clone());
            if reply.tool_calls.is_empty() {
                return Ok(Outcome {
                    content: reply.content,
                    messages,
                    context_id: id,
                });
            }
            // One reply may call a tool several times in parallel: the caller saw none of those
            // errors yet, so they count as one failed attempt per tool.
            let mut counted = std::collections::BTreeSet::new();
            for call in &reply.tool_calls {
                let result = self.call_tool(agent, &id, tools, call).await?;
                self.count_failure(agent, call, &result, &mut failures, &mut counted)?;
                let text = serde_json::to_string(&result).unwrap_or_default();
                let message = Message::tool(&call.id, text);
                self.transcript.push(Event::Message {
                    agent: agent.into(),
                    message: message.clone(),
                });
                messages.push(message);
            }
        }
        Err(RunError::TooManyTurns {
            agent: agent.to_owned(),
            turns: self.config.max_turns,
        })
    }

    /// Counts failed calls in a row per tool; past the bound the run stops.
    fn count_failure(
        &self,
        caller: &str,
        call: &ToolCallRequest,
        result: &ToolResult,
        failures: &mut BTreeMap<String, usize>,
        counted: &mut std::collections::BTreeSet<String>,
    ) -> Result<(), RunError> {
        // Made-up tool names share one count, so inventing new names buys no retries.
        let key = match result {
            ToolResult::Retry { error, .. } if error.kind == ErrorKind::UnknownTool => "",
            _ => call.name.as_str(),
        };
        let ToolResult::Retry { error, .. } = result else {
            failures.remove(key);
            return Ok(());
        };
        if !counted.insert(key.to_owned()) {
            return Ok(());
        }
        let count = failures.entry(key.to_owned()).or_default();
        *count += 1;
        if *count > self.config.max_retries {
            return Err(RunError::InputRetriesExhausted {
                caller: caller.to_owned(),
                tool: call.name.clone(),
                attempts: *count,
                last: error.clone(),
            });
        }
        Ok(())
    }

    /// A call of a tool the caller does not have gets the retry error with the caller's own
    /// context ID: there is no callee to number.
    async fn call_tool(
        &self,
        caller: &str,
        caller_id: &ContextId,
        tools: &[&dyn DynAgent],
        call: &ToolCallRequest,
    ) -> Result<ToolResult, RunError> {
        let Some(agent) = tools
            .iter()
            .find(|t| call.name == format!("run_{}", t.name()))
        else {
            let names: Vec<String> = tools.iter().map(|t| format!("run_{}", t.name())).collect();
            let error = RetryError::call(
                ErrorKind::UnknownTool,
                format!(
                    "there is no tool named `{}`",
                    crate::limits::truncate(&call.name, 100)
                ),
                format!("Call one of: {}", names.join(", ")),
            );
            return Ok(self.retry(caller, call, error, caller_id.clone()));
        };
        self.execute(caller, *agent, call).await
    }

    /// Executes one agent tool call: the contract path, then the sub-agent's own conversation.
    /// The call gets its context ID before its input is checked, so a retry error names it.
    pub async fn execute(
        &self,
        caller: &str,
        agent: &dyn DynAgent,
        call: &ToolCallRequest,
    ) -> Result<ToolResult, RunError> {
        let id = self.context_ids.next(agent.name())?;
        let span =
            tracing::info_span!("agent_call", context_id = %id, agent = agent.name(), caller);
        async move {
            tracing::info!(caller, tool = %call.name, "tool call");
            let prepared = match agent.prepare(&call.arguments, &self.config.limits) {
                Ok(prepared) => prepared,
                Err(PrepareError::Retry(error)) => return Ok(self.retry(caller, call, error, id)),
                Err(PrepareError::Prompt(e)) => return Err(e.into()),
            };
            let keys: Vec<&String> = prepared.call.context_map().keys().collect();
            tracing::info!(agent = agent.name(), ?keys, "context received");
            let output = self
                .sub_agent(agent, &prepared, id, &CallOptions::default())
                .await?;
            Ok(ToolResult::Success {
                agent: output.agent,
                context_id: output.context_id,
                output: output.output,
            })
        }
        .instrument(span)
        .await
    }

    fn retry(
        &self,
        caller: &str,
        call: &ToolCallRequest,
        error: RetryError,
        context_id: ContextId,
    ) -> ToolResult {
        tracing::warn!(caller, tool = %call.name, error = %error, "input retry");
        self.transcript.push(Event::InputRetry {
            caller: caller.into(),
            tool: call.name.clone(),
            error: error.to_json_with_context_id(&context_id),
        });
        ToolResult::Retry { error, context_id }
    }

    /// Runs a sub-agent on its rendered prompt until its answer passes its output contract,
    /// sending each failure back to it, at most `max_retries` times.
    pub async fn run_sub_agent(
        &self,
        agent: &dyn DynAgent,
        prepared: &PreparedCall,
    ) -> Result<Value, RunError> {
        self.call_sub_agent(agent, prepared, CallOptions::default())
            .await
            .map(|output| output.output)
    }

    /// Like [`Runtime::run_sub_agent`], with what the contributors should see (upstream parts,
    /// metadata) and, for a rerun, the previous attempt; returns the output with its call.
    pub async fn call_sub_agent(
        &self,
        agent: &dyn DynAgent,
        prepared: &PreparedCall,
        options: CallOptions<'_>,
    ) -> Result<AgentOutput, RunError> {
        let id = self.context_ids.next(agent.name())?;
        let span = tracing::info_span!("agent_call", context_id = %id, agent = agent.name());
        self.sub_agent(agent, prepared, id, &options)
            .instrument(span)
            .await
    }

    /// Runs a sub-agent again, as a new call, on a redo a human asked for: its user prompt is
    /// the prepared one followed by the "Previous attempt" section of `previous`.
    pub async fn rerun_sub_agent(
        &self,
        agent: &dyn DynAgent,
        prepared: &PreparedCall,
        previous: &PreviousAttempt,
    ) -> Result<AgentOutput, RunError> {
        let options = CallOptions {
            previous: Some(previous),
            ..CallOptions::default()
        };
        self.call_sub_agent(agent, prepared, options).await
    }

    /// One sub-agent call: each answer that breaks the output contract goes back to it with
    /// the retry error and the "Previous attempt" section, so no retry repeats a prompt.
    async fn sub_agent(
        &self,
        agent: &dyn DynAgent,
        prepared: &PreparedCall,
        id: ContextId,
        options: &CallOptions<'_>,
    ) -> Result<AgentOutput, RunError> {
        let name = agent.name();
        let prompt_error = |source| PromptError {
            agent: name.to_owned(),
            source,
        };
        let mut attempt = options.previous.map_or(1, |p| p.attempt.saturating_add(1));
        self.transcript.push(Event::AgentCall {
            agent: name.into(),
            context_id: id.clone(),
            attempt,
        });
        let user = match options.previous {
            Some(previous) => previous
                .append_to(&prepared.user_prompt)
                .map_err(prompt_error)?,
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
            ..PromptContext::for_agent(agent, &id)
        };
        let system = self.contributors.assemble(&ctx)?;
        let mut messages = vec![Message::system(system), Message::user(user)];
        let mut attempts = 0;
        loop {
            attempts += 1;
            let request = ChatRequest::new(name, messages.clone(), Vec::new());
            let reply = self.model.complete(&request).await?.message;
            self.transcript.push(Event::Message {
                agent: name.into(),
                message: reply.clone(),
            });
            let (error, answered) = match extract_json(&reply.content, &self.config.limits) {
                Ok(output) => match agent.check_output(&output) {
                    Ok(()) => {
                        return Ok(AgentOutput {
                            agent: name.to_owned(),
                            context_id: id,
                            output,
                            attempt,
                        });
                    }
                    Err(error) => (error, serde_json::to_string(&output).unwrap_or_default()),
                },
                Err(error) => (error, reply.content.clone()),
            };
            let traced = error.to_json_with_context_id(&id);
            tracing::warn!(agent = name, attempts, error = %error, "output retry");
            self.transcript.push(Event::OutputRetry {
                agent: name.into(),
                error: traced.clone(),
            });
            if attempts > self.config.max_retries {
                return Err(RunError::OutputRetriesExhausted {
                    agent: name.to_owned(),
                    attempts,
                    last: error,
                });
            }
            // The answer also stays in the conversation; the section shows enough of it to
            // point at the problem, never a whole oversized answer again.
            let answered = crate::limits::truncate(&answered, PREVIOUS_ANSWER_BYTES).into_owned();
            let previous = PreviousAttempt::new(id.clone(), answered, attempt)
                .with_error(describe_retry_error(&error));
            let section = previous.render().map_err(prompt_error)?;
            messages.push(reply);
            messages.push(Message::user(format!(
                "{}\n\n{section}",
                output_retry_message(&traced)
            )));
            attempt = attempt.saturating_add(1);
        }
    }
}

/// A tool call's result, as the caller sees it. Both kinds carry the context ID of the call
/// (for a call of an unknown tool, the caller's own).
///
/// Serializes as `{"success": true, "agent", "context_id", "output"}`, or as the retry error
/// with `context_id` after its keys.
#[derive(Debug, Clone)]
pub enum ToolResult {
    /// The sub-agent ran and its answer passed its output contract.
    Success {
        /// The sub-agent.
        agent: String,
        /// The call.
        context_id: ContextId,
        /// Its validated output.
        output: Value,
    },
    /// The call could not be used: the caller should fix it and call again.
    Retry {
        /// What is wrong.
        error: RetryError,
        /// The rejected call.
        context_id: ContextId,
    },
}

impl ToolResult {
    /// The call's context ID.
    pub fn context_id(&self) -> &ContextId {
        match self {
            Self::Success { context_id, .. } | Self::Retry { context_id, .. } => context_id,
        }
    }
}

impl serde::Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Success {
                agent,
                context_id,
                output,
            } => json!({
                "success": true,
                "agent": agent,
                "context_id": context_id,
                "output": output,
            })
            .serialize(s),
            Self::Retry { error, context_id } => {
                error.to_json_with_context_id(context_id).serialize(s)
            }
        }
    }
}

/// The sub-agent's system prompt: who it is and the output contract it must meet. The
/// standard contributors give the same text for a call without upstream parts.
pub fn system_prompt(agent: &dyn DynAgent) -> String {
    format!(
        "{}\n\n{}",
        crate::contributor::identity(agent),
        crate::contributor::output_contract(agent)
    )
}

/// The message that sends an output-contract error back to the agent that broke it; the
/// workflow sends the same one.
pub(crate) fn output_retry_message(error: &Value) -> String {
    let json = serde_json::to_string_pretty(error).unwrap_or_default();
    format!(
        "Your answer broke your output contract. Fix it and answer again with one JSON object.\n\n```json\n{json}\n```"
    )
}
