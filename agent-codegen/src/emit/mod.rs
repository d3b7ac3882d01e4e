//! Stage 3, emit: the Rust code of a contract and of the agent around it. `types.rs` runs the
//! pipeline from schema text to the finished items (schema rules, typify, fix-ups) and adds
//! the contract's checks as code (`checks.rs`; where a contract ties an untyped value to
//! another contract, `verdict.rs` decides it on the value's tape; both write with
//! `pieces.rs`); `agent.rs` wraps one agent's types in its
//! contract module and `Agent` impl, with the fingerprint of each contract type
//! (`fingerprint.rs`); `prompt.rs` checks the prompt template the impl renders against the
//! contract; `share.rs` tells which items belong to which type and which of a consumer's types
//! are the same code as a producer's (the derive's `types` and the build script's shared types).
//! Both front ends call these, so the derive and build scripts emit the same code.
//!
//! May import: `typify`, `schema` and the crate's leaf modules (`error`, `naming`, `suggest`).
//! Nothing here parses attributes or reads a schemas folder.

pub(crate) mod agent;
pub(crate) mod checks;
pub(crate) mod fingerprint;
pub(crate) mod partial;
pub(crate) mod pieces;
pub(crate) mod prompt;
pub(crate) mod share;
pub(crate) mod strict;
pub(crate) mod types;
pub(crate) mod verdict;
