//! What a schema must not do before it becomes a contract: loop or branch without bound.
//!
//! The validator follows `$ref`, `allOf`, `anyOf`, `oneOf`, `not` and `if`/`then`/`else` on the
//! same instance node. A cycle made only of those edges never reaches a smaller part of the
//! instance, so validating even `{"x": 1}` recurses until the stack overflows; a chain of
//! unions over shared branches costs the product of their branch counts on every call. Both
//! are refused here, with the JSON pointer of the schema node at fault. A property that refers
//! to its own object (`"self": {"$ref": "#"}`) is fine: `properties` moves to a child of the
//! instance, so the recursion ends with the instance.

use serde_json::Value;
use std::collections::HashMap;

/// Most evaluation paths through in-place applicators from any schema node (the product of
/// branch counts along a chain of unions). Real tool schemas stay far below it.
pub const MAX_EVALUATION_PATHS: u64 = 4096;

/// Why a schema cannot be compiled safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaShapeError {
    /// A cycle of in-place applicators: no instance ends the recursion.
    #[error(
        "`{pointer}` refers back to itself through {path} without moving into the instance, so validation would never end; make the recursion go through `properties`, `items` or another keyword that moves into the instance"
    )]
    Cycle {
        /// The node where the cycle closes.
        pointer: String,
        /// The pointers along the cycle.
        path: String,
        /// The applicator that closes it (the `$ref`, or the union branch), as `#/...`.
        at: String,
    },
    /// A union whose branches multiply past the bound.
    #[error(
        "`{pointer}` has {paths} evaluation paths through `$ref`/`allOf`/`anyOf`/`oneOf`, more than {max}; every call would pay for each: flatten the unions or share fewer branches"
    )]
    TooManyPaths {
        /// The node.
        pointer: String,
        /// Its evaluation paths (saturating).
        paths: u64,
        /// The bound.
        max: u64,
    },
    /// The same branch twice in one union.
    #[error(
        "`{pointer}` lists the same branch twice (items {first} and {second}); remove the duplicate"
    )]
    DuplicateBranch {
        /// The union.
        pointer: String,
        /// The first occurrence.
        first: usize,
        /// The repeat.
        second: usize,
    },
}

impl SchemaShapeError {
    /// The JSON pointer (`""` for the root, no `#`) of the smallest schema node to change: the
    /// `$ref` or branch that closes a cycle, the node with too many paths, the repeated branch.
    pub fn location(&self) -> String {
        let shown = match self {
            Self::Cycle { at, .. } => at.clone(),
            Self::TooManyPaths { pointer, .. } => pointer.clone(),
            Self::DuplicateBranch {
                pointer, second, ..
            } => format!("{pointer}/{second}"),
        };
        shown.trim_start_matches('#').to_owned()
    }
}

/// Checks `schema` for cycles of in-place applicators, evaluation paths past
/// [`MAX_EVALUATION_PATHS`] and duplicate union branches.
///
/// ```
/// use agent_contracts_schema::shape::check_schema;
/// use serde_json::json;
///
/// let cycle = json!({"properties": {"x": {"$ref": "#/$defs/a"}},
///                    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
/// assert!(check_schema(&cycle).is_err());
/// let tree = json!({"properties": {"child": {"$ref": "#"}}});
/// assert!(check_schema(&tree).is_ok());
/// ```
pub fn check_schema(schema: &Value) -> Result<(), SchemaShapeError> {
    match schema_problems(schema).into_iter().next() {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// Every problem [`check_schema`] refuses, for a caller that reports them all at once: each
/// duplicate branch, then the first cycle or, without one, the first node past the bound
/// (its ancestors are past it too, and saying so adds nothing).
///
/// ```
/// use agent_contracts_schema::shape::{SchemaShapeError, schema_problems};
/// use serde_json::json;
///
/// let schema = json!({"allOf": [{"$ref": "#"}]});
/// let problems = schema_problems(&schema);
/// assert!(matches!(&problems[..], [SchemaShapeError::Cycle { .. }]));
/// assert_eq!(problems[0].location(), "/allOf/0/$ref");
/// ```
pub fn schema_problems(schema: &Value) -> Vec<SchemaShapeError> {
    let mut nodes: Vec<(String, &Value)> = Vec::new();
    collect(schema, String::new(), &mut nodes);
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p.as_str(), i))
        .collect();
    let mut problems = Vec::new();
    let mut edges: Vec<Vec<Edge>> = Vec::with_capacity(nodes.len());
    for (pointer, node) in &nodes {
        problems.extend(duplicates(pointer, node));
        edges.push(
            in_place(pointer, node, schema)
                .into_iter()
                .filter_map(|(target, via)| Some((*index.get(target.as_str())?, via)))
                .collect(),
        );
    }
    let order = match acyclic_order(&nodes, &edges) {
        Ok(order) => order,
        Err(cycle) => {
            problems.push(cycle);
            return problems;
        }
    };
    // Paths from a node: 1 for itself, plus those of each in-place child; children first.
    let mut paths = vec![1u64; nodes.len()];
    for &node in &order {
        let total = edges[node]
            .iter()
            .fold(1u64, |sum, (child, _)| sum.saturating_add(paths[*child]));
        if total > MAX_EVALUATION_PATHS {
            problems.push(SchemaShapeError::TooManyPaths {
                pointer: shown(&nodes[node].0),
                paths: total,
                max: MAX_EVALUATION_PATHS,
            });
            break;
        }
        paths[node] = total;
    }
    problems
}

/// An in-place edge: the node it leads to and the pointer of the keyword that makes it (the
/// `$ref`, or the branch itself).
type Edge = (usize, String);

/// Every schema object in the document with its pointer; values of keywords that hold data
/// (`const`, `enum`, `default`, `examples`) are not schemas.
fn collect<'a>(value: &'a Value, pointer: String, out: &mut Vec<(String, &'a Value)>) {
    let mut stack = vec![(value, pointer)];
    while let Some((value, pointer)) = stack.pop() {
        match value {
            Value::Object(map) => {
                out.push((pointer.clone(), value));
                for (key, child) in map {
                    if matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                        continue;
                    }
                    stack.push((child, format!("{pointer}/{}", escape(key))));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((child, format!("{pointer}/{i}")));
                }
            }
            _ => {}
        }
    }
}

/// Where a node's in-place applicators lead, each with the keyword that leads there: local
/// `$ref`s resolved, and the branches of `allOf`/`anyOf`/`oneOf`, `not`, `if`/`then`/`else`.
fn in_place(pointer: &str, node: &Value, root: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(Value::String(reference)) = node.get("$ref")
        && let Some(target) = reference.strip_prefix('#')
        && (target.is_empty() || target.starts_with('/'))
        && root.pointer(target).is_some()
    {
        out.push((target.to_owned(), format!("{pointer}/$ref")));
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(key) {
            out.extend((0..branches.len()).map(|i| {
                let branch = format!("{pointer}/{key}/{i}");
                (branch.clone(), branch)
            }));
        }
    }
    for key in ["not", "if", "then", "else"] {
        if node.get(key).is_some_and(Value::is_object) {
            let branch = format!("{pointer}/{key}");
            out.push((branch.clone(), branch));
        }
    }
    out
}

/// The same branch twice in one union, once per repeat.
fn duplicates(pointer: &str, node: &Value) -> Vec<SchemaShapeError> {
    let mut out = Vec::new();
    for key in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = node.get(key) else {
            continue;
        };
        for (second, branch) in branches.iter().enumerate() {
            // `true`, `false` and `{}` twice cost nothing; a repeated schema doubles the work.
            if branch.as_object().is_none_or(|o| o.is_empty()) {
                continue;
            }
            if let Some(first) = branches[..second].iter().position(|b| b == branch) {
                out.push(SchemaShapeError::DuplicateBranch {
                    pointer: shown(&format!("{pointer}/{key}")),
                    first,
                    second,
                });
            }
        }
    }
    out
}

/// The nodes in an order where every node comes after the nodes it leads to, or the first
/// cycle found; an iterative depth-first search, so no schema can exhaust the stack.
fn acyclic_order(
    nodes: &[(String, &Value)],
    edges: &[Vec<Edge>],
) -> Result<Vec<usize>, SchemaShapeError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    for start in 0..nodes.len() {
        if mark[start] != Mark::New {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::Open;
        while let Some((node, next)) = stack.last().copied() {
            if let Some((child, via)) = edges[node].get(next) {
                let child = *child;
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                match mark[child] {
                    Mark::New => {
                        mark[child] = Mark::Open;
                        stack.push((child, 0));
                    }
                    Mark::Open => {
                        let at = stack.iter().position(|(n, _)| *n == child).unwrap_or(0);
                        let path: Vec<String> = stack[at..]
                            .iter()
                            .map(|(n, _)| shown(&nodes[*n].0))
                            .chain(std::iter::once(shown(&nodes[child].0)))
                            .map(|p| format!("`{p}`"))
                            .collect();
                        return Err(SchemaShapeError::Cycle {
                            pointer: shown(&nodes[child].0),
                            path: path.join(" -> "),
                            at: shown(via),
                        });
                    }
                    Mark::Done => {}
                }
            } else {
                mark[node] = Mark::Done;
                order.push(node);
                stack.pop();
            }
        }
    }
    Ok(order)
}

/// A JSON pointer token: `~` and `/` escaped.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The root's pointer shown as `#`, others as `#/...`.
fn shown(pointer: &str) -> String {
    format!("#{pointer}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_ref_cycle_is_refused_with_its_path() {
        let schema = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
        let error = check_schema(&schema).unwrap_err();
        assert!(
            matches!(&error, SchemaShapeError::Cycle { path, .. }
                if path.contains("`#/$defs/a`") && path.contains("`#/$defs/b`")),
            "{error}"
        );
    }

    #[test]
    fn self_reference_at_the_root_is_refused() {
        let beside = json!({"type": "object", "$ref": "#", "properties": {"a": {}}});
        assert!(matches!(
            check_schema(&beside),
            Err(SchemaShapeError::Cycle { .. })
        ));
        let through_all_of = json!({"allOf": [{"$ref": "#"}]});
        assert!(matches!(
            check_schema(&through_all_of),
            Err(SchemaShapeError::Cycle { .. })
        ));
    }

    #[test]
    fn recursion_through_properties_is_fine() {
        let tree = json!({"type": "object", "properties": {"self": {"$ref": "#"},
            "children": {"type": "array", "items": {"$ref": "#"}}}});
        check_schema(&tree).unwrap();
    }

    #[test]
    fn shared_branches_multiply_and_are_bounded() {
        // l_i = {"oneOf": [l_{i+1}, l_{i+1}]} would be a duplicate: make the branches differ.
        let mut defs = serde_json::Map::new();
        for i in 0..20 {
            let next = format!("#/$defs/l{}", i + 1);
            defs.insert(
                format!("l{i}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next, "title": "again"}]}),
            );
        }
        defs.insert("l20".into(), json!({"type": "object"}));
        let schema = json!({"$ref": "#/$defs/l0", "$defs": defs});
        let error = check_schema(&schema).unwrap_err();
        assert!(
            matches!(error, SchemaShapeError::TooManyPaths { paths, .. } if paths > 4096),
            "{error}"
        );
    }

    #[test]
    fn duplicate_branches_are_refused() {
        let schema = json!({"oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}],
            "$defs": {"a": {"type": "string"}}});
        assert_eq!(
            check_schema(&schema).unwrap_err(),
            SchemaShapeError::DuplicateBranch {
                pointer: "#/oneOf".into(),
                first: 0,
                second: 1
            }
        );
    }

    #[test]
    fn ordinary_unions_pass() {
        let schema = json!({"properties": {"v": {"anyOf": [{"type": "string"},
            {"type": "object", "properties": {"w": {"const": true}}}]}}});
        check_schema(&schema).unwrap();
    }

    #[test]
    fn each_problem_is_located_at_the_node_to_change() {
        let beside = json!({"type": "object", "$ref": "#", "properties": {"a": {}}});
        assert_eq!(schema_problems(&beside)[0].location(), "/$ref");
        let through_all_of = json!({"allOf": [{"$ref": "#"}]});
        assert_eq!(
            schema_problems(&through_all_of)[0].location(),
            "/allOf/0/$ref"
        );
        let twice = json!({"anyOf": [{"type": "string"}, {"type": "string"}],
            "oneOf": [{"type": "integer"}, {"type": "null"}, {"type": "integer"}]});
        let locations: Vec<String> = schema_problems(&twice)
            .iter()
            .map(|p| p.location())
            .collect();
        assert_eq!(locations, ["/anyOf/1", "/oneOf/2"]);
    }
}
