//! Conditions a contract states about values it has already shaped: `if`/`then`/`else` and
//! `contains` (with `minContains`/`maxContains`).
//!
//! They narrow which values pass and never change a value's shape, so the Rust type is built
//! from the rest of the node and the validator enforces the conditions (the generated checks
//! leave them to it). typify panics on conditionals and refuses `contains`, so the copy it types
//! has them removed ([`typed_view`]). One thing would still be lost: a property that only a
//! `then` or `else` declares is not a field of the type, so its value would be dropped when the
//! input deserializes; [`check`] refuses that, pointing at the property.
//!
//! This is what lets a contract tie an item's `output` to the contract of the agent named in
//! the same item (an `allOf` of `if` `agent_name` is X `then` `output` is X's output contract)
//! and require that some items come from given agents (`contains`), while the item stays one
//! struct whose untyped `output` keeps the producer's text.

use serde_json::{Map, Value};

use crate::schema::keywords::{ANNOTATIONS, CONDITIONS};
use crate::schema::problem::{Problem, display};
use crate::schema::walk::{self, child_pointer};

/// `schema` without its conditions, for typing. An `allOf` whose members held only
/// conditions goes too; a member emptied beside others stays as `{}` (any value), so every
/// other node keeps its pointer and problems found in the copy point into `schema`.
pub(crate) fn typed_view(schema: &Value) -> Value {
    let mut view = schema.clone();
    let pointers: Vec<String> = walk::walk(schema)
        .nodes
        .iter()
        .filter(|node| CONDITIONS.iter().any(|k| node.schema.contains_key(*k)))
        .map(|node| node.pointer.clone())
        .collect();
    // Outermost first: a node inside a removed `then` is gone with it.
    for pointer in &pointers {
        if let Some(Value::Object(node)) = view.pointer_mut(pointer) {
            node.retain(|key, _| !CONDITIONS.contains(&key.as_str()));
        }
    }
    let hosts: Vec<String> = walk::walk(schema)
        .nodes
        .iter()
        .filter(|node| node.schema.contains_key("allOf"))
        .map(|node| node.pointer.clone())
        .collect();
    for pointer in hosts {
        if let Some(Value::Object(node)) = view.pointer_mut(&pointer)
            && let Some(Value::Array(members)) = node.get("allOf")
            && members.iter().all(only_annotations)
        {
            node.remove("allOf");
        }
    }
    view
}

fn only_annotations(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

/// Properties a `then` or `else` declares that the node it narrows does not.
///
/// The narrowed node is the one holding the `if`, or, for a condition that is a member of an
/// `allOf`, the node holding the `allOf`.
pub(crate) fn check(root: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    for node in walk::walk(root).nodes {
        for branch in ["then", "else"] {
            let Some(declared) = node
                .schema
                .get(branch)
                .and_then(|b| b.get("properties"))
                .and_then(Value::as_object)
            else {
                continue;
            };
            let host = host(root, &node.pointer, node.schema);
            let known = host.get("properties").and_then(Value::as_object);
            for name in declared.keys() {
                if known.is_some_and(|k| k.contains_key(name)) {
                    continue;
                }
                let pointer = child_pointer(&child_pointer(&node.pointer, branch), "properties");
                problems.push(Problem::new(
                    child_pointer(&pointer, name),
                    format!(
                        "`{name}` is declared only by the `{branch}` at `{}`: declare it in the `properties` of `{}` too, since the Rust type is built from those and a property only a condition names would be dropped",
                        display(&node.pointer),
                        display(host_pointer(&node.pointer, node.schema)),
                    ),
                ));
            }
        }
    }
    problems
}

/// The pointer of the node a condition at `pointer` narrows.
fn host_pointer<'p>(pointer: &'p str, schema: &Map<String, Value>) -> &'p str {
    if schema.contains_key("properties") {
        return pointer;
    }
    match pointer.rsplit_once('/') {
        Some((parent, index)) if index.parse::<usize>().is_ok() => {
            parent.strip_suffix("/allOf").unwrap_or(pointer)
        }
        _ => pointer,
    }
}

fn host<'a>(
    root: &'a Value,
    pointer: &str,
    schema: &'a Map<String, Value>,
) -> &'a Map<String, Value> {
    let at = host_pointer(pointer, schema);
    if at == pointer {
        return schema;
    }
    root.pointer(at)
        .and_then(Value::as_object)
        .unwrap_or(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item() -> Value {
        json!({
            "type": "object",
            "required": ["kind", "body"],
            "properties": {
                "kind": {"enum": ["a", "b"]},
                "body": {"type": "object", "additionalProperties": true}
            },
            "allOf": [
                {"if": {"properties": {"kind": {"const": "a"}}}, "then": {"properties": {"body": {"required": ["x"]}}}},
                {"if": {"properties": {"kind": {"const": "b"}}}, "then": {"properties": {"body": {"required": ["y"]}}}}
            ]
        })
    }

    #[test]
    fn the_typed_view_drops_conditions_and_keeps_the_shape() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": item(), "contains": {"properties": {"kind": {"const": "a"}}}, "minContains": 1},
                "if": {"type": "string"}
            },
            "allOf": [{"description": "kept"}, {"if": {"required": ["if"]}, "then": {"required": ["items"]}}]
        });
        let view = typed_view(&schema);
        assert_eq!(
            view,
            json!({
                "type": "object",
                "properties": {
                    "items": {"type": "array", "items": {
                        "type": "object",
                        "required": ["kind", "body"],
                        "properties": {
                            "kind": {"enum": ["a", "b"]},
                            "body": {"type": "object", "additionalProperties": true}
                        }
                    }},
                    // A property named `if` is data, not a condition.
                    "if": {"type": "string"}
                }
            })
        );
        // An `allOf` with a member that shapes the value keeps it, and emptied members as `{}`.
        let mixed = json!({"allOf": [{"type": "object"}, {"if": {}, "then": {}}]});
        assert_eq!(
            typed_view(&mixed),
            json!({"allOf": [{"type": "object"}, {}]})
        );
    }

    #[test]
    fn a_property_only_a_branch_declares_is_refused() {
        assert!(check(&json!({"$defs": {"item": item()}})).is_empty());
        let schema = json!({
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "if": {"properties": {"kind": {"const": "a"}}},
            "then": {"properties": {"kind": true}},
            "else": {"properties": {"extra": {"type": "integer"}}},
            "allOf": [{"if": {"required": ["kind"]}, "then": {"properties": {"more": true}}}]
        });
        let problems = check(&schema);
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/else/properties/extra", "/allOf/0/then/properties/more"]
        );
        assert_eq!(
            problems[1].message,
            "`more` is declared only by the `then` at `/allOf/0`: declare it in the `properties` of `#` too, since the Rust type is built from those and a property only a condition names would be dropped"
        );
    }
}
