//! What the runtime (`agent-core`) and the code generator (`agent-codegen`) must agree on about
//! a contract schema, defined once: the shape check that refuses schemas validation cannot
//! finish ([`shape`]), which side of an agent a contract guards ([`ContractKind`]), the
//! tool-call keys an input contract may not use ([`RESERVED_KEYS`]), the one validator
//! configuration ([`validator_options`]), whether every value of one schema passes another
//! ([`compat`]: the build checks a workflow's data flow with it, the runtime a stored run's
//! contracts against the current ones) and a contract's stable [`fingerprint`].
//!
//! It is a crate of its own because `agent-core` depends on `agent-codegen` (through the
//! derives), so neither can hold what the other needs.
//!
//! ```
//! use agent_contracts_schema::shape::check_schema;
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"child": {"$ref": "#"}}});
//! check_schema(&schema).unwrap();
//! agent_contracts_schema::validator_options().build(&schema).unwrap();
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

/// Not part of the public API (its type is jsonschema's): shared by the contract layer and the
/// code generator so that both compile schemas alike.
///
/// The one validator configuration of the project: offline (no `$ref` is ever fetched) and
/// linear-time patterns (the `regex` engine, so no input can make a pattern backtrack). The
/// runtime compiles contracts with it and the code generator refuses what it refuses.
#[doc(hidden)]
pub fn validator_options<'a>() -> jsonschema::ValidationOptions<'a> {
    validator_options_for()
}

/// [`validator_options`] for validators of another in-memory JSON representation than
/// `serde_json::Value` (jsonschema's `json` traits): the same configuration. Not part of the
/// public API either.
#[doc(hidden)]
pub fn validator_options_for<'a, F: jsonschema::json::Json>()
-> jsonschema::ValidationOptions<'a, std::sync::Arc<dyn jsonschema::Retrieve>, F> {
    jsonschema::options_for::<F>()
        .offline()
        .with_pattern_options(jsonschema::PatternOptions::regex())
}

/// The fingerprint of a contract schema: FNV-1a (64 bits) of its canonical JSON (object keys
/// sorted, no whitespace, numbers as serde_json writes them), as 16 lowercase hex digits. The
/// same schema has the same fingerprint in every build, on every platform, whatever the key
/// order or spacing of its file; a stored run records it for each contract it depends on.
///
/// ```
/// use serde_json::json;
/// let a = agent_contracts_schema::fingerprint(&json!({"type": "object", "required": ["a"]}));
/// let b = agent_contracts_schema::fingerprint(&json!({"required": ["a"], "type": "object"}));
/// assert_eq!(a, b);
/// // FNV-1a of `{"required":["a"],"type":"object"}`, as any FNV-1a computes it.
/// assert_eq!(a, "002cccb01ffc1358");
/// assert_ne!(a, agent_contracts_schema::fingerprint(&json!({"type": "object"})));
/// ```
pub fn fingerprint(schema: &serde_json::Value) -> String {
    let mut hash = Fnv1a(0xcbf2_9ce4_8422_2325);
    canonical(schema, &mut hash);
    format!("{:016x}", hash.0)
}

/// FNV-1a, 64 bits: a well-known, stable, non-cryptographic hash (no crypto crate here).
struct Fnv1a(u64);

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Writes `value` as canonical JSON into `hash`: keys sorted whatever the map's order (a
/// build that turns on serde_json's `preserve_order` hashes alike).
fn canonical(value: &serde_json::Value, hash: &mut Fnv1a) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hash.write(b"{");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    hash.write(b",");
                }
                hash.write(Value::String(key.clone()).to_string().as_bytes());
                hash.write(b":");
                canonical(&map[key], hash);
            }
            hash.write(b"}");
        }
        Value::Array(items) => {
            hash.write(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    hash.write(b",");
                }
                canonical(item, hash);
            }
            hash.write(b"]");
        }
        other => hash.write(other.to_string().as_bytes()),
    }
}
