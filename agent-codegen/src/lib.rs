//! Turns JSON Schema contracts into typed Rust, for `agent-macros` and build
//! scripts.
//!
//! The schema -> types core is [`generate_types`]: it rejects constructs
//! typify cannot type faithfully (see `reject.rs`), runs typify, and reroutes
//! the output's serde/serde_json/regress paths through the runtime crate.

pub mod agent;
mod buildscript;
pub mod contributor;
mod ctxt;
pub mod derive;
mod error;
mod fixup;
mod locate;
mod naming;
mod prepare;
mod reject;
mod rewrite;
mod types;
mod walk;

pub use buildscript::{AgentCheck, BuildError, Builder};
pub use error::SchemaError;
pub use reject::{ContractKind, RESERVED_INPUT_KEYS};
pub use types::{
    GeneratedTypes, Property, TypeOptions, generate_types, generate_types_with, pretty,
};

// Further stages (rendering, tool-call glue, ...) go below as their own
// modules, each re-exported here.
