//! Turns JSON Schema contracts into typed Rust, for `agent-macros` and build
//! scripts.
//!
//! The public surface is what those two need: the derives' entry points ([`derive`](mod@derive),
//! [`contributor`]) and [`Builder`] for build scripts.
//!
//! The schema -> types core (`types.rs`) runs in stages:
//! - `reject.rs`: the rules that refuse what typify cannot type faithfully, located;
//! - `prepare.rs`: the copy of the schema typify sees, with the fallbacks that type looser
//!   and leave the rest to the validator (non-conforming `default`s dropped, mixed enums,
//!   scalar unions, colliding enum values);
//! - `types.rs`: typify itself, its output parsed once into the syntax tree every later stage
//!   works on; `loosen.rs`: the nodes typify cannot type, found and typed as any value with a
//!   warning;
//! - `rewrite.rs` and `fixup.rs`: the tree rerouted through the runtime crate, integer
//!   fields made lenient, variant names made warning-free.
//!
//! The front ends: `derive.rs` and `contributor.rs` (the three derives, sharing `ctxt.rs`),
//! and [`Builder`] for build scripts; `agent.rs` is what they share. Case conversion lives
//! in `naming.rs`.
//!
//! Between agents: `bundle.rs` bundles a contract's `$ref`s to sibling contract files before
//! any of the above sees it, `share.rs` gives such a contract one Rust type in a build
//! script's file, and [`flow`] checks a declared workflow's data flow, for
//! `#[derive(Workflow)]` ([`workflow`]) and [`Builder::check_workflow`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

// `proc_macro::is_available` tells whether the code runs inside a proc macro.
extern crate proc_macro;

mod agent;
mod attr;
mod bounds;
mod buildscript;
mod bundle;
mod checks;
mod conditions;
pub mod contributor;
mod ctxt;
pub mod derive;
mod error;
mod fixup;
pub mod flow;
mod keywords;
mod locate;
mod loosen;
mod mapped;
mod naming;
mod prepare;
mod problem;
mod raw;
mod refs;
mod reject;
mod rewrite;
mod scalars;
mod share;
mod types;
mod walk;
pub mod workflow;

pub use buildscript::{AgentCheck, BuildError, Builder};

// The schema -> types core on its own, for this crate's tests and benchmark and the
// workspace's cross-crate tests: users reach it through the derives and `Builder` only, so it
// is hidden rather than supported.
#[doc(hidden)]
pub use agent_schema::ContractKind;
/// Top-level keys of the tool call that input contracts may not use: the runtime's own list.
#[doc(hidden)]
pub use agent_schema::RESERVED_KEYS as RESERVED_INPUT_KEYS;
#[doc(hidden)]
pub use error::SchemaError;
#[doc(hidden)]
pub use types::{
    GeneratedTypes, Property, TypeOptions, generate_types, generate_types_with, pretty,
};
