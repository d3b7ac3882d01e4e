//! What a model sees of a tool: its definition (name, description, argument schema), and the
//! definition of an agent called as a tool. Each provider's wire format for it lives with the
//! provider (agent-llm).

use crate::contract::Contract;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A tool a model can call: a name, a description and a JSON Schema for the arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// `run_<agent name>`.
    pub name: String,
    /// The agent's description, then the list of required inputs, then the inputs only a
    /// person can give (`"x-source": "user"`).
    pub description: String,
    /// `task` (required) and the contract's properties at the top level, because parents pass
    /// them flat (those only a person can give are never required here: a call that omits
    /// one asks a person); `$defs` carried along so `$ref`s still resolve. The reserved keys a call may
    /// also carry (`run_identifier`, `context`) are not declared: no contract reads them, and
    /// a schema a model or an MCP client sees names only what the agent takes.
    pub parameters: Value,
}

impl ToolDefinition {
    /// Builds the definition of the agent `name` from its input contract.
    pub fn for_contract(name: &str, description: &str, contract: &Contract) -> Self {
        let schema = contract.schema();
        // A field only a person can give is not the model's to fill: listed as required, it
        // is the field a model invents. It stays a property (a model may pass what its user
        // said) and is named apart; a call without it asks a person.
        let user: Vec<String> = contract
            .user_fields()
            .iter()
            .map(|f| f.name.clone())
            .collect();
        let required: Vec<String> = contract
            .required_fields()
            .iter()
            .filter(|name| !user.contains(name))
            .cloned()
            .collect();
        let description = crate::texts::tool_description(description.trim_end(), &required, &user);
        let mut properties = Map::new();
        properties.insert(
            "task".into(),
            json!({"type": "string", "description": "What the agent should do"}),
        );
        if let Some(Value::Object(own)) = schema.get("properties") {
            properties.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let mut all_required = vec![Value::from("task")];
        all_required.extend(required.iter().map(|r| Value::from(r.as_str())));
        let mut parameters = Map::new();
        parameters.insert("type".into(), "object".into());
        parameters.insert("properties".into(), Value::Object(properties));
        parameters.insert("required".into(), Value::Array(all_required));
        for defs in ["$defs", "definitions"] {
            if let Some(d) = schema.get(defs) {
                parameters.insert(defs.into(), d.clone());
            }
        }
        Self {
            name: format!("run_{name}"),
            description,
            parameters: Value::Object(parameters),
        }
    }
}
