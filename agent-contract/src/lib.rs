//! The contract layer of agent-contracts: everything generated agent code and contract
//! checking need, and nothing that needs an async runtime, HTTP, a database or crypto.
//!
//! Users depend on `agent-core`, which re-exports this crate's modules at the same paths
//! (`agent_core::contract::Contract` is [`contract::Contract`]); the derives name these items
//! through that re-export. A crate that only checks contracts (a validator service, a fuzz
//! target) can depend on this crate alone.
//!
//! The modules, bottom up: [`retry`] (the retry error a caller LLM reads), [`limits`], [`json`]
//! (JSON kept as written), [`kwargs`] (a tool call split into task and context), [`contract`]
//! (a compiled JSON Schema), [`checks`] (what compiled checks call), [`extract`] (JSON out of a
//! model's answer), [`markdown`] and [`prompt`] (rendering), [`tool`] (tool definitions), then
//! [`agent`] and [`dyn_agent`] (the agent traits).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod checks;
pub mod contract;
pub mod dyn_agent;
pub mod extract;
mod integer;
pub mod json;
pub mod kwargs;
pub mod limits;
pub mod markdown;
pub mod prompt;
pub mod retry;
mod texts;
pub mod tool;

/// The shape check every contract passes when it is built (defined in `agent-schema`, which the
/// code generator runs too).
pub use agent_schema::check as schema_check;

pub use agent::{Agent, AgentInput, CheckedOutput};
pub use dyn_agent::DynAgent;
pub use limits::Limits;
pub use retry::RetryError;

/// Items generated code reaches; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use askama;
    pub use serde;
    pub use serde_json;
    pub use std::sync::OnceLock;

    /// The types of a contract's untyped parts: JSON kept as the text it arrived in.
    pub use crate::json::{RawJson, RawObject};

    /// What the generated contract checks call.
    pub use crate::checks::support as checks;

    /// Integer fields that accept integral floats (`5.0`), as JSON Schema does.
    pub mod integer {
        pub use crate::integer::{Lenient, deserialize};
    }

    /// What typify's generated pattern checks call, backed by the linear-time `regex` crate
    /// instead of the backtracking `regress`: `^(a+)+$` on a long input stays linear.
    pub mod regress {
        /// A compiled pattern.
        #[derive(Debug, Clone)]
        pub struct Regex(regex::Regex);

        impl Regex {
            /// Compiles `pattern`; the codegen already refused patterns this engine rejects.
            pub fn new(pattern: &str) -> Result<Self, regex::Error> {
                regex::Regex::new(pattern).map(Self)
            }

            /// The first match in `text`, if any.
            pub fn find<'t>(&self, text: &'t str) -> Option<regex::Match<'t>> {
                self.0.find(text)
            }
        }
    }

    use crate::contract::{Contract, ContractKind};
    use crate::kwargs::ToolCall;

    /// Compiles a contract whose schema the codegen already parsed and compiled at build time,
    /// with the same validator, so failing here means the build and the runtime disagree.
    pub fn contract(name: &str, kind: ContractKind, schema: &str) -> Contract {
        match Contract::from_json_str(name, kind, schema) {
            Ok(contract) => contract,
            Err(e) => panic!("contract checked at build time failed to compile: {e}"),
        }
    }

    /// The contract of a code-first input: the schema schemars derives for `T`.
    pub fn schemars_contract<T: schemars::JsonSchema>(name: &str) -> Contract {
        let schema = schemars::schema_for!(T).to_value();
        match Contract::new(name, ContractKind::Input, schema) {
            Ok(contract) => contract,
            Err(e) => panic!("schemars produced a schema the validator rejects: {e}"),
        }
    }

    /// The default user prompt for a typed call.
    pub fn default_prompt(call: &ToolCall) -> String {
        crate::prompt::default_call_prompt(call)
    }

    /// The call's task as a template's `task`: no line of it can open a block.
    pub fn prompt_task(call: &ToolCall) -> String {
        crate::markdown::escape_text(&call.task)
    }

    /// Maps askama's error to the agent's prompt error.
    pub fn prompt_error(agent: &str, source: askama::Error) -> crate::prompt::PromptError {
        crate::prompt::PromptError {
            agent: agent.to_owned(),
            source,
        }
    }

    /// The typed input of an agent whose derive failed: the derive still implements `Agent`
    /// with it, so that code using the agent reports no errors beyond the derive's own.
    /// Uninhabited, so nothing can call the impl.
    #[derive(Debug)]
    pub enum Unusable {}

    impl<'de> serde::Deserialize<'de> for Unusable {
        fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
            Err(serde::de::Error::custom("the agent's derive failed"))
        }
    }

    impl crate::AgentInput for Unusable {
        fn input_contract() -> &'static Contract {
            unreachable!("an agent whose derive failed does not compile")
        }
    }
}
