//! Rejection rules: schema constructs typify 0.8 cannot type faithfully.
//!
//! Each rule exists because an experiment showed typify panicking, failing,
//! silently dropping data, or producing a type that deserializes into the
//! wrong shape. Validation-only keywords that typify ignores but that leave
//! the Rust type correct (`minItems`, `dependentRequired`, `const` on a
//! property, ...) are accepted: the runtime validator enforces them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::naming;
use crate::schema::problem::{Problem, display};
use crate::schema::refs::{definition_name, resolve, resolve_branch};
use crate::schema::scalars::scalar_types;
use crate::schema::walk::{self, Node, child_pointer};
use crate::{ContractKind, RESERVED_INPUT_KEYS};

/// Keywords rejected wherever they appear, with the reason.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "prefixItems",
        "typify ignores it and types the array as `Vec<serde_json::Value>`; use `items` with one schema, or tuple-form `items` with equal `minItems` and `maxItems`",
    ),
    (
        "unevaluatedProperties",
        "typify ignores it, so the Rust type would not match the schema; use `additionalProperties` or `items` instead",
    ),
    (
        "unevaluatedItems",
        "typify ignores it, so the Rust type would not match the schema; use `additionalProperties` or `items` instead",
    ),
    (
        "dependentSchemas",
        "typify ignores it, so conditionally allowed properties would be dropped; declare those properties in `properties` and keep `dependentRequired` for the condition",
    ),
    (
        "$dynamicRef",
        "dynamic references cannot be resolved when generating code; use a plain `$ref` to a `$defs` entry",
    ),
    (
        "$dynamicAnchor",
        "dynamic references cannot be resolved when generating code; use a plain `$ref` to a `$defs` entry",
    ),
    (
        "$recursiveRef",
        "dynamic references cannot be resolved when generating code; use a plain `$ref` to a `$defs` entry",
    ),
    (
        "$recursiveAnchor",
        "dynamic references cannot be resolved when generating code; use a plain `$ref` to a `$defs` entry",
    ),
];

/// Runs every rule over `root` and returns all problems: root rules first,
/// then per-node rules in document order, then type-name clashes.
pub(crate) fn check(root: &Value, kind: ContractKind, root_name: &str) -> Vec<Problem> {
    let mut problems = check_root(root, kind);
    let walked = walk::walk(root);
    for pointer in &walked.too_deep {
        problems.push(Problem::new(
            pointer,
            format!(
                "schema nesting at `{pointer}` is deeper than {} levels",
                walk::MAX_DEPTH
            ),
        ));
    }
    for node in &walked.nodes {
        check_node(root, node, &mut problems);
        user_source(node, kind, &mut problems);
    }
    recursive_overlapping_combinators(root, &walked.nodes, &mut problems);
    check_type_names(root, &walked.nodes, root_name, &mut problems);
    problems
}

/// Rules about the root object alone.
fn check_root(root: &Value, kind: ContractKind) -> Vec<Problem> {
    let mut problems = Vec::new();
    if root.get("type") != Some(&Value::from("object")) {
        problems.push(Problem::new(
            "",
            "schema root must be an object type: add `\"type\": \"object\"`",
        ));
    }
    if kind == ContractKind::Input {
        problems.extend(reserved_keys(root));
    }
    problems.extend(conflicting_definitions(root));
    problems.extend(unknown_dialect(root));
    problems
}

/// A `$schema` other than a published draft names a custom meta-schema, which the validator
/// would have to fetch: it fetches nothing, so the contract would fail when the agent first
/// runs. Refused here instead.
fn unknown_dialect(root: &Value) -> Option<Problem> {
    const KNOWN: &[&str] = &[
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-04/schema",
        "https://json-schema.org/schema",
    ];
    let dialect = root.get("$schema")?;
    let known = dialect.as_str().is_some_and(|uri| {
        let uri = uri.trim_end_matches('#');
        KNOWN.iter().any(|k| {
            // Either scheme, as the validator accepts.
            let path = k
                .trim_start_matches("https://")
                .trim_start_matches("http://");
            uri.strip_prefix("https://")
                .or_else(|| uri.strip_prefix("http://"))
                == Some(path)
        })
    });
    (!known).then(|| {
        Problem::new(
            "/$schema",
            format!(
                "`$schema` {dialect} at `#` is not a published JSON Schema draft: a custom meta-schema would have to be fetched, and contracts are self-contained; use a draft URI or remove `$schema`"
            ),
        )
    })
}

/// Input contracts may not declare the tool call's own keys.
fn reserved_keys(root: &Value) -> Vec<Problem> {
    let props = root.get("properties").and_then(Value::as_object);
    let declared = props
        .into_iter()
        .flat_map(|p| p.keys())
        .map(|name| (child_pointer("/properties", name), name.as_str()));
    // Required names without a schema are typed too (as `serde_json::Value`).
    let required_only = root
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, name)| Some((child_pointer("/required", &i.to_string()), name.as_str()?)))
        .filter(|(_, name)| !props.is_some_and(|p| p.contains_key(*name)));
    declared
        .chain(required_only)
        .filter(|(_, name)| RESERVED_INPUT_KEYS.contains(name))
        .map(|(pointer, name)| {
            Problem::new(
                &pointer,
                format!(
                    "property `{name}` at `{pointer}` is reserved in input contracts: the tool call itself uses that key; rename the property"
                ),
            )
        })
        .collect()
}

/// typify reads `$defs` and `definitions` as one namespace.
fn conflicting_definitions(root: &Value) -> Vec<Problem> {
    let (Some(defs), Some(definitions)) = (
        root.get("$defs").and_then(Value::as_object),
        root.get("definitions").and_then(Value::as_object),
    ) else {
        return Vec::new();
    };
    defs.iter()
        .filter(|(name, schema)| definitions.get(*name).is_some_and(|other| other != *schema))
        .map(|(name, _)| {
            let pointer = child_pointer("/$defs", name);
            Problem::new(
                &pointer,
                format!("definition `{name}` at `{pointer}` differs from `/definitions` entry of the same name: rename one of them"),
            )
        })
        .collect()
}

/// The annotation of an input field only a person can give: a call without it asks a person
/// instead of sending the model a retry error.
pub(crate) const SOURCE: &str = "x-source";

/// `"x-source": "user"` is meaningful on a property of an input contract's root only: the
/// field a caller omitted is asked of a person. Anywhere else (an output contract, a nested
/// node, `$defs`, another value) nothing would read it, so it is refused where it is written.
fn user_source(node: &Node<'_>, kind: ContractKind, problems: &mut Vec<Problem>) {
    let Some(value) = node.schema.get(SOURCE) else {
        return;
    };
    let pointer = child_pointer(&node.pointer, SOURCE);
    let on_input_property = kind == ContractKind::Input
        && node
            .pointer
            .strip_prefix("/properties/")
            .is_some_and(|name| !name.contains('/'));
    let message = if !on_input_property {
        format!(
            "`{SOURCE}` at `{}` is read only on a property of an input contract (`/properties/<name>`), where `\"{SOURCE}\": \"user\"` marks a field only a person can give; remove it here",
            display(&node.pointer)
        )
    } else if value != "user" {
        format!(
            "`{SOURCE}` at `{}` is {value}: the one source is \"user\" (a field only a person can give); remove it for a field the model supplies",
            display(&node.pointer)
        )
    } else {
        return;
    };
    problems.push(Problem::new(pointer, message));
}

/// Rules that look at one schema object.
fn check_node(root: &Value, node: &Node<'_>, problems: &mut Vec<Problem>) {
    unsupported_keywords(node, problems);
    schema_dependencies(node, problems);
    nested_id(node, problems);
    reference(root, node, problems);
    pattern_properties(node, problems);
    linear_patterns(node, problems);
    tuple_items(node, problems);
    field_collisions(node, problems);
    for keyword in ["oneOf", "anyOf"] {
        const_discriminated(root, node, keyword, problems);
    }
    overlapping_any_of(root, node, problems);
    crate::schema::bounds::too_large(node, problems);
    crate::schema::lints::check(node, problems);
}

fn unsupported_keywords(node: &Node<'_>, problems: &mut Vec<Problem>) {
    for (keyword, reason) in UNSUPPORTED {
        if node.schema.contains_key(*keyword) {
            problems.push(Problem::new(
                child_pointer(&node.pointer, keyword),
                format!(
                    "unsupported schema keyword `{keyword}` at `{}`: {reason}",
                    display(&node.pointer)
                ),
            ));
        }
    }
}

/// Draft 7 `dependencies` with schema values is `dependentSchemas`; the
/// array form (`dependentRequired`) only constrains presence and is fine.
fn schema_dependencies(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let Some(deps) = node.schema.get("dependencies").and_then(Value::as_object) else {
        return;
    };
    if deps.values().any(|v| !v.is_array()) {
        problems.push(Problem::new(
            child_pointer(&node.pointer, "dependencies"),
            format!(
                "unsupported schema keyword `dependencies` with schema values at `{}`: typify ignores it, so conditionally allowed properties would be dropped; declare those properties in `properties` and use the array form of `dependencies`",
                display(&node.pointer)
            ),
        ));
    }
}

/// A nested `$id` changes the base `$ref`s resolve against; typify ignores it.
fn nested_id(node: &Node<'_>, problems: &mut Vec<Problem>) {
    if !node.pointer.is_empty() && node.schema.contains_key("$id") {
        problems.push(Problem::new(
            child_pointer(&node.pointer, "$id"),
            format!(
                "nested `$id` at `{}` is not supported: it changes how `$ref` resolves; remove it and refer to the schema through `$defs`",
                node.pointer
            ),
        ));
    }
}

/// `$ref` must name a root `$defs`/`definitions` entry (or the root itself):
/// typify keeps only the last pointer token and panics on what it cannot find.
fn reference(root: &Value, node: &Node<'_>, problems: &mut Vec<Problem>) {
    let Some(value) = node.schema.get("$ref") else {
        return;
    };
    let pointer = child_pointer(&node.pointer, "$ref");
    let at = display(&node.pointer);
    let message = match value.as_str() {
        None => format!("`$ref` at `{at}` must be a string"),
        // The root itself: typify resolves it to the root type.
        Some("#") => return,
        Some(target) if !target.starts_with('#') => format!(
            "external `$ref` `{target}` at `{at}` is not supported: contracts are self-contained; copy the schema into `$defs`"
        ),
        Some(target) if definition_name(target).is_none() => format!(
            "`$ref` `{target}` at `{at}` must point directly at a definition (`#/$defs/<name>`)"
        ),
        Some(target) if resolve(root, target).is_none() => {
            format!(
                "`$ref` `{target}` at `{at}` points at a missing definition: add it under `$defs`, or fix the name"
            )
        }
        Some(_) => return,
    };
    problems.push(Problem::new(pointer, message));
}

/// typify only maps `patternProperties` to a key-checked map when the object
/// is nothing else; with `properties` it drops them, and without
/// `additionalProperties: false` it rejects keys the schema allows.
fn pattern_properties(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let schema = node.schema;
    let Some(patterns) = schema.get("patternProperties").and_then(Value::as_object) else {
        return;
    };
    let mut values = patterns.values();
    let first = values.next();
    let alone = !schema.contains_key("properties")
        && !schema.contains_key("required")
        && !schema.contains_key("propertyNames")
        && schema.get("additionalProperties") == Some(&Value::Bool(false))
        && values.all(|v| Some(v) == first);
    if first.is_some() && !alone {
        problems.push(Problem::new(
            child_pointer(&node.pointer, "patternProperties"),
            format!(
                "`patternProperties` at `{}` is only supported alone (no `properties`, `required` or `propertyNames`, one value schema, `additionalProperties: false`): typify drops or over-restricts it otherwise",
                display(&node.pointer)
            ),
        ));
    }
}

/// Generated types check `pattern` (and `patternProperties` keys) with the linear-time `regex`
/// engine, the one the runtime validator uses, so no input can make a check backtrack; a
/// pattern that engine cannot compile is refused here rather than failing at run time: one
/// that is not a regular expression at all (a contract lint: `[a-z`, `(`), or one that needs
/// backtracking (backreferences, lookaround).
fn linear_patterns(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let schema = node.schema;
    let mut patterns: Vec<(String, &str)> = Vec::new();
    if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
        patterns.push((child_pointer(&node.pointer, "pattern"), p));
    }
    if let Some(map) = schema.get("patternProperties").and_then(Value::as_object) {
        let at = child_pointer(&node.pointer, "patternProperties");
        patterns.extend(map.keys().map(|k| (child_pointer(&at, k), k.as_str())));
    }
    for (pointer, pattern) in patterns {
        if let Err(e) = regex::Regex::new(pattern) {
            let reason = e
                .to_string()
                .lines()
                .last()
                .unwrap_or_default()
                .trim()
                .to_owned();
            // regex-syntax says "... is not supported" / "... are not supported" of what it
            // leaves out on purpose; anything else is a mistake in the pattern itself.
            let message = if reason.contains("not supported") {
                format!(
                    "pattern `{pattern}` at `{pointer}` is not supported by the linear-time regex engine: {reason}; rewrite it without backreferences or lookaround"
                )
            } else {
                format!(
                    "pattern `{pattern}` at `{pointer}` does not compile as a regular expression: {reason}"
                )
            };
            problems.push(Problem::new(&pointer, message));
        }
    }
}

/// typify types array-form `items` only as a fixed-size tuple.
fn tuple_items(node: &Node<'_>, problems: &mut Vec<Problem>) {
    if !node.schema.get("items").is_some_and(Value::is_array) {
        return;
    }
    let min = node.schema.get("minItems").and_then(Value::as_u64);
    let max = node.schema.get("maxItems").and_then(Value::as_u64);
    if min.is_none() || min != max || min == Some(0) {
        problems.push(Problem::new(
            child_pointer(&node.pointer, "items"),
            format!(
                "tuple-form `items` at `{}` needs equal, non-zero `minItems` and `maxItems`: typify cannot type open-ended tuples",
                display(&node.pointer)
            ),
        ));
    }
}

/// JSON type of an `enum` value; `null` only makes the type optional.
fn value_kind(value: &Value) -> Option<&'static str> {
    match value {
        Value::Null => None,
        Value::Bool(_) => Some("boolean"),
        Value::Number(_) => Some("number"),
        Value::String(_) => Some("string"),
        Value::Array(_) => Some("array"),
        Value::Object(_) => Some("object"),
    }
}

/// Two properties that typify turns into one Rust field name would produce a
/// struct that does not compile.
fn field_collisions(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let Some(props) = node.schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    // typify adds a flattened `extra` field for a schema-valued
    // `additionalProperties`.
    if node
        .schema
        .get("additionalProperties")
        .is_some_and(|v| !v.is_boolean())
    {
        seen.insert("extra".into(), "additionalProperties");
    }
    // typify drops properties whose schema is `false`.
    for name in props
        .iter()
        .filter(|(_, v)| **v != Value::Bool(false))
        .map(|(k, _)| k)
    {
        let field = naming::field_name(name);
        if let Some(first) = seen.get(&field) {
            problems.push(Problem::new(
                child_pointer(&child_pointer(&node.pointer, "properties"), name),
                format!(
                    "properties `{first}` and `{name}` at `{}` both become the Rust field `{field}`: rename one of them",
                    display(&node.pointer)
                ),
            ));
        } else {
            seen.insert(field, name);
        }
    }
}

/// A `oneOf`/`anyOf` whose branches differ by a `const` property is only
/// typed as a serde-tagged enum when every branch is an inline object that
/// requires the same property with a distinct string `const`. Otherwise
/// typify emits an untagged enum whose first matching branch wins, which
/// picks the wrong branch whenever the shapes overlap (the `const` property
/// becomes `serde_json::Value`).
fn const_discriminated(root: &Value, node: &Node<'_>, keyword: &str, problems: &mut Vec<Problem>) {
    let Some(branches) = node.schema.get(keyword).and_then(Value::as_array) else {
        return;
    };
    // A single branch leaves nothing to tell apart.
    if branches.len() < 2 {
        return;
    }
    let resolved: Vec<Option<&Map<String, Value>>> = branches
        .iter()
        .map(|b| resolve_branch(root, b).and_then(Value::as_object))
        .collect();
    let has_const = resolved
        .iter()
        .flatten()
        .any(|b| !const_properties(b).is_empty());
    if !has_const || is_tagged(branches) || disjoint(root, branches) {
        return;
    }
    problems.push(Problem::new(
        child_pointer(&node.pointer, keyword),
        format!(
            "`{keyword}` at `{}` tells its branches apart by `const` values, which typify only maps to a tagged enum when every branch is an inline object requiring the same property with a distinct string `const`",
            display(&node.pointer)
        ),
    ));
}

/// Whether no two branches may accept a value of the same JSON type: typify's untagged enum
/// then picks the one branch that can match, whatever the `const`s say.
fn disjoint(root: &Value, branches: &[Value]) -> bool {
    let mut seen = BTreeSet::new();
    branches
        .iter()
        .flat_map(|b| accepted_kinds(root, b, 0))
        .all(|kind| seen.insert(kind))
}

/// Whether all branches are inline objects sharing a required string-`const`
/// property with distinct values.
fn is_tagged(branches: &[Value]) -> bool {
    let objects: Option<Vec<&Map<String, Value>>> = branches
        .iter()
        .map(|b| b.as_object().filter(|o| !o.contains_key("$ref")))
        .collect();
    let Some(objects) = objects else {
        return false;
    };
    const_properties(objects[0]).into_iter().any(|(tag, _)| {
        let mut values = BTreeSet::new();
        objects.iter().all(|branch| {
            is_required(branch, tag) && string_const(branch, tag).is_some_and(|v| values.insert(v))
        })
    })
}

fn string_const<'a>(schema: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    const_properties(schema)
        .into_iter()
        .find(|(prop, _)| *prop == name)?
        .1
        .as_str()
}

/// Properties of an object schema pinned to one value by `const` or a
/// one-value `enum`.
fn const_properties(schema: &Map<String, Value>) -> Vec<(&str, &Value)> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .filter_map(|(name, prop)| {
            let value =
                prop.get("const")
                    .or_else(|| match prop.get("enum")?.as_array()?.as_slice() {
                        [single] => Some(single),
                        _ => None,
                    })?;
            Some((name.as_str(), value))
        })
        .collect()
}

fn is_required(schema: &Map<String, Value>, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|req| req.iter().any(|r| r.as_str() == Some(name)))
}

/// typify turns an `anyOf` whose branches can match the same non-object
/// value into a struct of flattened `Option`s, which serde cannot fill from
/// a string, number or array (e.g. `anyOf` of two string schemas).
fn overlapping_any_of(root: &Value, node: &Node<'_>, problems: &mut Vec<Problem>) {
    let Some(branches) = node.schema.get("anyOf").and_then(Value::as_array) else {
        return;
    };
    // Scalar branches are typed by the union of their types (`typify::input::scalar_union`).
    let resolved: Vec<Value> = branches
        .iter()
        .map(|b| resolve_branch(root, b).unwrap_or(b).clone())
        .collect();
    if scalar_types(&resolved).is_some() {
        return;
    }
    let mut seen = BTreeSet::new();
    let mut shared = BTreeSet::new();
    for branch in branches {
        for kind in branch_kinds(root, branch) {
            if !seen.insert(kind) {
                shared.insert(kind);
            }
        }
    }
    if shared.is_empty() {
        return;
    }
    let shared = shared.into_iter().collect::<Vec<_>>().join("`, `");
    problems.push(Problem::new(
        child_pointer(&node.pointer, "anyOf"),
        format!(
            "`anyOf` at `{}` has several branches of type `{shared}`: typify cannot type overlapping non-object branches: merge them into one branch, or make them differ by `type`",
            display(&node.pointer)
        ),
    ));
}

/// Non-object, non-null JSON types a branch may match (`integer` counts as
/// `number`); empty when unknown.
fn branch_kinds(root: &Value, branch: &Value) -> BTreeSet<&'static str> {
    let Some(schema) = resolve_branch(root, branch).and_then(Value::as_object) else {
        return BTreeSet::new();
    };
    let kinds: BTreeSet<&'static str> = match schema.get("type") {
        Some(Value::String(t)) => type_kind(t).into_iter().collect(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter_map(type_kind)
            .collect(),
        _ => {
            let values = schema.get("const").into_iter().chain(
                schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            );
            values.filter_map(value_kind).collect()
        }
    };
    kinds.into_iter().filter(|k| *k != "object").collect()
}

/// An `anyOf`/`oneOf` whose branches overlap and that reaches itself again through its
/// branches (by `$ref`, directly or through other schemas) makes both the validator and the
/// generated untagged enum try several branches at every level of an instance's nesting:
/// time exponential in the depth. Overlap is judged conservatively: two branches overlap when
/// they may accept a value of the same JSON type (a branch without `type`, `const` or `enum`
/// may accept any). Branches told apart by a `const` tag overlap too: measured in release
/// builds, an invalid instance of a tagged `oneOf` of two objects that both recurse costs the
/// validator 0.3 s at 14 levels, 4 s at 18 and 55 s at 20 (the depth limit is 64).
fn recursive_overlapping_combinators(
    root: &Value,
    nodes: &[Node<'_>],
    problems: &mut Vec<Problem>,
) {
    let graph = SchemaGraph::new(nodes);
    for (index, node) in nodes.iter().enumerate() {
        for keyword in ["anyOf", "oneOf"] {
            let Some(branches) = node.schema.get(keyword).and_then(Value::as_array) else {
                continue;
            };
            let shared = shared_kinds(root, node.schema, branches);
            if shared.is_empty() {
                continue;
            }
            let list = child_pointer(&node.pointer, keyword);
            let starts = (0..branches.len())
                .filter_map(|i| graph.index_of(&child_pointer(&list, &i.to_string())));
            if !graph.reaches(starts, index) {
                continue;
            }
            let shared = shared.into_iter().collect::<Vec<_>>().join("`, `");
            problems.push(Problem::new(
                &list,
                format!(
                    "`{keyword}` at `{}` has overlapping branches (several may accept `{shared}`) and refers back to itself through them: checking or deserializing a value would try the branches again at every level of its nesting, in time exponential in the depth; give the branches distinct `type`s",
                    display(&node.pointer)
                ),
            ));
        }
    }
}

/// The schema objects of a document as a graph: an edge from each schema to the subschemas it
/// evaluates (not into `$defs`/`definitions`, which only `$ref` reaches) and from each local
/// `$ref` to its target.
struct SchemaGraph<'n> {
    index: BTreeMap<&'n str, usize>,
    edges: Vec<Vec<usize>>,
}

impl<'n> SchemaGraph<'n> {
    fn new(nodes: &'n [Node<'_>]) -> Self {
        let index: BTreeMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.pointer.as_str(), i))
            .collect();
        let mut edges = vec![Vec::new(); nodes.len()];
        // `walk` lists nodes in pre-order, so each node's parent is the nearest node on the
        // stack whose pointer is a prefix of its own.
        let mut ancestors: Vec<usize> = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            while let Some(&top) = ancestors.last() {
                if node
                    .pointer
                    .starts_with(&format!("{}/", nodes[top].pointer))
                {
                    break;
                }
                ancestors.pop();
            }
            if let Some(&parent) = ancestors.last() {
                let rest = &node.pointer[nodes[parent].pointer.len() + 1..];
                let container = rest.split('/').next().unwrap_or_default();
                if container != "$defs" && container != "definitions" {
                    edges[parent].push(i);
                }
            }
            ancestors.push(i);
            let target = match node.schema.get("$ref").and_then(Value::as_str) {
                Some("#") => Some(String::new()),
                Some(t) => {
                    definition_name(t).map(|(map, name)| child_pointer(&format!("/{map}"), &name))
                }
                None => None,
            };
            if let Some(&t) = target.as_deref().and_then(|t| index.get(t)) {
                edges[i].push(t);
            }
        }
        Self { index, edges }
    }

    fn index_of(&self, pointer: &str) -> Option<usize> {
        self.index.get(pointer).copied()
    }

    /// Whether `target` is reachable from any of `starts` (a start counts as reached).
    fn reaches(&self, starts: impl Iterator<Item = usize>, target: usize) -> bool {
        let mut seen = vec![false; self.edges.len()];
        let mut stack: Vec<usize> = starts.collect();
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            stack.extend(self.edges[n].iter().copied().filter(|&m| !seen[m]));
        }
        false
    }
}

/// JSON types that two or more `branches` may both accept, within the combinator node's own
/// `type` if it has one.
fn shared_kinds(
    root: &Value,
    node: &Map<String, Value>,
    branches: &[Value],
) -> BTreeSet<&'static str> {
    let own = declared_kinds(node);
    let mut seen = BTreeSet::new();
    let mut shared = BTreeSet::new();
    for branch in branches {
        let mut kinds = accepted_kinds(root, branch, 0);
        if let Some(own) = &own {
            kinds.retain(|k| own.contains(k));
        }
        for kind in kinds {
            if !seen.insert(kind) {
                shared.insert(kind);
            }
        }
    }
    shared
}

const ALL_KINDS: [&str; 6] = ["array", "boolean", "null", "number", "object", "string"];

/// The JSON types a schema's own `type` allows, if it says (`integer` counts as `number`).
fn declared_kinds(schema: &Map<String, Value>) -> Option<BTreeSet<&'static str>> {
    let kind = |name: &str| match name {
        "null" => Some("null"),
        other => type_kind(other),
    };
    match schema.get("type")? {
        Value::String(t) => Some(kind(t).into_iter().collect()),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .filter_map(kind)
                .collect(),
        ),
        _ => None,
    }
}

/// A superset of the JSON types `schema` accepts: from `type`, else `const`/`enum`, else the
/// branches of `anyOf`/`oneOf`/`allOf`; any type when nothing says.
fn accepted_kinds(root: &Value, schema: &Value, depth: usize) -> BTreeSet<&'static str> {
    let all = || ALL_KINDS.into_iter().collect::<BTreeSet<_>>();
    let schema = match resolve_branch(root, schema) {
        Some(Value::Object(schema)) => schema,
        Some(Value::Bool(false)) => return BTreeSet::new(),
        _ => return all(),
    };
    if let Some(kinds) = declared_kinds(schema) {
        return kinds;
    }
    let values: Vec<&Value> = schema
        .get("const")
        .into_iter()
        .chain(
            schema
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .collect();
    if !values.is_empty() {
        return values
            .into_iter()
            .map(|v| value_kind(v).unwrap_or("null"))
            .collect();
    }
    if depth >= 8 {
        return all();
    }
    let mut kinds = all();
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        for part in parts {
            let part = accepted_kinds(root, part, depth + 1);
            kinds.retain(|k| part.contains(k));
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(keyword).and_then(Value::as_array) {
            let union: BTreeSet<&str> = branches
                .iter()
                .flat_map(|b| accepted_kinds(root, b, depth + 1))
                .collect();
            kinds.retain(|k| union.contains(k));
        }
    }
    kinds
}

fn type_kind(name: &str) -> Option<&'static str> {
    match name {
        "string" => Some("string"),
        "integer" | "number" => Some("number"),
        "boolean" => Some("boolean"),
        "array" => Some("array"),
        "object" => Some("object"),
        _ => None,
    }
}

/// typify names types after the root name, `$defs` keys and `title`s, and
/// silently reuses the first type when two different schemas share a name.
fn check_type_names(
    root: &Value,
    nodes: &[Node<'_>],
    root_name: &str,
    problems: &mut Vec<Problem>,
) {
    let mut seen: BTreeMap<String, (String, &Value)> = BTreeMap::new();
    seen.insert(naming::type_name(root_name), ("the root type".into(), root));
    for (pointer, source, schema) in named_schemas(root, nodes) {
        let name = naming::type_name(&source);
        match seen.get(&name) {
            Some((first, other)) if *other != schema => problems.push(Problem::new(
                &pointer,
                format!(
                    "{} at `{pointer}` and {first} both become the Rust type `{name}`: typify would merge the two different schemas into one type; rename one of them",
                    describe(&pointer, &source)
                ),
            )),
            Some(_) => {}
            None => {
                let first = format!("{} at `{pointer}`", describe(&pointer, &source));
                seen.insert(name, (first, schema));
            }
        }
    }
}

/// `(pointer, name source, schema)` of every schema typify names: the root
/// definitions by key, every other (non-`$ref`) schema with a `title`.
fn named_schemas<'a>(root: &'a Value, nodes: &[Node<'a>]) -> Vec<(String, String, &'a Value)> {
    let mut out = Vec::new();
    for map in ["$defs", "definitions"] {
        let defs = root
            .get(map)
            .and_then(Value::as_object)
            .into_iter()
            .flatten();
        out.extend(
            defs.map(|(key, schema)| (child_pointer(&format!("/{map}"), key), key.clone(), schema)),
        );
    }
    let defs: BTreeSet<&String> = out.iter().map(|(p, _, _)| p).collect();
    let titled = nodes
        .iter()
        .filter(|n| !n.pointer.is_empty() && !defs.contains(&n.pointer) && defines_type(n.schema))
        .filter_map(|n| {
            let title = n.schema.get("title")?.as_str()?;
            Some((
                n.pointer.clone(),
                title.to_string(),
                root.pointer(&n.pointer)?,
            ))
        })
        .collect::<Vec<_>>();
    out.extend(titled);
    out
}

/// Whether typify emits a named type (struct, enum or constrained newtype)
/// for a schema, rather than a plain `String`, `Vec`, map or number, so a
/// `title` on a plain property schema does not count.
fn defines_type(schema: &Map<String, Value>) -> bool {
    const NAMED: &[&str] = &[
        "properties",
        "enum",
        "oneOf",
        "anyOf",
        "allOf",
        "patternProperties",
        "minLength",
        "maxLength",
        "pattern",
        "not",
    ];
    !schema.contains_key("$ref") && NAMED.iter().any(|k| schema.contains_key(*k))
}

fn describe(pointer: &str, source: &str) -> String {
    if pointer.starts_with("/$defs/") || pointer.starts_with("/definitions/") {
        format!("definition `{source}`")
    } else {
        format!("title `{source}`")
    }
}
