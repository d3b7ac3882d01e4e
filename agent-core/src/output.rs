//! What a sub-agent call returns: its checked output and the call it came from, so it can be
//! traced, stored upstream, or redone.

use crate::ids::ContextId;
use crate::rerun::PreviousAttempt;
use agent_contract::CheckedOutput;
use serde_json::Value;

/// What a sub-agent call returned: its validated output and the call it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOutput {
    /// The sub-agent.
    pub agent: String,
    /// The call.
    pub context_id: ContextId,
    /// The output that passed the output contract, as JSON and typed.
    pub output: CheckedOutput,
    /// The attempt that gave it, from 1 (output retries and reruns count up).
    pub attempt: u32,
}

impl AgentOutput {
    /// The output as JSON.
    pub fn value(&self) -> &Value {
        self.output.value()
    }

    /// The typed output, if this is a call of `A`.
    pub fn typed<A: crate::Agent>(&self) -> Option<&A::Output> {
        (self.agent == A::NAME)
            .then(|| self.output.typed::<A>())
            .flatten()
    }

    /// This output as the previous attempt of a redo, rejected for `reason` (if given).
    pub fn to_previous_attempt(&self, reason: Option<&str>) -> PreviousAttempt {
        let output = self.output.as_written().to_json_string();
        let previous = PreviousAttempt::new(self.context_id.clone(), output, self.attempt);
        match reason {
            Some(reason) => previous.with_error(reason),
            None => previous,
        }
    }
}
