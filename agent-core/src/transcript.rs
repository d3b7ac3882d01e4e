//! A readable record of a run: each message, tool call, retry error and rendered prompt under
//! a header, and the context IDs that name each call in it.

pub use crate::ids::{ContextId, ContextIdError, ContextIdGenerator, Segment, Timestamp};

use crate::chat::{Message, Role, Usage};
use agent_contracts_contract::Repair;

/// How many model calls and retries a run made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Answers the models gave.
    pub model_calls: usize,
    /// Calls a caller had to send again (input contract).
    pub input_retries: usize,
    /// Answers an agent had to give again (output contract or handoff).
    pub output_retries: usize,
    /// Streamed answers closed early because they could no longer pass their output
    /// contract (each is an output retry too).
    pub stopped_answers: usize,
    /// Bytes those answers had sent when they were closed.
    pub stopped_bytes: usize,
    /// Streamed answers cut before their end (the connection broke, or the body ended
    /// before the provider's last event) and asked again from the start: each partial answer
    /// was discarded.
    pub cut_streams: usize,
    /// Calls taken after lossless repairs instead of being sent back to their caller.
    pub repaired_calls: usize,
    /// Answers taken after lossless repairs instead of being asked again.
    pub repaired_answers: usize,
}
use serde_json::Value;
use std::fmt;
use std::sync::Mutex;

/// One thing that happened.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A message of an agent's conversation.
    Message {
        /// Whose conversation.
        agent: String,
        /// The message.
        message: Message,
    },
    /// A sub-agent's rendered user prompt.
    RenderedPrompt {
        /// The sub-agent.
        agent: String,
        /// The prompt.
        prompt: String,
    },
    /// A call that broke a tool's input contract.
    InputRetry {
        /// Who called.
        caller: String,
        /// The tool.
        tool: String,
        /// The retry error sent back.
        error: Value,
    },
    /// An agent call began: its context ID, and its attempt number (above 1 for a rerun).
    AgentCall {
        /// The agent.
        agent: String,
        /// The call's ID.
        context_id: crate::ids::ContextId,
        /// The first attempt of the call, from 1.
        attempt: u32,
    },
    /// The tokens one model call used, as the provider reported them.
    Usage {
        /// The agent that asked.
        agent: String,
        /// The call's usage.
        usage: Usage,
        /// The model that answered, as the response names it (a fallback's pick shows here).
        model: Option<String>,
    },
    /// A streamed answer closed as soon as it could no longer pass the agent's output
    /// contract: the tokens it would have gone on to write are never generated. The
    /// [`Event::OutputRetry`] that follows carries the error.
    Stopped {
        /// The agent.
        agent: String,
        /// Bytes of the answer received before the stream was closed.
        received: usize,
        /// The byte of the answer that decided it.
        at: usize,
    },
    /// A streamed answer was cut before its end and is asked again from the start, within
    /// the model's attempt budget: the partial answer is discarded, never sent back.
    StreamRetry {
        /// The agent.
        agent: String,
        /// Bytes of the answer received before the cut.
        received: usize,
    },
    /// An answer that broke the agent's output contract.
    OutputRetry {
        /// The sub-agent.
        agent: String,
        /// The error sent back to it.
        error: Value,
    },
    /// A tool call waits on a person ([`ToolPause`](crate::runtime::ToolPause)): the run
    /// pauses with its question.
    ToolPaused {
        /// The agent whose call it is.
        agent: String,
        /// The tool.
        tool: String,
        /// The question for the person.
        question: String,
    },
    /// A call that broke a tool's input contract, taken after lossless repairs: no retry.
    InputRepaired {
        /// Who called.
        caller: String,
        /// The tool.
        tool: String,
        /// Every fix made to the call.
        repairs: Vec<Repair>,
    },
    /// An answer that broke the agent's output contract, taken after lossless repairs: no
    /// retry.
    OutputRepaired {
        /// The agent.
        agent: String,
        /// Every fix made to the answer.
        repairs: Vec<Repair>,
    },
}

/// Where a run's events go as they happen, beside the transcript kept in memory: a store
/// ([`RunRecorder`](crate::recorder::RunRecorder)), a log. Set on a run with
/// [`Config::with_transcript_sink`](crate::Config::with_transcript_sink).
///
/// Called once per event, in the transcript's order, while the transcript is held: it must
/// return at once (hand the event to a task, never wait on I/O) and never read the
/// transcript back.
pub trait TranscriptSink: Send + Sync + fmt::Debug {
    /// Takes one event just recorded.
    fn record(&self, event: &Event);
}

/// The events of a run, in order; shared by the runtime's tasks.
#[derive(Debug, Default)]
pub struct Transcript {
    events: Mutex<Vec<Event>>,
    sink: Option<std::sync::Arc<dyn TranscriptSink>>,
}

impl Transcript {
    /// An empty transcript that also hands each event to `sink` as it is recorded.
    pub fn with_sink(sink: Option<std::sync::Arc<dyn TranscriptSink>>) -> Self {
        Self {
            events: Mutex::default(),
            sink,
        }
    }

    /// Records an event.
    pub(crate) fn push(&self, event: Event) {
        let mut events = self.lock();
        if let Some(sink) = &self.sink {
            sink.record(&event);
        }
        events.push(event);
    }

    /// A copy of the events so far.
    pub fn events(&self) -> Vec<Event> {
        self.lock().clone()
    }

    /// The tokens every model call of the run used so far.
    pub fn usage(&self) -> Usage {
        self.lock()
            .iter()
            .filter_map(|e| match e {
                Event::Usage { usage, .. } => Some(*usage),
                _ => None,
            })
            .sum()
    }

    /// What the run's model calls cost so far, in US dollars, priced by `prices` (a call
    /// whose model the table does not name counts nothing; a cost budget refuses such calls).
    ///
    /// ```
    /// # use agent_contracts::{model::Prices, transcript::Transcript};
    /// assert_eq!(Transcript::default().cost(&Prices::default()), 0.0);
    /// ```
    pub fn cost(&self, prices: &crate::cost::Prices) -> f64 {
        let events = self.lock();
        let priced = events.iter().filter_map(|e| match e {
            Event::Usage {
                usage,
                model: Some(model),
                ..
            } => prices.price(model).map(|price| price.cost(usage)),
            _ => None,
        });
        priced.sum()
    }

    /// How many model calls and output retries the run made so far.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for event in self.lock().iter() {
            match event {
                Event::Message { message, .. } if message.role == Role::Assistant => {
                    counts.model_calls += 1;
                }
                Event::OutputRetry { .. } => counts.output_retries += 1,
                Event::Stopped { received, .. } => {
                    counts.stopped_answers += 1;
                    counts.stopped_bytes = counts.stopped_bytes.saturating_add(*received);
                }
                Event::InputRetry { .. } => counts.input_retries += 1,
                Event::StreamRetry { .. } => counts.cut_streams += 1,
                Event::InputRepaired { .. } => counts.repaired_calls += 1,
                Event::OutputRepaired { .. } => counts.repaired_answers += 1,
                _ => {}
            }
        }
        counts
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Event>> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl fmt::Display for Transcript {
    /// Every event in order, each printed once: a tool result that only repeats the retry
    /// error printed just before it (what the caller was sent back) says so instead of printing
    /// it again, and so does a sub-agent's output handed to its caller (printed above as the
    /// sub-agent's answer).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let events = self.lock();
        let mut retried: Option<&Value> = None;
        let mut answered: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        for event in events.iter() {
            if let Event::Message { agent, message } = event {
                match message.role {
                    Role::Assistant => {
                        answered.insert(agent);
                    }
                    Role::Tool => {
                        if let Some((callee, context_id)) = output_of(&message.content)
                            && answered.contains(callee.as_str())
                        {
                            writeln!(
                                f,
                                "=== [{agent}] tool result ===\nthe output of {callee} above (success, context ID {context_id})\n"
                            )?;
                            retried = None;
                            continue;
                        }
                    }
                    _ => {}
                }
            }
            if let (Some(error), Event::Message { agent, message }) = (retried, event)
                && message.role == Role::Tool
                && serde_json::from_str::<Value>(&message.content)
                    .ok()
                    .as_ref()
                    == Some(error)
            {
                writeln!(
                    f,
                    "=== [{agent}] tool result ===
the retry error above
"
                )?;
                retried = None;
                continue;
            }
            retried = match event {
                Event::InputRetry { error, .. } => Some(error),
                _ => None,
            };
            write!(f, "{event}")?;
        }
        Ok(())
    }
}

/// The callee and context ID of a tool result that hands over a sub-agent's checked output
/// (`{"success": true, "agent", "context_id", "output"}`).
fn output_of(content: &str) -> Option<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Success {
        success: bool,
        agent: String,
        context_id: String,
        #[allow(dead_code, reason = "only its presence is checked")]
        output: serde::de::IgnoredAny,
    }
    let reply: Success = serde_json::from_str(content).ok()?;
    reply.success.then_some((reply.agent, reply.context_id))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

impl Event {
    /// The event as JSON, for a store or a page: an object whose `kind` names the variant
    /// in snake case (`message`, `rendered_prompt`, `input_retry`, `agent_call`, `usage`,
    /// `stopped`, `stream_retry`, `output_retry`, `tool_paused`, `input_repaired`,
    /// `output_repaired`) beside the variant's fields under their own names.
    ///
    /// ```
    /// use agent_contracts::transcript::Event;
    /// let event = Event::Stopped { agent: "a".into(), received: 40, at: 12 };
    /// assert_eq!(event.to_json()["kind"], "stopped");
    /// assert_eq!(event.to_json()["at"], 12);
    /// ```
    pub fn to_json(&self) -> Value {
        use serde_json::json;
        let message = |m: &Message| serde_json::to_value(m).unwrap_or(Value::Null);
        let repairs = |r: &[Repair]| serde_json::to_value(r).unwrap_or(Value::Null);
        match self {
            Self::Message { agent, message: m } => {
                json!({"kind": "message", "agent": agent, "message": message(m)})
            }
            Self::RenderedPrompt { agent, prompt } => {
                json!({"kind": "rendered_prompt", "agent": agent, "prompt": prompt})
            }
            Self::InputRetry {
                caller,
                tool,
                error,
            } => json!({"kind": "input_retry", "caller": caller, "tool": tool, "error": error}),
            Self::AgentCall {
                agent,
                context_id,
                attempt,
            } => json!({
                "kind": "agent_call", "agent": agent,
                "context_id": context_id.to_string(), "attempt": attempt,
            }),
            Self::Usage {
                agent,
                usage,
                model,
            } => json!({
                "kind": "usage", "agent": agent,
                "usage": serde_json::to_value(usage).unwrap_or(Value::Null), "model": model,
            }),
            Self::Stopped {
                agent,
                received,
                at,
            } => json!({"kind": "stopped", "agent": agent, "received": received, "at": at}),
            Self::StreamRetry { agent, received } => {
                json!({"kind": "stream_retry", "agent": agent, "received": received})
            }
            Self::OutputRetry { agent, error } => {
                json!({"kind": "output_retry", "agent": agent, "error": error})
            }
            Self::ToolPaused {
                agent,
                tool,
                question,
            } => json!({"kind": "tool_paused", "agent": agent, "tool": tool, "question": question}),
            Self::InputRepaired {
                caller,
                tool,
                repairs: r,
            } => json!({
                "kind": "input_repaired", "caller": caller, "tool": tool, "repairs": repairs(r),
            }),
            Self::OutputRepaired { agent, repairs: r } => {
                json!({"kind": "output_repaired", "agent": agent, "repairs": repairs(r)})
            }
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Message { agent, message } => write_message(f, agent, message),
            Self::RenderedPrompt { agent, prompt } => {
                writeln!(f, "=== [{agent}] rendered user prompt ===\n{prompt}\n")
            }
            Self::InputRetry {
                caller,
                tool,
                error,
            } => writeln!(
                f,
                "=== [{caller}] retry error from {tool} (input contract) ===\n{}\n",
                pretty(error)
            ),
            Self::AgentCall {
                agent,
                context_id,
                attempt,
            } => {
                let rerun = if *attempt > 1 { ", a rerun" } else { "" };
                writeln!(
                    f,
                    "=== [{agent}] agent call {context_id} (attempt {attempt}{rerun}) ===\n"
                )
            }
            Self::Usage {
                agent,
                usage,
                model,
            } => {
                let model = model
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default();
                writeln!(
                    f,
                    "=== [{agent}] tokens: {} in, {} out{model} ===\n",
                    usage.input_tokens, usage.output_tokens
                )
            }
            Self::Stopped {
                agent,
                received,
                at,
            } => writeln!(
                f,
                "=== [{agent}] answer stopped after {received} bytes (byte {at} broke the output contract) ===\n"
            ),
            Self::StreamRetry { agent, received } => writeln!(
                f,
                "=== [{agent}] stream cut after {received} bytes: the partial answer is discarded and asked again ===\n"
            ),
            Self::OutputRetry { agent, error } => writeln!(
                f,
                "=== [{agent}] retry error (output contract) ===\n{}\n",
                pretty(error)
            ),
            Self::ToolPaused {
                agent,
                tool,
                question,
            } => writeln!(
                f,
                "=== [{agent}] {tool} waits on a person's answer ===\n{question}\n"
            ),
            Self::InputRepaired {
                caller,
                tool,
                repairs,
            } => writeln!(
                f,
                "=== [{caller}] call of {tool} repaired (input contract) ===\n{}\n",
                repair_lines(repairs)
            ),
            Self::OutputRepaired { agent, repairs } => writeln!(
                f,
                "=== [{agent}] answer repaired (output contract) ===\n{}\n",
                repair_lines(repairs)
            ),
        }
    }
}

/// One line per fix: where, what, and the text before and after.
fn repair_lines(repairs: &[Repair]) -> String {
    let lines: Vec<String> = repairs
        .iter()
        .map(|r| {
            let path = if r.path.is_empty() { "/" } else { &r.path };
            format!("{path}: {} {} -> {}", r.kind, r.before, r.after)
        })
        .collect();
    lines.join("\n")
}

fn write_message(f: &mut fmt::Formatter<'_>, agent: &str, m: &Message) -> fmt::Result {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool result",
    };
    if !m.content.is_empty() || m.tool_calls.is_empty() {
        writeln!(f, "=== [{agent}] {role} ===\n{}\n", m.content)?;
    }
    for call in &m.tool_calls {
        let args = serde_json::from_str::<Value>(&call.arguments)
            .map(|v| pretty(&v))
            .unwrap_or_else(|_| call.arguments.clone());
        writeln!(f, "=== [{agent}] tool call {} ===\n{args}\n", call.name)?;
    }
    Ok(())
}
