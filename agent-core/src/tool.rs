//! Tools an agent's model can call: the one [`Tool`] trait.

use crate::chat::{BoxFuture, Media};
use serde_json::Value;

use agent_contracts_contract::ToolDefinition;

/// A plain tool an agent can call (a database query, an HTTP API, an MCP server's tool): the
/// definition the model sees and an async call on the model's arguments.
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
    /// model. The runtime calls this one; by default it is `call`'s result, without media.
    fn call_with_media<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { ToolOutput::new(self.call(arguments).await) })
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
