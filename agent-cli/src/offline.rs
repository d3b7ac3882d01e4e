//! The model `mcp` and `a2a` serve with when no `--model` is given: offline, each agent
//! answers its canned answer, the first entry of its output contract's `examples` (JSON
//! Schema's own place for sample values), so a folder can be served, called and checked end
//! to end with no provider. Each canned answer is checked against its contract when the
//! folder is read: a server never starts with an answer its own check would refuse.

use crate::folder::UserAgent;
use agent_contracts::model::{BoxFuture, ChatRequest, ChatResponse, ModelError};
use agent_contracts::{ChatModel, DynAgent, Limits, Message};
use std::collections::{HashMap, HashSet};

/// Canned answers by agent name.
#[derive(Debug, Default)]
pub struct Canned {
    answers: HashMap<&'static str, String>,
    /// The agents without an output contract: any text is their answer.
    free: HashSet<&'static str>,
}

impl Canned {
    /// The canned answer of each agent of `agents` that has one; an `examples` entry that
    /// breaks its own output contract is an error naming the agent.
    pub fn of(agents: &[UserAgent]) -> Result<Self, String> {
        let mut answers = HashMap::new();
        let mut free = HashSet::new();
        for agent in agents {
            let Some(contract) = agent.output_contract() else {
                free.insert(agent.name());
                continue;
            };
            let Some(example) = contract
                .schema()
                .get("examples")
                .and_then(|examples| examples.as_array()?.first())
            else {
                continue;
            };
            if let Err(error) = contract.check(example, &Limits::default()) {
                return Err(format!(
                    "`{}`: the first `examples` entry of its output contract, its canned answer without --model, breaks the contract: {error}",
                    agent.name()
                ));
            }
            answers.insert(agent.name(), example.to_string());
        }
        Ok(Self { answers, free })
    }

    /// How many agents have a canned answer.
    pub fn len(&self) -> usize {
        self.answers.len()
    }
}

impl ChatModel for Canned {
    /// The agent's canned answer; an agent without an output contract answers a line saying
    /// it is offline; one whose contract has no `examples` fails the call, saying what to add.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let agent = request.agent.as_str();
        let answer = match self.answers.get(agent) {
            Some(answer) => Ok(answer.clone()),
            None if self.free.contains(agent) => Ok(format!(
                "`{agent}` is served offline (no --model): this is no model's answer"
            )),
            None => Err(ModelError::Other(format!(
                "no canned answer for `{agent}` (served offline, without --model): give its output.schema.json an `examples` entry, or serve with --model"
            ))),
        };
        Box::pin(async move { answer.map(|text| Message::assistant(text).into()) })
    }
}
