//! [`Error`], the one error of a run. It sits at the top of the crate: its variants wrap the
//! errors of the layers below (model, prompt, context IDs, contributors, store), and nothing
//! below imports it.

use std::fmt;

use agent_contracts_contract::RetryError;

/// Which check an agent kept failing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Side {
    /// A caller's calls broke the agent's input contract.
    Input {
        /// The agent that kept calling.
        caller: String,
    },
    /// The agent's answers broke its output contract.
    Output,
    /// A handoff validator kept refusing the agent's output for its consumer.
    Handoff {
        /// The agent that was to receive the output.
        consumer: String,
    },
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input { caller } => write!(f, "input contract (called by `{caller}`)"),
            Self::Output => f.write_str("output contract"),
            Self::Handoff { consumer } => write!(f, "handoff to `{consumer}`"),
        }
    }
}

/// Why a run (of the runtime or of a workflow) stopped.
///
/// [`Error::Retry`] carries the retry error meant for the caller, as a tool result would; every
/// other variant is the run's own failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The call broke the agent's input contract; the model was not asked. `error` is what a
    /// calling LLM would get as the tool result.
    #[error("`{agent}` cannot run this call: {error}")]
    Retry {
        /// The agent called.
        agent: String,
        /// The rejected call, when it got an ID.
        context_id: Option<crate::ids::ContextId>,
        /// The retry error.
        error: RetryError,
    },
    /// An agent kept failing one check past the retry bound.
    #[error(
        "`{agent}` failed its {side} {tries}; last error: {last}",
        tries = Tries(*attempts)
    )]
    RetriesExhausted {
        /// The agent whose input, output or handoff failed.
        agent: String,
        /// Which check.
        side: Side,
        /// Failed attempts in a row.
        attempts: u32,
        /// The last retry error.
        last: RetryError,
    },
    /// A tool-calling loop (or a workflow agent calling tools) took too many model turns.
    #[error("`{agent}` did not finish within {turns} model turns")]
    TooManyTurns {
        /// The agent.
        agent: String,
        /// The bound.
        turns: u32,
    },
    /// Routing ran more agents than allowed.
    #[error("workflow `{workflow}` stopped after {hops} hops, the limit; last agents: {route}")]
    TooManyHops {
        /// The workflow.
        workflow: String,
        /// The limit.
        hops: u32,
        /// The agents run last, in order.
        route: String,
    },
    /// A workflow names an agent it does not have.
    #[error("workflow `{workflow}`: {place} names unknown agent `{agent}`; known agents: {known}")]
    UnknownAgent {
        /// The workflow.
        workflow: String,
        /// Where it was named.
        place: String,
        /// The unknown name.
        agent: String,
        /// The agents there are.
        known: String,
    },
    /// A resume state that cannot be used: malformed, truncated, inconsistent, or from another
    /// workflow.
    #[error("cannot resume workflow `{workflow}`: {reason}")]
    BadState {
        /// The workflow.
        workflow: String,
        /// What is wrong.
        reason: String,
    },
    /// A stored run was recorded under another version of one of its contracts, and the
    /// current version may refuse what the earlier one allowed (or the check cannot tell, or
    /// the earlier version is not stored): the run is left as it was stored.
    #[error(
        "run `{run_id}` cannot go on under the current `{contract}` contract: at `{field}`, {reason}"
    )]
    ContractChanged {
        /// The run.
        run_id: String,
        /// The contract: `<agent>.input` or `<agent>.output`.
        contract: String,
        /// Where in it (`allocations[].amount`; `$` for the whole value).
        field: String,
        /// The keyword of the current contract that decided it (`minimum`, `required`, ...).
        keyword: String,
        /// What may break.
        reason: String,
    },
    /// A durable run was claimed more often than its runner's attempt limit at one step
    /// ([`Runner::with_max_attempts`](crate::Runner::with_max_attempts)): the worker of each
    /// earlier attempt stopped (crashed, was killed) before the step was saved. The run is
    /// failed, with this message as its [`RunRecord::error`](crate::store::RunRecord::error),
    /// and no worker claims it again.
    #[error(
        "run `{run_id}` failed: step `{agent}` was attempted {attempts} times and its worker stopped each time"
    )]
    AttemptsExhausted {
        /// The run.
        run_id: String,
        /// The agent of the step.
        agent: String,
        /// How many attempts were made.
        attempts: u64,
    },
    /// A person rejected an agent's output at an approval step whose rejection ends the run
    /// ([`OnReject::End`](crate::workflow::OnReject::End)): the run is over, failed with
    /// this message.
    #[error("workflow `{workflow}` ended: a person rejected the output of `{agent}`: {reason}")]
    Rejected {
        /// The workflow.
        workflow: String,
        /// The agent whose output was rejected.
        agent: String,
        /// The person's reason.
        reason: String,
    },
    /// An edit given at an approval step breaks the agent's output contract: the run stays
    /// paused, and `error` names the field.
    #[error("the edit of `{agent}`'s output breaks its output contract: {error}")]
    EditRefused {
        /// The agent whose output was edited.
        agent: String,
        /// Why, field by field (`path`, `missing_fields`, `errors`).
        error: RetryError,
    },
    /// A tool of a [`Runtime::run_loop`](crate::Runtime::run_loop) waits on a person's
    /// answer (a remote agent's question, say). A loop keeps no state to resume from, so it
    /// stops here rather than let its model answer for the person; a workflow step with the
    /// tool pauses instead, and goes on with the answer.
    #[error(
        "`{tool}` (called by `{agent}`) waits on a person's answer, and a tool-calling loop cannot pause: {question}"
    )]
    ToolPaused {
        /// The agent whose loop called the tool.
        agent: String,
        /// The tool.
        tool: String,
        /// The tool's question for a person.
        question: String,
    },
    /// The run's cancellation token was cancelled; the transcript so far is kept.
    #[error("the run was cancelled while `{agent}` was running")]
    Cancelled {
        /// The agent that was running.
        agent: String,
    },
    /// The run used more tokens than its budget.
    #[error("the run used {used} tokens, past its budget of {budget}, when `{agent}` was answered")]
    TokenBudget {
        /// The agent whose model call passed the budget.
        agent: String,
        /// Tokens used so far.
        used: u64,
        /// The budget.
        budget: u64,
    },
    /// The run spent more than its cost budget.
    #[error(
        "the run spent ${spent:.6}, past its budget of ${budget:.6}, when `{agent}` was answered"
    )]
    CostBudget {
        /// The agent whose model call passed the budget.
        agent: String,
        /// US dollars spent so far.
        spent: f64,
        /// The budget, in US dollars.
        budget: f64,
    },
    /// A run with a cost budget called a model its price table does not name.
    #[error("`{agent}` was answered by {}, which the price table does not name; the cost budget cannot be kept", model.as_deref().map_or("an unnamed model".to_owned(), |m| format!("`{m}`")))]
    Unpriced {
        /// The agent that asked.
        agent: String,
        /// The model that answered, as the response named it.
        model: Option<String>,
    },
    /// The model failed.
    #[error(transparent)]
    Model(#[from] crate::chat::ModelError),
    /// A prompt template failed on valid input.
    #[error(transparent)]
    Prompt(#[from] agent_contracts_contract::PromptError),
    /// A context ID could not be issued (an agent name that cannot be an ID segment).
    #[error(transparent)]
    ContextId(#[from] crate::ids::ContextIdError),
    /// A prompt contributor failed while assembling a system prompt.
    #[error(transparent)]
    Contributor(#[from] crate::contributor::AssemblyError),
    /// The checkpoint store refused or failed: a conflict, a run claimed by another worker,
    /// an unknown or corrupt stored run.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl Error {
    /// The retry error a calling LLM should get, for [`Error::Retry`].
    pub fn retry_error(&self) -> Option<&RetryError> {
        match self {
            Self::Retry { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// How many times a check failed, as the error text says it: `once (no retry)`,
/// `2 times (1 attempt and 1 retry)`, `3 times (1 attempt and 2 retries)`.
struct Tries(u32);

impl fmt::Display for Tries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 | 1 => f.write_str("once (no retry)"),
            2 => f.write_str("2 times (1 attempt and 1 retry)"),
            n => write!(f, "{n} times (1 attempt and {} retries)", n - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exhausted(attempts: u32) -> String {
        Error::RetriesExhausted {
            agent: "a".into(),
            side: Side::Output,
            attempts,
            last: RetryError::call(agent_contracts_contract::ErrorKind::NotJson, "broken", ""),
        }
        .to_string()
    }

    #[test]
    fn the_count_of_tries_reads_as_english() {
        let expect = [
            (1, "failed its output contract once (no retry); last error"),
            (
                2,
                "failed its output contract 2 times (1 attempt and 1 retry); last error",
            ),
            (
                3,
                "failed its output contract 3 times (1 attempt and 2 retries); last error",
            ),
        ];
        for (attempts, text) in expect {
            assert!(
                exhausted(attempts).contains(text),
                "{}",
                exhausted(attempts)
            );
        }
    }
}
