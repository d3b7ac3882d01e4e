//! Fields only a person can give (`"x-source": "user"` on an input contract's property): a
//! call that omits one is asked of a person ([`UserAsk`]) instead of sent back to its
//! caller's model as a retry error, and the person's answer is merged into the call and
//! checked with it against the whole input contract.
//!
//! The contract knows its user fields from when it was built
//! ([`Contract::user_fields`](agent_contracts_contract::Contract::user_fields)); nothing here
//! compiles a schema.

use crate::texts;
use agent_contracts_contract::{DynAgent, PathSegment, RetryError, UserField};
use serde_json::{Map, Value};

/// A call of an agent that lacks a field only a person can give: the field asked (the first
/// one the call omitted, in the schema's order) and the question for the person.
///
/// Where a call is asked: a sub-agent called as a tool pauses the parent's turn with the
/// question ([`Runtime::run_loop_pausable`](crate::Runtime::run_loop_pausable), a workflow
/// step); an agent served over MCP asks the client, over A2A the task waits in
/// `input-required`. A direct [`Runtime::call`](crate::Runtime::call) keeps its
/// [`Error::Retry`](crate::Error::Retry): the caller is the program, which holds the whole
/// input; [`UserAsk::of`] on that error gives it the question if it wants to ask.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UserAsk {
    /// The agent called.
    pub agent: String,
    /// The field asked.
    pub field: UserField,
    /// The question for a person (`runtime/user_field.md`): the field, its description, and
    /// why the last answer was refused, when it was.
    pub question: String,
}

impl UserAsk {
    /// The question for a call of `agent` refused with `error`, when all that is wrong with
    /// the call is that it omitted fields only a person can give
    /// ([`Contract::omitted_user_fields`](agent_contracts_contract::Contract::omitted_user_fields));
    /// `None` for any other fault, which goes back to the caller as today.
    pub fn of(agent: &dyn DynAgent, error: &RetryError) -> Option<Self> {
        let contract = agent.input_contract();
        let field = contract.omitted_user_fields(error)?.into_iter().next()?;
        Some(Self::new(agent.name(), field.clone(), None))
    }

    /// The question asked again for `field` of `agent`, whose answer made the call fail
    /// with `error`: when every violation is in that field (the answer broke the field's
    /// schema), the question says why; `None` when the error is about anything else.
    pub fn refused(agent: &dyn DynAgent, field: &str, error: &RetryError) -> Option<Self> {
        let field = agent.input_contract().user_field(field)?;
        let in_field = |path: &[PathSegment]| matches!(path.first(), Some(PathSegment::Key(key)) if *key == field.name);
        let only_field = error.missing_fields.is_empty()
            && !error.errors.is_empty()
            && error.errors.iter().all(|v| in_field(&v.path));
        only_field.then(|| {
            let reason = error
                .errors
                .first()
                .map_or(error.validation_message.as_str(), |v| v.message.as_str());
            Self::new(agent.name(), field.clone(), Some(reason))
        })
    }

    /// The question for the user field `field` of `agent`; `None` when the agent's input
    /// contract has no such field (a stored pause read back may name anything).
    pub fn field_of(agent: &dyn DynAgent, field: &str) -> Option<Self> {
        let field = agent.input_contract().user_field(field)?;
        Some(Self::new(agent.name(), field.clone(), None))
    }

    fn new(agent: &str, field: UserField, refusal: Option<&str>) -> Self {
        let question = texts::user_field(agent, &field.name, field.description.as_deref(), refusal);
        Self {
            agent: agent.to_owned(),
            field,
            question,
        }
    }

    /// A person's answer typed as text, as the field's value: the text itself for a field
    /// whose schema's `type` is `string`, else the text read as JSON (`3`, `true`, `["a"]`),
    /// or the text itself when it is not JSON (the contract then says what is wrong).
    pub fn value_of_text(&self, answer: &str) -> Value {
        if self.field.schema.get("type").and_then(Value::as_str) == Some("string") {
            return Value::String(answer.to_owned());
        }
        serde_json::from_str(answer.trim()).unwrap_or_else(|_| Value::String(answer.to_owned()))
    }

    /// The call's kwargs text with the field set to `value`: the call to check and run.
    /// `None` when `kwargs` is not a JSON object (a call that omitted only user fields is
    /// one; a stored state may have been changed).
    pub fn with_answer(&self, kwargs: &str, value: Value) -> Option<String> {
        let mut object: Map<String, Value> = serde_json::from_str(kwargs).ok()?;
        object.insert(self.field.name.clone(), value);
        serde_json::to_string(&object).ok()
    }
}
