//! How large a contract the code generator accepts: every property, enum value and definition
//! becomes Rust code rustc has to compile in the user's build, so a generated or pasted
//! schema of thousands of them would make each build of the crate slow for good. The bounds
//! sit well above real contracts and below where the measured cost climbs (BENCHMARKS.md,
//! "Contract size").

use serde_json::Value;

use crate::schema::problem::{Problem, display};
use crate::schema::walk::{Node, child_pointer};

/// Most properties in one object schema.
pub(crate) const MAX_PROPERTIES: usize = 500;
/// Most values in one `enum`.
pub(crate) const MAX_ENUM_VALUES: usize = 500;
/// Most entries in `$defs` (or `definitions`) of one schema.
pub(crate) const MAX_DEFINITIONS: usize = 500;

/// Each keyword of `node` past its bound, located at the keyword.
pub(crate) fn too_large(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let bounds = [
        ("properties", MAX_PROPERTIES, "properties"),
        ("enum", MAX_ENUM_VALUES, "values"),
        ("$defs", MAX_DEFINITIONS, "definitions"),
        ("definitions", MAX_DEFINITIONS, "definitions"),
    ];
    for (keyword, max, what) in bounds {
        let count = match node.schema.get(keyword) {
            Some(Value::Object(map)) => map.len(),
            Some(Value::Array(items)) => items.len(),
            _ => continue,
        };
        if count > max {
            problems.push(Problem::new(
                child_pointer(&node.pointer, keyword),
                format!(
                    "`{keyword}` at `{}` has {count} {what}, more than the {max} the code generator accepts (each becomes Rust code every build compiles); split the contract, or move part of it under a property typed as a plain `object`",
                    display(&node.pointer)
                ),
            ));
        }
    }
}
