#![doc = include_str!("../../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod contract;
pub mod error;
pub mod kwargs;
pub mod limits;
pub mod markdown;
pub mod prompt;

pub use agent::{Agent, AgentInput, Checked, check_call, check_output};
pub use contract::{Contract, ContractError, ContractKind};
pub use error::{ErrorKind, PathSegment, RetryError, Violation};
pub use kwargs::{RESERVED_KEYS, ToolCall};
pub use limits::Limits;
pub use prompt::{PromptError, default_user_prompt};

/// Items generated code reaches; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use askama;
    pub use serde;
    pub use serde_json;
    pub use std::sync::OnceLock;
}
