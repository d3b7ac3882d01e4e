//! What a sub-agent call returns: its checked output and the call it came from, so it can be
//! traced, stored upstream, or redone.

use crate::ids::ContextId;
use crate::rerun::PreviousAttempt;
use agent_contracts_contract::{Agent, CheckedOutput, Repair};

/// What a sub-agent call returned: its validated output and the call it came from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AgentOutput {
    /// The sub-agent.
    pub agent: String,
    /// The call.
    pub context_id: ContextId,
    /// The output that passed the output contract, as JSON and typed.
    pub output: CheckedOutput,
    /// The attempt that gave it, from 1 (output retries and reruns count up).
    pub attempt: u32,
    /// The lossless repairs the caller's kwargs needed to pass the input contract (empty for
    /// a call taken as written): a parent model reads them beside the output, to learn the
    /// form the contract wants. The answer's own are [`CheckedOutput::repairs`].
    pub repairs: Vec<Repair>,
}

impl AgentOutput {
    /// The typed output, if this is a call of `A`.
    pub fn typed<A: Agent>(&self) -> Option<&A::Output> {
        (self.agent == A::NAME)
            .then(|| self.output.typed::<A>())
            .flatten()
    }
}

/// The output as the previous attempt of a redo; give the reason it was rejected with
/// [`PreviousAttempt::with_error`].
impl From<&AgentOutput> for PreviousAttempt {
    fn from(output: &AgentOutput) -> Self {
        let written = output.output.as_written().to_json_string();
        PreviousAttempt::new(output.context_id.clone(), written, output.attempt)
    }
}
