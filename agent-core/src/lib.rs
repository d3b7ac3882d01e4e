#![doc = include_str!("../../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;
pub mod config;
pub mod contributor;
pub mod error;
pub mod ids;
pub mod model;
pub mod rerun;
pub mod runtime;
pub mod store;
mod texts;
pub mod tool;
pub mod transcript;
pub mod upstream;
pub mod workflow;

// The contract layer, at the paths users and generated code name (`agent_core::contract::..`).
pub use agent_contract::{
    agent, checks, contract, dyn_agent, extract, json, kwargs, limits, markdown, prompt, retry,
    schema_check,
};

// The front door: what a user needs to define and run agents. Everything else is reached
// through its module (`agent_core::contract::Contract`, `agent_core::ids::ContextId`, ...).
pub use agent_contract::{Agent, AgentInput, CheckedOutput, DynAgent, Limits, RetryError};
#[cfg(feature = "derive")]
pub use agent_macros::{Agent, AgentInput, PromptContributor, Workflow};
pub use config::Config;
pub use error::Error;
pub use model::{ChatModel, Message, ScriptedModel};
pub use runtime::Runtime;
pub use tool::Tool;
pub use workflow::Workflow;

/// Items generated code reaches; not part of the public API.
#[doc(hidden)]
pub use agent_contract::__private;
