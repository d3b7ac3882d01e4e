//! The contract layer of agent-contracts: everything generated agent code and contract
//! checking need, and nothing that needs an async runtime, HTTP, a database or crypto.
//!
//! Users depend on `agent-contracts`, which re-exports everything here once: the few names a
//! typical service needs at its root (`agent_contracts::Contract` is [`Contract`]), the rest in
//! its modules named by concept (`agent_contracts::contract::ToolCall` is [`ToolCall`]). The
//! derives name these items only through `__private`, so that layout can change without
//! touching generated code. A crate that only checks contracts (a validator service, a fuzz
//! target) can depend on this crate alone.
//!
//! What is here, bottom up: the retry error a caller LLM reads ([`RetryError`]), [`Limits`], JSON
//! kept as written ([`RawJson`]), a tool call split into task and context ([`ToolCall`]), a
//! compiled JSON Schema ([`Contract`]), the compiled checks' trait ([`ContractChecks`]), JSON out
//! of a model's answer ([`extract_json`]), rendering ([`to_markdown`], [`filters`]), tool
//! definitions ([`ToolDefinition`]), then the agent traits ([`Agent`], [`DynAgent`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod checks;
mod contract;
mod dyn_agent;
mod extract;
mod instance;
mod integer;
mod json;
mod kwargs;
mod limits;
mod markdown;
mod media;
mod partial;
mod prefix;
mod prompt;
mod repair;
mod retry;
mod stream;
mod texts;
mod tokens;
mod tool;
mod truncate;

/// The shape check every contract passes when it is built (defined in `agent-schema`, which the
/// code generator runs too).
pub use agent_contracts_schema::shape::{SchemaShapeError, check_schema};
/// A provider's strict subset of JSON Schema (defined in `agent-schema`, where the code
/// generator decides which contracts fit which).
pub use agent_contracts_schema::strict::Dialect;

pub use agent::{Agent, AgentInput, Checked, CheckedOutput, check_call, check_output};
pub use checks::ContractChecks;
pub use contract::{Contract, ContractError, ContractKind, UserField};
pub use dyn_agent::{DynAgent, PrepareError, PreparedCall};
pub use extract::extract_json;
pub use json::{RawJson, RawObject};
pub use kwargs::{RESERVED_KEYS, ToolCall};
pub use limits::Limits;
pub use markdown::{MarkdownError, ToMarkdown, to_markdown};
pub use media::{Media, MediaData, MediaForm, MediaInput, MediaKind, MediaSpec};
pub use partial::{PartialJson, PartialOutput};
pub use prompt::{PromptError, filters};
pub use repair::{Repair, RepairKind, Repaired, Repairs, repair_answer, repair_kwargs};
pub use retry::{ErrorKind, PathSegment, RetryDetails, RetryError, Violation};
pub use stream::{Broken, PrefixCheck};
pub use tool::ToolDefinition;

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

    /// Deserializes a contract type as the compiled checks assume (structs from objects only).
    pub use crate::checks::deserialize as deserialize_strict;

    /// What agent-core's runtime shares with this layer: scanners, text cuts and the checks
    /// of a call's size, shape and prompt.
    pub use crate::extract::extract_json_text;
    pub use crate::json::Shown;
    pub use crate::json::{Exceeded, text_depth, text_exceeds, value_depth_exceeds};
    pub use crate::limits::{bounded_prompt, check_shape};
    pub use crate::markdown::{ToMarkdown, escape_text, to_markdown_line};
    pub use crate::prompt::{default_call_prompt, default_media_prompt, default_user_prompt};
    pub use crate::truncate::truncate;

    /// Media fields: their checks, the markers a template prints and where they stand.
    pub use crate::media::{
        accepts as media_accepts, markers as media_markers, place_media, show_parts,
        sniff as sniff_media,
    };

    /// The fingerprint of a generated contract type, which `types = {...}` mappings check.
    pub use crate::contract::ContractType;

    /// What the generated partial types call: a field that does not fit its type yet is
    /// absent.
    pub mod partial {
        pub use crate::partial::{lenient, lenient_integer, lenient_items};
    }

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

    /// What generated code names by this path, so that moving an item between the public
    /// modules of `agent-contracts` never changes generated code.
    pub use crate::checks::ContractChecks;
    pub use crate::contract::{Contract, ContractKind};
    pub use crate::kwargs::ToolCall;
    pub use crate::media::{MediaForm, MediaInput, MediaSpec};
    pub use crate::partial::PartialOutput;
    pub use crate::prompt::{PromptError, filters};

    /// Compiles a contract whose schema the codegen already parsed and compiled at build time,
    /// with the same validator, so failing here means the build and the runtime disagree.
    pub fn contract(name: &str, kind: ContractKind, schema: &str) -> Contract {
        match Contract::from_json_str(name, kind, schema) {
            Ok(contract) => contract,
            Err(e) => panic!("contract checked at build time failed to compile: {e}"),
        }
    }

    /// An output contract with the strict forms the codegen computed from it at build time
    /// (`strict`, [`StrictForms`](agent_contracts_schema::strict::StrictForms)'s JSON text).
    pub fn output_contract(name: &str, schema: &str, strict: &str) -> Contract {
        let contract = contract(name, ContractKind::Output, schema);
        match agent_contracts_schema::strict::StrictForms::from_json(strict) {
            Some(forms) => contract.with_strict(forms),
            None => panic!("strict forms written at build time failed to parse"),
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

    /// Room for a call's prompt, so it is written without regrowing: the template's own
    /// size hint and the call's length, close to that of the markdown of what the call holds
    /// (the plan generator's pretty-printed fixture: 3,177 bytes of JSON, 2,390 of markdown).
    pub fn prompt_capacity(call: &ToolCall, hint: usize) -> usize {
        hint.saturating_add(call.text_len())
    }

    /// Maps askama's error to the agent's prompt error.
    pub fn prompt_error(agent: &str, source: askama::Error) -> crate::prompt::PromptError {
        crate::prompt::PromptError {
            agent: agent.to_owned(),
            source: Box::new(source),
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
