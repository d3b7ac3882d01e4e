//! The copy of the schema given to typify: what typify would refuse, panic on or mistype is
//! rewritten into something it types faithfully, or typed looser and left to the validator.
//!
//! The runtime always validates the original schema before it deserializes, so loosening a
//! type here never lets a value through that the schema refuses: a mixed-type `enum` typed as
//! an untagged enum of its JSON types, or colliding enum values typed as `String`, still only
//! accept the listed values. Each rewrite keeps the rule "every value the schema accepts
//! deserializes".

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::naming;
use crate::schema::problem::display;
use crate::schema::refs::resolve_branch;
use crate::schema::scalars::{json_type, scalar_types};
use crate::schema::walk::{self, child_pointer};

/// Something the preparation changed that the user should hear about: a `default` that does
/// not match its own schema, dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    /// JSON pointer of the dropped value.
    pub pointer: String,
    /// Lowercase message, without location.
    pub message: String,
}

/// The typify input for `schema` and the notes about what was dropped.
///
/// schemars 0.8 reads draft 7, so `$defs` move to `definitions`; the root is titled
/// `root_name` (typify's name source); formats typify would type with chrono or uuid are
/// dropped so the output needs no such dependency (they stay strings; the original schema
/// still validates them); and the per-node fallbacks of [`adapt_node`] apply.
pub(crate) fn typify_input(schema: &Value, root_name: &str) -> (Value, Vec<Note>) {
    let notes = nonconforming_defaults(schema);
    let mut input = schema.clone();
    let pointers: Vec<String> = walk::walk(schema)
        .nodes
        .iter()
        .map(|node| node.pointer.clone())
        .collect();
    for note in &notes {
        if let Some(Value::Object(node)) = input.pointer_mut(parent(&note.pointer)) {
            node.remove("default");
        }
    }
    for pointer in pointers {
        let resolved = resolved_branches(schema, &pointer);
        if let Some(Value::Object(node)) = input.pointer_mut(&pointer) {
            adapt_node(node, &resolved);
        }
    }
    let Value::Object(root) = &mut input else {
        return (input, notes);
    };
    if let Some(Value::Object(defs)) = root.remove("$defs") {
        let definitions = root
            .entry("definitions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(definitions) = definitions {
            // Same-named entries were checked to be identical.
            definitions.extend(defs);
        }
    }
    root.insert("title".into(), Value::from(root_name));
    (input, notes)
}

/// The pointer of the object that holds the member at `pointer`.
fn parent(pointer: &str) -> &str {
    pointer.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// The `anyOf`/`oneOf` branches of the node at `pointer`, with `$ref`s followed, so that the
/// per-node rewrite can judge them without the whole document.
fn resolved_branches(root: &Value, pointer: &str) -> Vec<Value> {
    let Some(node) = root.pointer(pointer) else {
        return Vec::new();
    };
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| node.get(*k)?.as_array())
        .flatten()
        .map(|branch| resolve_branch(root, branch).unwrap_or(branch))
        .cloned()
        .collect()
}

/// Per-node rewrites of [`typify_input`].
fn adapt_node(node: &mut Map<String, Value>, branches: &[Value]) {
    if let Some(Value::String(target)) = node.get_mut("$ref") {
        if let Some(name) = target.strip_prefix("#/$defs/") {
            *target = format!("#/definitions/{name}");
        }
        // typify asserts that a `type` next to `$ref` equals the target's, and panics
        // otherwise; the target's type is what the value has to have anyway.
        node.remove("type");
    }
    if let Some(Value::String(format)) = node.get("format")
        && matches!(format.as_str(), "date" | "date-time" | "uuid")
    {
        node.remove("format");
    }
    boolean_branches(node);
    mixed_enum(node);
    colliding_variants(node);
    scalar_union(node, branches);
}

/// typify cannot type boolean schemas among `anyOf`/`oneOf` branches (it reaches
/// `unreachable!`): a `false` branch matches nothing and is dropped; a `true` branch matches
/// anything, so the union is typed as any value.
fn boolean_branches(node: &mut Map<String, Value>) {
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = node.get_mut(keyword) else {
            continue;
        };
        if branches.contains(&Value::Bool(true)) {
            node.remove(keyword);
            continue;
        }
        let before = branches.len();
        branches.retain(|b| *b != Value::Bool(false));
        if branches.is_empty() && before > 0 {
            // Nothing matches: leave it for typify, which types it as an empty enum.
            branches.push(Value::Bool(false));
        }
    }
}

/// typify panics on an `enum` whose values have different JSON types: type it by the JSON
/// types its values have (an untagged enum such as `Boolean(bool)`, `String(String)`).
fn mixed_enum(node: &mut Map<String, Value>) {
    let Some(values) = node.get("enum").and_then(Value::as_array) else {
        return;
    };
    let mut types: BTreeSet<&str> = values.iter().map(json_type).collect();
    let kinds: BTreeSet<&str> = types.iter().map(|t| kind(t)).collect();
    if kinds.iter().filter(|k| **k != "null").count() < 2 {
        return;
    }
    if types.contains("number") {
        types.remove("integer");
    }
    let kinds: Vec<Value> = types.into_iter().map(Value::from).collect();
    node.remove("enum");
    node.insert("type".into(), Value::Array(kinds));
}

/// typify panics when two string values of an `enum` map to the same variant name (`Aa` and
/// `aa`, `<` and `>`): such an enum is typed as `String`.
fn colliding_variants(node: &mut Map<String, Value>) {
    let Some(values) = node.get("enum").and_then(Value::as_array) else {
        return;
    };
    let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    if strings.len() < 2 || naming::variant_names(&strings).is_some() {
        return;
    }
    node.remove("enum");
    node.insert("type".into(), Value::from("string"));
}

/// An `anyOf`/`oneOf` of scalar branches that overlap ("known values or any string",
/// `integer` or `number`) is typed by the union of the branches' JSON types, without the
/// branches: typify cannot type overlapping non-object branches.
fn scalar_union(node: &mut Map<String, Value>, branches: &[Value]) {
    let Some(keyword) = ["anyOf", "oneOf"]
        .into_iter()
        .find(|k| node.get(*k).is_some_and(Value::is_array))
    else {
        return;
    };
    let Some(types) = scalar_types(branches) else {
        return;
    };
    let kinds: Vec<&str> = types.iter().map(|t| kind(t)).collect();
    let distinct: BTreeSet<&str> = kinds.iter().copied().collect();
    if distinct.len() == kinds.len() {
        // Disjoint branches: typify's untagged enum picks the right one.
        return;
    }
    let mut union: BTreeSet<&str> = types.into_iter().collect();
    if union.contains("number") {
        union.remove("integer");
    }
    node.remove(keyword);
    let union: Vec<Value> = union.into_iter().map(Value::from).collect();
    node.insert(
        "type".into(),
        match union.as_slice() {
            [single] => single.clone(),
            _ => Value::Array(union),
        },
    );
}

/// Overlap class of a scalar type: `integer` values are `number`s.
fn kind(name: &str) -> &str {
    if name == "integer" { "number" } else { name }
}

/// Every `default` that its own schema refuses (`"default": null` on a string, a value
/// outside the `enum`). `default` is an annotation: the validator ignores it, and typify
/// refuses or panics on such a value, so it is dropped with a note.
fn nonconforming_defaults(root: &Value) -> Vec<Note> {
    let mut notes = Vec::new();
    for node in walk::walk(root).nodes {
        let Some(default) = node.schema.get("default") else {
            continue;
        };
        let mut schema = node.schema.clone();
        schema.remove("default");
        // `$ref`s resolve against the document root: carry its definitions and dialect.
        for key in ["$defs", "definitions", "$schema"] {
            if let Some(value) = root.get(key) {
                schema.entry(key).or_insert_with(|| value.clone());
            }
        }
        let conforms = agent_contracts_schema::validator_options()
            .build(&Value::Object(schema))
            .map(|validator| validator.is_valid(default));
        if !matches!(conforms, Ok(true)) {
            let pointer = child_pointer(&node.pointer, "default");
            let shown = display(&node.pointer);
            notes.push(Note {
                message: format!(
                    "`default` {} at `{shown}` does not match its own schema: it is ignored (fix or remove it)",
                    short(default)
                ),
                pointer,
            });
        }
    }
    notes
}

/// A value as JSON, cut to a readable length.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        return text;
    }
    let cut: String = text.chars().take(37).collect();
    format!("{cut}...")
}
