//! Tools an agent's model can call: the one [`Tool`] trait, and what a call that waits on a
//! person ends its turn with ([`ToolPause`]).

use crate::chat::{BoxFuture, Media};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_contracts_contract::ToolDefinition;

/// A plain tool an agent can call (a database query, an HTTP API, an MCP server's tool): the
/// definition the model sees and an async call on the model's arguments.
///
/// A tool whose call may wait on a person (a remote agent asking its user a question)
/// overrides [`start`](Tool::start) and [`resume`](Tool::resume): the run of a workflow step
/// then pauses as it does for the agent's own question, and goes on with the person's answer.
///
/// ```
/// use agent_contracts::model::BoxFuture;
/// use agent_contracts::Tool;
/// use agent_contracts::contract::ToolDefinition;
/// use serde_json::{Value, json};
///
/// struct Clock;
///
/// impl Tool for Clock {
///     fn definition(&self) -> ToolDefinition {
///         ToolDefinition {
///             name: "now".into(),
///             description: "The current time".into(),
///             parameters: json!({"type": "object"}),
///         }
///     }
///     fn call<'a>(&'a self, _arguments: &'a str) -> BoxFuture<'a, Value> {
///         Box::pin(async { json!({"time": "12:00"}) })
///     }
/// }
/// ```
pub trait Tool: Send + Sync {
    /// What the model sees.
    fn definition(&self) -> ToolDefinition;
    /// The tool's type as the OpenTelemetry GenAI conventions name it (`gen_ai.tool.type` on
    /// its `execute_tool` span): `function` (run by the client, the default), `extension`
    /// (an agent-side call of an external API, such as an MCP server's tool) or `datastore`.
    fn tool_type(&self) -> &'static str {
        "function"
    }
    /// Runs the tool on the model's arguments (untrusted JSON text); the result is JSON the
    /// model reads. Dropping the future stops the call.
    fn call<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, Value>;
    /// Runs the tool as [`call`](Self::call) does, its result with the media it brings
    /// beside the JSON (an MCP tool's images, say), which the next model request shows the
    /// model. By default it is `call`'s result, without media.
    fn call_with_media<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { ToolOutput::new(self.call(arguments).await) })
    }
    /// Runs the tool as the call loops do: its result, or a pause for a person
    /// ([`ToolOutcome::Paused`]). The default is [`call_with_media`](Tool::call_with_media)'s
    /// result: a tool that never waits on a person needs nothing else.
    fn start<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { ToolOutcome::Done(self.call_with_media(arguments).await) })
    }
    /// Goes on with a call that paused, given the person's `answer`: its result, or another
    /// pause (the answer was refused and the question stands, or a new question). `pause` is
    /// what [`start`](Tool::start) (or an earlier `resume`) returned, read back from a stored
    /// run: untrusted, so check its [`state`](ToolPause::state) as any input. The default,
    /// for a tool that never pauses, says so to the model.
    fn resume<'a>(&'a self, pause: &'a ToolPause, answer: &'a str) -> BoxFuture<'a, ToolOutcome> {
        let _ = (pause, answer);
        Box::pin(async move {
            ToolOutcome::done(serde_json::json!({
                "success": false,
                "tool": self.definition().name,
                "error": "this tool asks no question, so it takes no answer",
            }))
        })
    }
}

/// What a tool call ended with ([`Tool::start`], [`Tool::resume`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The result the model reads, and the media beside it.
    Done(ToolOutput),
    /// The call waits on a person: the run pauses with the question, and the person's answer
    /// goes to [`Tool::resume`].
    Paused(ToolPause),
}

impl ToolOutcome {
    /// A result without media.
    pub fn done(value: Value) -> Self {
        Self::Done(ToolOutput::new(value))
    }
}

/// A tool's result: JSON the model reads, and media beside it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model reads as the tool's result.
    pub value: Value,
    /// Images, audio and documents the result brings.
    pub media: Vec<Media>,
}

impl ToolOutput {
    /// A result without media.
    pub fn new(value: Value) -> Self {
        Self {
            value,
            media: Vec::new(),
        }
    }

    /// This result with `media`.
    pub fn with_media(mut self, media: Vec<Media>) -> Self {
        self.media = media;
        self
    }
}

/// A tool call that waits on a person: the question, and what the tool needs to go on with
/// the answer (a remote task's ID, say). A workflow keeps it in its paused state, stored with
/// the run, and hands it back to [`Tool::resume`], in this process or another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolPause {
    /// The question for the person.
    pub question: String,
    /// The tool's own JSON, to go on with (kept as given; read back untrusted).
    #[serde(default)]
    pub state: Value,
}

impl ToolPause {
    /// A pause with `question` for a person and the tool's `state` to go on with.
    pub fn new(question: impl Into<String>, state: Value) -> Self {
        Self {
            question: question.into(),
            state,
        }
    }
}
