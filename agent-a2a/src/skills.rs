//! What a server serves: its skills (one per agent and per workflow), each with the
//! contracts the agent card declares, and the signed task IDs of workflow runs.

use crate::guard::Client;
use agent_contracts_runtime::contract::{ContractError, ContractKind};
use agent_contracts_runtime::{Contract, DynAgent, Workflow};
use hmac::{Hmac, KeyInit as _, Mac as _};
use serde_json::{Value, json};
use sha2::Sha256;
use std::sync::Arc;
use subtle::ConstantTimeEq as _;

/// The longest answer to a workflow's question accepted, in characters.
pub const MAX_ANSWER_CHARS: usize = 65_536;

/// One skill of the agent card.
#[derive(Clone)]
pub(crate) enum Skill {
    Agent(&'static dyn DynAgent),
    Workflow(Arc<ServedWorkflow>),
}

/// A workflow served as a skill: the workflow, its description, and the contract its
/// answers are checked against.
pub(crate) struct ServedWorkflow {
    pub(crate) workflow: Workflow,
    pub(crate) description: String,
    pub(crate) resume: Contract,
}

impl ServedWorkflow {
    pub(crate) fn new(workflow: Workflow, description: &str) -> Result<Self, ContractError> {
        let resume = Contract::new(
            format!("answer_{}", workflow.name()),
            ContractKind::Input,
            answer_schema(),
        )?;
        Ok(Self {
            workflow,
            description: description.to_owned(),
            resume,
        })
    }
}

/// The contract of an answer to a workflow's question: `{"answer": "..."}`.
fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_ANSWER_CHARS,
            "description": "The user's answer to the question the workflow asked",
        }},
        "required": ["answer"],
        "additionalProperties": false,
    })
}

/// The output of a workflow skill: the final text and every step's output.
fn workflow_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "output": {"type": "string", "description": "The workflow's final answer"},
            "outputs": {"type": "object", "description": "Each step's checked output, by agent"},
        },
        "required": ["output", "outputs"],
    })
}

impl Skill {
    pub(crate) fn id(&self) -> &str {
        match self {
            Skill::Agent(agent) => agent.name(),
            Skill::Workflow(served) => served.workflow.name(),
        }
    }

    fn description(&self) -> &str {
        match self {
            Skill::Agent(agent) => agent.description(),
            Skill::Workflow(served) => &served.description,
        }
    }

    /// The input contract as written: the agent's, or the workflow's first agent's.
    pub(crate) fn input_schema(&self) -> Value {
        let agent = match self {
            Skill::Agent(agent) => Some(*agent),
            Skill::Workflow(served) => served.workflow.first_agent(),
        };
        match agent {
            Some(agent) => agent.input_contract().schema().clone(),
            None => {
                json!({"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]})
            }
        }
    }

    /// The output contract as written (`None`: an agent that answers in free text).
    pub(crate) fn output_schema(&self) -> Option<Value> {
        match self {
            Skill::Agent(agent) => agent.output_contract().map(|c| c.schema().clone()),
            Skill::Workflow(_) => Some(workflow_output_schema()),
        }
    }

    /// The card's skill object.
    pub(crate) fn card_entry(&self) -> Value {
        let (tag, description) = match self {
            Skill::Agent(_) => ("agent", self.description().to_owned()),
            Skill::Workflow(_) => (
                "workflow",
                format!(
                    "{} It may pause with TASK_STATE_INPUT_REQUIRED and a question: answer it with a message on the same task (text, or a data part {{\"answer\": ...}}).",
                    self.description()
                ),
            ),
        };
        json!({
            "id": self.id(),
            "name": self.id(),
            "description": description,
            "tags": [tag, "agent-contracts"],
            "inputModes": ["application/json", "text/plain"],
            "outputModes": ["application/json"],
        })
    }
}

/// The card: the skills, the JSON-RPC interface at `url`, and the contracts extension.
pub(crate) fn card(name: &str, description: &str, url: &str, skills: &[Skill]) -> Value {
    let mut contracts = serde_json::Map::new();
    for skill in skills {
        let mut entry = json!({"input_schema": skill.input_schema()});
        if let Some(output) = skill.output_schema() {
            entry["output_schema"] = output;
        }
        contracts.insert(skill.id().to_owned(), entry);
    }
    json!({
        "name": name,
        "description": description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [{
            "url": url,
            "protocolBinding": "JSONRPC",
            "protocolVersion": crate::wire::PROTOCOL_VERSION,
        }],
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [{
                "uri": crate::wire::CONTRACTS_EXTENSION,
                "description": "The input and output JSON Schemas of each skill, by skill id: send the input as one data part, name the skill in the message's metadata.skill; the output is a data part artifact.",
                "required": false,
                "params": {"skills": contracts},
            }],
        },
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": skills.iter().map(Skill::card_entry).collect::<Vec<_>>(),
    })
}

/// The ID of a workflow run's task: the run's ID, a dot, and 32 hex digits of HMAC-SHA256
/// under the server's key over the client and the run ID. Only this server (or one sharing
/// its key and store) issues it, and only to that client; another server on the same store
/// and key answers it.
pub(crate) fn seal_task_id(key: &[u8; 32], client: Client, run_id: &str) -> String {
    format!("{run_id}.{}", mac(key, client, run_id))
}

/// The run ID a task ID names, if this key issued it to `client`.
pub(crate) fn open_task_id(key: &[u8; 32], client: Client, task_id: &str) -> Option<String> {
    let (run_id, given) = task_id.rsplit_once('.')?;
    let expected = mac(key, client, run_id);
    bool::from(expected.as_bytes().ct_eq(given.as_bytes())).then(|| run_id.to_owned())
}

fn mac(key: &[u8; 32], client: Client, run_id: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    let client = match client {
        Client::Anyone => "anyone".to_owned(),
        Client::Token(index) => format!("token {index}"),
    };
    mac.update(b"agent-contracts a2a task\0");
    mac.update(client.as_bytes());
    mac.update(b"\0");
    mac.update(run_id.as_bytes());
    let digest = mac.finalize().into_bytes();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_opens_for_its_client_and_key_only() {
        let key = [7u8; 32];
        let id = seal_task_id(&key, Client::Token(1), "run-abc");
        assert_eq!(
            open_task_id(&key, Client::Token(1), &id).as_deref(),
            Some("run-abc")
        );
        assert_eq!(open_task_id(&key, Client::Token(0), &id), None);
        assert_eq!(open_task_id(&[8u8; 32], Client::Token(1), &id), None);
        assert_eq!(open_task_id(&key, Client::Token(1), "run-abc"), None);
        let forged = format!("run-abd.{}", id.rsplit_once('.').unwrap().1);
        assert_eq!(open_task_id(&key, Client::Token(1), &forged), None);
    }
}
