//! Schema-aware traversal of a JSON Schema document.
//!
//! Only values in schema positions are visited: a property *named* `if` under
//! `properties`, or an object inside `enum`/`default`, is data, not a schema.

use serde_json::{Map, Value};

/// Deepest schema nesting accepted; deeper nodes are reported, not walked.
///
/// typify recurses once per level, about 55 KiB of stack per level in debug
/// builds (how proc-macro dependencies are built): 64 levels need about
/// 4 MiB, which fits the 8 MiB thread rustc runs proc macros on. Contracts
/// nest a handful of levels; serde_json's own limit (128 nested arrays or
/// objects) caps most documents near this anyway.
pub(crate) const MAX_DEPTH: usize = 64;

/// Keywords whose value is a single subschema.
const SINGLE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// Keywords whose value is an array of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// A schema object found in the document.
pub(crate) struct Node<'a> {
    /// JSON pointer of the node (`""` for the root).
    pub pointer: String,
    /// The schema's keywords.
    pub schema: &'a Map<String, Value>,
}

/// Every schema object of a document, in document order.
pub(crate) struct Walk<'a> {
    /// The schema objects (boolean schemas are skipped: nothing to check).
    pub nodes: Vec<Node<'a>>,
    /// Pointers of nodes nested deeper than [`MAX_DEPTH`], left unvisited.
    pub too_deep: Vec<String>,
}

/// Collects the schema objects of `root` without recursion.
pub(crate) fn walk(root: &Value) -> Walk<'_> {
    let mut out = Walk {
        nodes: Vec::new(),
        too_deep: Vec::new(),
    };
    let mut stack = vec![(String::new(), 0usize, root)];
    while let Some((pointer, depth, value)) = stack.pop() {
        let Value::Object(schema) = value else {
            continue;
        };
        if depth > MAX_DEPTH {
            out.too_deep.push(pointer);
            continue;
        }
        let mut children = children(&pointer, schema);
        // Reverse so the stack pops children in document order.
        children.reverse();
        stack.extend(children.into_iter().map(|(p, v)| (p, depth + 1, v)));
        out.nodes.push(Node { pointer, schema });
    }
    out
}

/// The subschemas directly below one schema object, with their pointers.
pub(crate) fn children<'a>(
    pointer: &str,
    schema: &'a Map<String, Value>,
) -> Vec<(String, &'a Value)> {
    let mut out = Vec::new();
    for (key, value) in schema {
        let here = child_pointer(pointer, key);
        let key = key.as_str();
        match value {
            // `items` is a schema, or (draft 7 tuples) an array of schemas.
            Value::Array(list) if LIST.contains(&key) || key == "items" => {
                out.extend(indexed(&here, list));
            }
            // `dependencies` mixes schemas and arrays of names; the latter
            // are not objects, so `walk` skips them.
            Value::Object(map) if MAP.contains(&key) => {
                out.extend(map.iter().map(|(k, v)| (child_pointer(&here, k), v)));
            }
            _ if SINGLE.contains(&key) || key == "items" => out.push((here, value)),
            _ => {}
        }
    }
    out
}

fn indexed<'a>(pointer: &str, list: &'a [Value]) -> impl Iterator<Item = (String, &'a Value)> {
    list.iter()
        .enumerate()
        .map(move |(i, v)| (child_pointer(pointer, &i.to_string()), v))
}

/// Appends one escaped reference token (RFC 6901) to a JSON pointer.
pub(crate) fn child_pointer(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// Decodes one reference token (RFC 6901): `~1` is `/`, then `~0` is `~`.
pub(crate) fn decode_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}
