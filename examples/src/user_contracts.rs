//! A user's contracts, read at run time from a folder of agent folders (the build-script
//! layout: `<agent>/input.schema.json`, optionally `output.schema.json` and `agent.json`),
//! for `agent-contract tool --schemas DIR` and `validate --schemas DIR`. No code is generated:
//! calls are checked against the schemas, not typed.

use agent_core::extract_json;
use agent_core::{Contract, ContractKind, Limits, RetryError, ToolCall, ToolDefinition};
use std::path::Path;

/// One agent folder's contracts.
#[derive(Debug)]
pub struct UserAgent {
    name: String,
    description: String,
    input: Contract,
    output: Option<Contract>,
}

impl UserAgent {
    /// Reads the agent `name` of the folder `schemas`. The error says which file is wrong.
    pub fn load(schemas: &Path, name: &str) -> Result<Self, String> {
        let dir = schemas.join(name);
        let input_path = dir.join("input.schema.json");
        if !input_path.is_file() {
            return Err(format!(
                "no agent `{name}` in {}: {} does not exist",
                schemas.display(),
                input_path.display()
            ));
        }
        let input = contract(name, ContractKind::Input, &input_path)?;
        let output_path = dir.join("output.schema.json");
        let output = output_path
            .is_file()
            .then(|| contract(name, ContractKind::Output, &output_path))
            .transpose()?;
        Ok(Self {
            name: name.to_owned(),
            description: description(&dir.join("agent.json"))?,
            input,
            output,
        })
    }

    /// The agent's tool definition, as generated agents give it.
    pub fn tool_definition(&self) -> ToolDefinition {
        ToolDefinition::for_contract(&self.name, &self.description, &self.input)
    }

    /// Checks kwargs text against the input contract.
    pub fn validate(&self, kwargs: &str, limits: &Limits) -> Result<(), RetryError> {
        let call = ToolCall::from_json_str(kwargs, limits)
            .map_err(|e| e.with_required(self.input.required_fields()))?;
        self.input.check(call.context(), limits)
    }

    /// Checks an answer (JSON, possibly inside prose or a code fence) against the output
    /// contract; without one, any JSON passes.
    pub fn check_output(&self, answer: &str, limits: &Limits) -> Result<(), RetryError> {
        let answer = extract_json(answer, limits)?;
        match &self.output {
            Some(contract) => contract.check(&answer, limits),
            None => Ok(()),
        }
    }
}

fn contract(name: &str, kind: ContractKind, path: &Path) -> Result<Contract, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Contract::from_json_str(name, kind, &text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `description` of `agent.json`, if the file exists.
fn description(path: &Path) -> Result<String, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(String::new());
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(value
        .get("description")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned())
}
