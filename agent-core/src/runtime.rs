//! The agent runtime: a model runs with agents as tools, each tool call goes through the
//! contract path, and both sides retry within bounds.
//!
//! - Input retry: kwargs that break a sub-agent's input contract come back to the caller as the
//!   retry error, as the tool result; the caller may call again.
//! - Output retry: an answer that breaks the sub-agent's output contract goes back to the
//!   sub-agent with the error; it may answer again.

use crate::error::{ErrorKind, RetryError};
use crate::extract::extract_json;
use crate::limits::Limits;
use crate::model::{ChatModel, ChatRequest, Message, ModelError, ToolCallRequest};
use crate::tool::{DynAgent, PrepareError, PreparedCall};
use crate::transcript::{Event, Transcript};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

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
}

/// What an agent loop ended with.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The final assistant text.
    pub content: String,
    /// The whole conversation of the loop.
    pub messages: Vec<Message>,
}

/// Runs agents on a model and records a transcript.
pub struct Runtime {
    model: Arc<dyn ChatModel>,
    config: RunConfig,
    transcript: Transcript,
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
        }
    }

    /// What happened so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Runs `agent` (a name for routing and the transcript) with `tools` until it answers
    /// without calling a tool.
    pub async fn run_loop(
        &self,
        agent: &str,
        system: &str,
        user: &str,
        tools: &[&dyn DynAgent],
    ) -> Result<Outcome, RunError> {
        let mut messages = vec![Message::system(system), Message::user(user)];
        for m in &messages {
            self.transcript.push(Event::Message { agent: agent.into(), message: m.clone() });
        }
        let definitions: Vec<_> = tools.iter().map(|t| t.tool_definition()).collect();
        let mut failures: BTreeMap<String, usize> = BTreeMap::new();
        for _ in 0..self.config.max_turns {
            let request = ChatRequest {
                agent: agent.to_owned(),
                messages: messages.clone(),
                tools: definitions.clone(),
            };
            let reply = self.model.complete(&request).await?;
            self.transcript.push(Event::Message { agent: agent.into(), message: reply.clone() });
            messages.push(reply.clone());
            if reply.tool_calls.is_empty() {
                return Ok(Outcome { content: reply.content, messages });
            }
            for call in &reply.tool_calls {
                let result = self.call_tool(agent, tools, call).await?;
                self.count_failure(agent, call, &result, &mut failures)?;
                let text = serde_json::to_string(&result).unwrap_or_default();
                let message = Message::tool(&call.id, text);
                self.transcript.push(Event::Message { agent: agent.into(), message: message.clone() });
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
    ) -> Result<(), RunError> {
        let ToolResult::Retry(error) = result else {
            failures.remove(&call.name);
            return Ok(());
        };
        let count = failures.entry(call.name.clone()).or_default();
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

    async fn call_tool(
        &self,
        caller: &str,
        tools: &[&dyn DynAgent],
        call: &ToolCallRequest,
    ) -> Result<ToolResult, RunError> {
        let Some(agent) = tools.iter().find(|t| call.name == format!("run_{}", t.name())) else {
            let names: Vec<String> = tools.iter().map(|t| format!("run_{}", t.name())).collect();
            let error = RetryError::call(
                ErrorKind::UnknownTool,
                format!("there is no tool named `{}`", crate::limits::truncate(&call.name, 100)),
                format!("Call one of: {}", names.join(", ")),
            );
            return Ok(self.retry(caller, call, error));
        };
        self.execute(caller, *agent, call).await
    }

    /// Executes one agent tool call: the contract path, then the sub-agent's own conversation.
    pub async fn execute(
        &self,
        caller: &str,
        agent: &dyn DynAgent,
        call: &ToolCallRequest,
    ) -> Result<ToolResult, RunError> {
        tracing::info!(caller, tool = %call.name, "tool call");
        let prepared = match agent.prepare(&call.arguments, &self.config.limits) {
            Ok(prepared) => prepared,
            Err(PrepareError::Retry(error)) => return Ok(self.retry(caller, call, error)),
            Err(PrepareError::Prompt(e)) => return Err(e.into()),
        };
        let keys: Vec<&String> = prepared.call.context_map().keys().collect();
        tracing::info!(agent = agent.name(), ?keys, "context received");
        let output = self.run_sub_agent(agent, &prepared).await?;
        Ok(ToolResult::Success {
            agent: agent.name().to_owned(),
            output,
        })
    }

    fn retry(&self, caller: &str, call: &ToolCallRequest, error: RetryError) -> ToolResult {
        tracing::warn!(caller, tool = %call.name, error = %error, "input retry");
        self.transcript.push(Event::InputRetry {
            caller: caller.into(),
            tool: call.name.clone(),
            error: error.to_json(),
        });
        ToolResult::Retry(error)
    }

    /// Runs a sub-agent on its rendered prompt until its answer passes its output contract,
    /// sending each failure back to it, at most `max_retries` times.
    pub async fn run_sub_agent(
        &self,
        agent: &dyn DynAgent,
        prepared: &PreparedCall,
    ) -> Result<Value, RunError> {
        let name = agent.name();
        self.transcript.push(Event::RenderedPrompt {
            agent: name.into(),
            prompt: prepared.user_prompt.clone(),
        });
        let mut messages = vec![
            Message::system(system_prompt(agent)),
            Message::user(&prepared.user_prompt),
        ];
        let mut attempts = 0;
        loop {
            attempts += 1;
            let request = ChatRequest {
                agent: name.to_owned(),
                messages: messages.clone(),
                tools: Vec::new(),
            };
            let reply = self.model.complete(&request).await?;
            self.transcript.push(Event::Message { agent: name.into(), message: reply.clone() });
            let checked = extract_json(&reply.content, &self.config.limits)
                .and_then(|v| agent.check_output(&v).map(|()| v));
            let error = match checked {
                Ok(output) => return Ok(output),
                Err(error) => error,
            };
            tracing::warn!(agent = name, attempts, error = %error, "output retry");
            self.transcript.push(Event::OutputRetry { agent: name.into(), error: error.to_json() });
            if attempts > self.config.max_retries {
                return Err(RunError::OutputRetriesExhausted {
                    agent: name.to_owned(),
                    attempts,
                    last: error,
                });
            }
            messages.push(reply);
            messages.push(Message::user(output_retry_message(&error)));
        }
    }
}

/// A tool call's result, as the caller sees it.
#[derive(Debug, Clone)]
pub enum ToolResult {
    /// The sub-agent ran and its answer passed its output contract.
    Success {
        /// The sub-agent.
        agent: String,
        /// Its validated output.
        output: Value,
    },
    /// The call could not be used: the caller should fix it and call again.
    Retry(RetryError),
}

impl serde::Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Success { agent, output } => {
                json!({"success": true, "agent": agent, "output": output}).serialize(s)
            }
            Self::Retry(error) => error.serialize(s),
        }
    }
}

/// The sub-agent's system prompt: who it is and the output contract it must meet.
pub fn system_prompt(agent: &dyn DynAgent) -> String {
    let mut prompt = format!("You are the `{}` agent. {}", agent.name(), agent.description());
    match agent.output_contract() {
        Some(contract) => {
            let schema = serde_json::to_string_pretty(contract.schema()).unwrap_or_default();
            prompt.push_str(
                "\n\nAnswer with one JSON object that matches this output contract:\n```json\n",
            );
            prompt.push_str(&schema);
            prompt.push_str("\n```");
        }
        None => prompt.push_str("\n\nAnswer with one JSON object."),
    }
    prompt
}

fn output_retry_message(error: &RetryError) -> String {
    let json = serde_json::to_string_pretty(error).unwrap_or_default();
    format!(
        "Your answer broke your output contract. Fix it and answer again with one JSON object.\n\n```json\n{json}\n```"
    )
}
