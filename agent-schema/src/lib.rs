//! What the runtime (`agent-core`) and the code generator (`agent-codegen`) must agree on about
//! a contract schema, defined once: the shape check that refuses schemas validation cannot
//! finish ([`shape`]), which side of an agent a contract guards ([`ContractKind`]), the
//! tool-call keys an input contract may not use ([`RESERVED_KEYS`]) and the one validator
//! configuration ([`validator_options`]).
//!
//! It is a crate of its own because `agent-core` depends on `agent-codegen` (through the
//! derives), so neither can hold what the other needs.
//!
//! ```
//! use agent_schema::shape::check_schema;
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"child": {"$ref": "#"}}});
//! check_schema(&schema).unwrap();
//! agent_schema::validator_options().build(&schema).unwrap();
//! ```

#![forbid(unsafe_code)]

pub mod compat;
pub mod shape;
pub mod strict;

/// Which side of an agent a contract guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContractKind {
    /// What the agent is called with: the context a caller sends. Its top-level properties
    /// share the tool-call object with the [`RESERVED_KEYS`].
    Input,
    /// What the agent returns: no reserved keys.
    Output,
}

/// Keys of a tool call that are about the call, not data for the agent; input contracts may
/// not declare them as top-level properties.
pub const RESERVED_KEYS: [&str; 5] = [
    "task",
    "run_identifier",
    "expected_outputs",
    "output_contract_schema",
    "context",
];

/// The one validator configuration of the project: offline (no `$ref` is ever fetched) and
/// linear-time patterns (the `regex` engine, so no input can make a pattern backtrack). The
/// runtime compiles contracts with it and the code generator refuses what it refuses.
pub fn validator_options<'a>() -> jsonschema::ValidationOptions<'a> {
    jsonschema::options()
        .offline()
        .with_pattern_options(jsonschema::PatternOptions::regex())
}
