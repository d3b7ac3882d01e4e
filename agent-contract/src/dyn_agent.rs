//! [`DynAgent`], the type-erased twin of [`Agent`]: what registries, servers and the runtime's
//! sub-agent calls hold, with the same checks as the typed path.

use crate::agent::{Agent, AgentInput, CheckedOutput, check_call, check_output};
use crate::contract::Contract;
use crate::kwargs::ToolCall;
use crate::limits::Limits;
use crate::media::Media;
use crate::prompt::PromptError;
use crate::retry::RetryError;
use crate::tool::ToolDefinition;
use serde_json::Value;

/// A call that passed the input contract, with its user prompt rendered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PreparedCall {
    /// The call with its merged context.
    pub call: ToolCall,
    /// The rendered user prompt's text.
    pub user_prompt: String,
    /// The media of the call's media fields, each placed in
    /// [`user_prompt`](Self::user_prompt) where its template put it ([`Media::at`]), in the
    /// contract's order.
    pub media: Vec<Media>,
}

impl PreparedCall {
    /// A call and its prompt, without media.
    pub fn new(call: ToolCall, user_prompt: String) -> Self {
        Self {
            call,
            user_prompt,
            media: Vec::new(),
        }
    }

    /// This call with the media placed in its prompt.
    pub fn with_media(mut self, media: Vec<Media>) -> Self {
        self.media = media;
        self
    }
}

/// The prompt of a checked call: rendered, its media markers turned into placed media, and
/// bounded by `limits`.
fn prompt_of<A: Agent>(
    call: ToolCall,
    input: &A::Input,
    limits: &Limits,
) -> Result<PreparedCall, PrepareError> {
    let user_prompt = A::render_user_prompt(&call, input)?;
    let (user_prompt, media) = match A::Input::MEDIA.is_empty() {
        true => (user_prompt, Vec::new()),
        false => {
            let fields: Vec<_> = input.media_inputs().into_iter().flatten().collect();
            crate::media::place_media(&user_prompt, &fields)
        }
    };
    let user_prompt = crate::limits::bounded_prompt(user_prompt, limits)?;
    Ok(PreparedCall::new(call, user_prompt).with_media(media))
}

/// Why a call could not be prepared: the caller's fault (retry) or the template's.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The call broke the contract: send this back to the caller.
    #[error(transparent)]
    Retry(#[from] RetryError),
    /// The prompt template failed on valid input.
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// The type-erased twin of [`Agent`]: the same agent behind a trait object, so runtimes,
/// workflows, registries, servers and the CLI can hold different agents side by side. Every
/// [`Agent`] is one.
///
/// Use [`Agent`] and `agent_contracts_runtime::Runtime::call` when the agent's type is known:
/// they hand out the typed input and output. `DynAgent` hands out the same checks with the
/// types erased: [`DynAgent::check_output`] returns a [`CheckedOutput`] whose typed form a
/// caller who knows the agent gets back with [`CheckedOutput::typed`].
pub trait DynAgent: Send + Sync {
    /// The agent's name.
    fn name(&self) -> &'static str;
    /// The agent's description.
    fn description(&self) -> &'static str;
    /// The input contract.
    fn input_contract(&self) -> &'static Contract;
    /// The output contract, if any.
    fn output_contract(&self) -> Option<&'static Contract>;
    /// kwargs text -> merged, validated, typed -> rendered user prompt.
    fn prepare(&self, kwargs: &str, limits: &Limits) -> Result<PreparedCall, PrepareError>;
    /// The input path without rendering: parse, merge, validate, type.
    fn validate(&self, kwargs: &str, limits: &Limits) -> Result<ToolCall, RetryError>;
    /// Like [`DynAgent::prepare`], for a call already split into a [`ToolCall`], building any
    /// retry error within `limits`.
    fn prepare_call(&self, call: ToolCall, limits: &Limits) -> Result<PreparedCall, PrepareError>;
    /// Checks an answer against the output contract and the typed output, building any retry
    /// error within `limits`; returns both.
    fn check_output(&self, answer: &Value, limits: &Limits) -> Result<CheckedOutput, RetryError>;
    /// The tool definition a parent needs.
    fn tool_definition(&self) -> ToolDefinition {
        ToolDefinition::for_contract(self.name(), self.description(), self.input_contract())
    }
}

impl<A: Agent + Send + Sync> DynAgent for A {
    fn name(&self) -> &'static str {
        A::NAME
    }
    fn description(&self) -> &'static str {
        A::DESCRIPTION
    }
    fn input_contract(&self) -> &'static Contract {
        A::Input::input_contract()
    }
    fn output_contract(&self) -> Option<&'static Contract> {
        A::output_contract()
    }
    fn prepare(&self, kwargs: &str, limits: &Limits) -> Result<PreparedCall, PrepareError> {
        let checked = check_call::<A>(kwargs, limits)?;
        prompt_of::<A>(checked.call, &checked.input, limits)
    }
    fn validate(&self, kwargs: &str, limits: &Limits) -> Result<ToolCall, RetryError> {
        check_call::<A>(kwargs, limits).map(|checked| checked.call)
    }
    fn prepare_call(&self, call: ToolCall, limits: &Limits) -> Result<PreparedCall, PrepareError> {
        let input = A::Input::from_call(&call, limits)?;
        prompt_of::<A>(call, &input, limits)
    }
    fn check_output(&self, answer: &Value, limits: &Limits) -> Result<CheckedOutput, RetryError> {
        let typed = check_output::<A>(answer, limits)?;
        Ok(CheckedOutput::new(answer.clone(), typed))
    }
}
