//! Tools an agent's model can call: the one [`Tool`] trait.

use crate::chat::BoxFuture;
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
}
