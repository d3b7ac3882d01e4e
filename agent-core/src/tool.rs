//! What a parent LLM needs to call an agent: the tool definition (OpenAI and Anthropic
//! formats), and the type-erased agent that executes the call.

use crate::agent::{Agent, AgentInput, CheckedOutput, check_call, check_output_within};
use crate::contract::Contract;
use crate::error::RetryError;
use crate::kwargs::ToolCall;
use crate::limits::Limits;
use crate::prompt::PromptError;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A tool a model can call: a name, a description and a JSON Schema for the arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// `run_<agent name>`.
    pub name: String,
    /// The agent's description, then the list of required inputs.
    pub description: String,
    /// `task` (required), `run_identifier`, and the contract's properties at the top level,
    /// because parents pass them flat; `$defs` carried along so `$ref`s still resolve.
    pub parameters: Value,
}

/// The wire format a provider expects for tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFormat {
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    OpenAi,
    /// `{"name", "description", "input_schema"}`.
    Anthropic,
}

impl ToolDefinition {
    /// Builds the definition of the agent `name` from its input contract.
    pub fn for_contract(name: &str, description: &str, contract: &Contract) -> Self {
        let schema = contract.schema();
        let required = contract.required_fields();
        let description = crate::texts::tool_description(description.trim_end(), required);
        let mut properties = Map::new();
        properties.insert(
            "task".into(),
            json!({"type": "string", "description": "What the agent should do"}),
        );
        properties.insert(
            "run_identifier".into(),
            json!({"type": "string", "description": "Identifier of the run, for tracing"}),
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

    /// The definition in a provider's format.
    pub fn to_format(&self, format: ToolFormat) -> Value {
        match format {
            ToolFormat::OpenAi => json!({
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.parameters,
                }
            }),
            ToolFormat::Anthropic => json!({
                "name": self.name,
                "description": self.description,
                "input_schema": self.parameters,
            }),
        }
    }
}

/// A call that passed the input contract, with its user prompt rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCall {
    /// The call with its merged context.
    pub call: ToolCall,
    /// The rendered user prompt.
    pub user_prompt: String,
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
/// Use [`Agent`] and [`Runtime::call`](crate::Runtime::call) when the agent's type is known:
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
    /// Like [`DynAgent::prepare`], for a call already split into a [`ToolCall`].
    fn prepare_call(&self, call: ToolCall) -> Result<PreparedCall, PrepareError> {
        self.prepare_call_within(call, &Limits::default())
    }
    /// [`DynAgent::prepare_call`], building any retry error within `limits`.
    fn prepare_call_within(
        &self,
        call: ToolCall,
        limits: &Limits,
    ) -> Result<PreparedCall, PrepareError>;
    /// Checks an answer against the output contract and the typed output; returns both.
    fn check_output(&self, answer: &Value) -> Result<CheckedOutput, RetryError> {
        self.check_output_within(answer, &Limits::default())
    }
    /// [`DynAgent::check_output`], building any retry error within `limits`.
    fn check_output_within(
        &self,
        answer: &Value,
        limits: &Limits,
    ) -> Result<CheckedOutput, RetryError>;
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
        let user_prompt = A::render_user_prompt(&checked.call, &checked.input)?;
        let user_prompt = crate::limits::bounded_prompt(user_prompt, limits)?;
        Ok(PreparedCall {
            call: checked.call,
            user_prompt,
        })
    }
    fn validate(&self, kwargs: &str, limits: &Limits) -> Result<ToolCall, RetryError> {
        check_call::<A>(kwargs, limits).map(|checked| checked.call)
    }
    fn prepare_call_within(
        &self,
        call: ToolCall,
        limits: &Limits,
    ) -> Result<PreparedCall, PrepareError> {
        let input = A::Input::from_call_within(&call, limits)?;
        let user_prompt = A::render_user_prompt(&call, &input)?;
        let user_prompt = crate::limits::bounded_prompt(user_prompt, limits)?;
        Ok(PreparedCall { call, user_prompt })
    }
    fn check_output_within(
        &self,
        answer: &Value,
        limits: &Limits,
    ) -> Result<CheckedOutput, RetryError> {
        let typed = check_output_within::<A>(answer, limits)?;
        Ok(CheckedOutput::new(answer.clone(), typed))
    }
}

/// A plain tool an agent can call (a database query, an HTTP API, an MCP server's tool): the
/// definition the model sees and an async call on the model's arguments.
///
/// ```
/// use agent_core::model::BoxFuture;
/// use agent_core::Tool;
/// use agent_core::tool::ToolDefinition;
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
    /// Runs the tool on the model's arguments (untrusted JSON text); the result is JSON the
    /// model reads. Dropping the future stops the call.
    fn call<'a>(&'a self, arguments: &'a str) -> crate::model::BoxFuture<'a, Value>;
}
