//! Turns JSON Schema contracts into typed Rust, for `agent-macros` and build
//! scripts.
//!
//! The public surface is what those two need: the derives' entry points ([`derive`](mod@derive),
//! [`contributor`], [`workflow`]) and [`Builder`] for build scripts.
//!
//! The code is laid out by stage, one folder each, in the order a contract goes through them;
//! each stage imports only the stages before it (its `mod.rs` says which):
//! 1. `schema/`: the contract as JSON: parsed, its sibling `$ref`s bundled, refused where the
//!    later stages could not type it faithfully, problems located at `path:line:col`;
//! 2. `typify/`: the copy of the schema typify sees, typify run on it, and its output fixed up
//!    (untyped parts kept as raw JSON, paths through the runtime crate, lenient integers,
//!    warning-free names);
//! 3. `emit/`: the pipeline from schema text to finished types with their checks as code, and
//!    the code around them: an agent's contract module and `Agent` impl, its prompt checked;
//! 4. `evals.rs`: an eval dataset checked against its agent's contracts, problems at the
//!    dataset's `line:col`;
//! 5. [`flow`]: a declared workflow's data flow between agents' contracts;
//! 6. the front ends: `derive/` (the proc-macro derives and `eval_tests!`) and `build/`
//!    ([`Builder`]).
//!
//! Below every stage, leaf modules that import nothing of the crate: `error.rs` (the located
//! error), `naming.rs` (case conversion, typify's names) and `suggest.rs` (did-you-mean).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

// `proc_macro::is_available` tells whether the code runs inside a proc macro.
extern crate proc_macro;

mod build;
pub mod derive;
mod emit;
mod error;
mod evals;
pub mod flow;
mod naming;
mod schema;
mod suggest;
mod typify;

/// `#[derive(PromptContributor)]`: a struct whose system-prompt part is an askama template.
pub mod contributor {
    pub use crate::derive::contributor::derive_prompt_contributor;
}

/// `eval_tests!`: one `#[test]` per case of an eval dataset.
pub mod eval_tests {
    pub use crate::derive::eval_tests::eval_tests;
}

/// `#[derive(Workflow)]`: a workflow declared at compile time, its data flow checked when the
/// crate compiles.
pub mod workflow {
    pub use crate::derive::workflow::derive_workflow;
}

/// The verdicts of [`AgentCheck::strict`]: the providers' strict subsets and the rewrite into
/// them (defined in `agent-schema`, which the runtime shares).
pub use agent_contracts_schema::strict::{Dialect, Rewrite, Strictness};
pub use build::{AgentCheck, BuildError, Builder, read_contract};

// The schema -> types core on its own, for this crate's tests and benchmark and the
// workspace's cross-crate tests: users reach it through the derives and `Builder` only, so it
// is hidden rather than supported.
#[doc(hidden)]
pub use agent_contracts_schema::ContractKind;
/// Top-level keys of the tool call that input contracts may not use: the runtime's own list.
#[doc(hidden)]
pub use agent_contracts_schema::RESERVED_KEYS as RESERVED_INPUT_KEYS;
#[doc(hidden)]
pub use emit::types::{GeneratedTypes, TypeOptions, generate_types, generate_types_with, pretty};
#[doc(hidden)]
pub use emit::verdict::verdict_fn;
#[doc(hidden)]
pub use error::SchemaError;
/// The media fields of an input contract's text, in its order (name, media type, inline): the
/// rule the codegen types by, for tools that read contracts at run time.
pub use typify::media::media_properties;
#[doc(hidden)]
pub use typify::properties::Property;
