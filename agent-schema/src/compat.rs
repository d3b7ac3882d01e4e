//! Whether what a producer's contract allows is what a consumer's contract accepts: every
//! value of the provided schema must pass the expected one. Types, required properties,
//! enums, items and property schemas are compared, `allOf` member by member, and an
//! `if`/`then`/`else` by the branch every provided value takes, when the `if` holds for all
//! of them or for none; a keyword of the expected schema the comparison does not model (a
//! pattern, a bound the producer does not state, `anyOf`, an `if` whose outcome depends on
//! the value) is reported as undecided, and the run-time contract check decides it.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Whether a finding makes the flow wrong or was beyond the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// Some value the producer may give is refused by the consumer.
    Mismatch,
    /// The check cannot tell.
    Undecided,
}

/// One finding, at a path below the compared field (`budget_agent_output.allocations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Mismatch or undecided.
    pub kind: FindingKind,
    /// What was found, naming the path.
    pub message: String,
}

/// Deepest nesting compared; deeper is undecided.
const MAX_DEPTH: usize = 32;
/// Most `$ref` hops followed to reach a schema.
const MAX_HOPS: usize = 16;

/// Keywords that say nothing about which values pass.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
];

/// Keywords [`compare`] models.
const MODELED: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "allOf",
    "if",
    "then",
    "else",
];

/// Bounds the producer implies when it states the same bound, at least as tight.
const LOWER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// Whether a condition holds for the values of a provided schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Every value of the provided schema passes the condition.
    Always,
    /// No value of the provided schema passes it.
    Never,
    /// Some may and some may not, or the check cannot tell.
    Unknown,
}

/// Whether every value of the provided schema `(doc, schema)` passes `condition` (a schema
/// of the expected document, `(doc, schema)`), none does, or the check cannot tell.
pub fn holds(provided: (&Value, &Value), condition: (&Value, &Value)) -> Holds {
    let mut out = Vec::new();
    Compare {
        provided_doc: provided.0,
        expected_doc: condition.0,
        out: &mut out,
    }
    .holds(provided.1, condition.1, 0)
}

/// Compares the provided schema `(doc, schema)` with the expected one, `field` naming both.
pub fn compare(
    provided: (&Value, &Value),
    expected: (&Value, &Value),
    field: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    Compare {
        provided_doc: provided.0,
        expected_doc: expected.0,
        out: &mut out,
    }
    .schemas(provided.1, expected.1, field, 0);
    out
}

struct Compare<'a, 'o> {
    provided_doc: &'a Value,
    expected_doc: &'a Value,
    out: &'o mut Vec<Finding>,
}

impl<'a> Compare<'a, '_> {
    fn mismatch(&mut self, message: String) {
        self.out.push(Finding {
            kind: FindingKind::Mismatch,
            message,
        });
    }

    fn undecided(&mut self, message: String) {
        self.out.push(Finding {
            kind: FindingKind::Undecided,
            message,
        });
    }

    fn schemas(&mut self, provided: &'a Value, expected: &'a Value, path: &str, depth: usize) {
        let (Some(p), Some(e)) = (
            resolve(self.provided_doc, provided),
            resolve(self.expected_doc, expected),
        ) else {
            self.undecided(format!("`{path}`: a `$ref` that cannot be followed"));
            return;
        };
        let e = match e {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.mismatch(format!(
                    "`{path}`: the step's contract accepts no value here"
                ));
                return;
            }
            Value::Object(e) => e,
            _ => return,
        };
        let p = match p {
            Value::Bool(false) => return,
            Value::Object(p) => p,
            _ => &EMPTY,
        };
        if same(p, e) {
            return;
        }
        if depth > MAX_DEPTH {
            self.undecided(format!("`{path}`: nested deeper than {MAX_DEPTH} levels"));
            return;
        }
        if constrains(e) && !constrains(p) {
            self.undecided(format!(
                "`{path}` may be any value there, and the step's contract constrains it"
            ));
            return;
        }
        self.types(p, e, path);
        self.values(p, e, path);
        self.objects(p, e, path, depth);
        self.items(p, e, path, depth);
        self.others(p, e, path);
        self.all_of(provided, e, path, depth);
        self.conditional(provided, e, path, depth);
    }

    /// The findings of comparing `provided` with `expected`, kept apart from this one's.
    fn quietly(&self, provided: &'a Value, expected: &'a Value, depth: usize) -> Vec<Finding> {
        let mut out = Vec::new();
        Compare {
            provided_doc: self.provided_doc,
            expected_doc: self.expected_doc,
            out: &mut out,
        }
        .schemas(provided, expected, "", depth);
        out
    }

    /// "Always" only when the comparison finds nothing at all; "never" only when a type,
    /// a const/enum or a required property's value rules every provided value out.
    fn holds(&self, provided: &'a Value, condition: &'a Value, depth: usize) -> Holds {
        if self.quietly(provided, condition, depth).is_empty() {
            Holds::Always
        } else if self.never(provided, condition, depth) {
            Holds::Never
        } else {
            Holds::Unknown
        }
    }

    /// Whether no value of `provided` passes `condition`; false when unsure.
    fn never(&self, provided: &'a Value, condition: &'a Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let (Some(p), Some(c)) = (
            resolve(self.provided_doc, provided),
            resolve(self.expected_doc, condition),
        ) else {
            return false;
        };
        let c = match c {
            Value::Bool(false) => return true,
            Value::Object(c) => c,
            _ => return false,
        };
        let Value::Object(p) = p else { return false };
        let given_types = types_of(p);
        if let (Some(given), Some(wanted)) = (&given_types, types_of(c))
            && disjoint_types(given, &wanted)
        {
            return true;
        }
        if let (Some(given), Some(wanted)) = (values_of(p), values_of(c))
            && given
                .iter()
                .all(|g| wanted.iter().all(|w| !same_value(g, w)))
        {
            return true;
        }
        if c.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| all.iter().any(|m| self.never(provided, m, depth + 1)))
        {
            return true;
        }
        // `properties` and `required` say nothing about a value that is not an object: it
        // passes them. Only a provided schema that allows objects alone rules them out.
        if given_types.is_none_or(|t| t.len() != 1 || !t.contains("object")) {
            return false;
        }
        let given_required = names(p.get("required"));
        let given = p.get("properties").and_then(Value::as_object);
        if let Some(wanted) = c.get("properties").and_then(Value::as_object) {
            for (name, schema) in wanted {
                // A property the provided may leave out lets the `if` hold without it.
                if !given_required.contains(&name.as_str()) {
                    continue;
                }
                if let Some(from) = given.and_then(|g| g.get(name))
                    && self.never(from, schema, depth + 1)
                {
                    return true;
                }
            }
        }
        let closed = p.get("additionalProperties") == Some(&Value::Bool(false))
            && p.get("patternProperties").is_none();
        closed
            && names(c.get("required"))
                .iter()
                .any(|name| !given.is_some_and(|g| g.contains_key(*name)))
    }

    /// Each member of `allOf` must be met on its own.
    fn all_of(&mut self, provided: &'a Value, e: &'a Map<String, Value>, path: &str, depth: usize) {
        let Some(all) = e.get("allOf") else { return };
        let Some(members) = all.as_array() else {
            self.undecided(format!("`{path}`: the step's `allOf` is not an array"));
            return;
        };
        for member in members {
            self.schemas(provided, member, path, depth + 1);
        }
    }

    /// The branch every provided value takes applies; an `if` without branches constrains
    /// nothing, and a `then`/`else` without `if` is ignored.
    fn conditional(
        &mut self,
        provided: &'a Value,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let Some(condition) = e.get("if") else { return };
        let (then, otherwise) = (e.get("then"), e.get("else"));
        if then.is_none() && otherwise.is_none() {
            return;
        }
        match self.holds(provided, condition, depth + 1) {
            Holds::Always => {
                if let Some(then) = then {
                    self.schemas(provided, then, path, depth + 1);
                }
            }
            Holds::Never => {
                if let Some(otherwise) = otherwise {
                    self.schemas(provided, otherwise, path, depth + 1);
                }
            }
            Holds::Unknown => {
                // Fitting every branch given fits whichever one a value takes.
                let fits = |branch: Option<&'a Value>| {
                    branch.is_none_or(|b| self.quietly(provided, b, depth + 1).is_empty())
                };
                if !(fits(then) && fits(otherwise)) {
                    self.undecided(format!(
                        "`{path}`: whether the step's `if` holds depends on the value there"
                    ));
                }
            }
        }
    }

    fn types(&mut self, p: &Map<String, Value>, e: &Map<String, Value>, path: &str) {
        let Some(wanted) = types_of(e) else { return };
        let Some(given) = types_of(p) else {
            self.undecided(format!(
                "`{path}` has no stated type, and the step expects {}",
                list(&wanted)
            ));
            return;
        };
        let refused: BTreeSet<&str> = given
            .iter()
            .filter(|t| !(wanted.contains(*t) || (**t == "integer" && wanted.contains("number"))))
            .copied()
            .collect();
        if !refused.is_empty() {
            self.mismatch(format!(
                "`{path}` is {} there, and the step expects {}",
                list(&given),
                list(&wanted)
            ));
        }
    }

    fn values(&mut self, p: &Map<String, Value>, e: &Map<String, Value>, path: &str) {
        let Some(allowed) = values_of(e) else { return };
        match values_of(p) {
            Some(given) => {
                let refused: Vec<String> = given
                    .iter()
                    .filter(|v| !allowed.contains(v))
                    .map(|v| format!("`{v}`"))
                    .collect();
                if !refused.is_empty() {
                    self.mismatch(format!(
                        "`{path}` may be {}, which the step's enum does not allow",
                        refused.join(", ")
                    ));
                }
            }
            None => {
                let shown: Vec<String> = allowed.iter().map(|v| format!("`{v}`")).collect();
                self.mismatch(format!(
                    "`{path}` may be any value of its type there, and the step allows only {}",
                    shown.join(", ")
                ));
            }
        }
    }

    fn objects(
        &mut self,
        p: &'a Map<String, Value>,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let given_required = names(p.get("required"));
        for name in names(e.get("required")) {
            if !given_required.contains(&name) {
                self.mismatch(format!(
                    "`{path}.{name}` is required by the step, and may be left out there"
                ));
            }
        }
        let given = p.get("properties").and_then(Value::as_object);
        let closed = p.get("additionalProperties") == Some(&Value::Bool(false));
        if let Some(wanted) = e.get("properties").and_then(Value::as_object) {
            for (name, schema) in wanted {
                let here = format!("{path}.{name}");
                match given.and_then(|g| g.get(name)) {
                    Some(from) => self.schemas(from, schema, &here, depth + 1),
                    None if closed => {}
                    None => match p.get("additionalProperties") {
                        Some(extra @ Value::Object(_)) => {
                            self.schemas(extra, schema, &here, depth + 1)
                        }
                        _ if constrains_value(schema) => self.undecided(format!(
                            "`{here}` is not declared there, and the step's contract constrains it"
                        )),
                        _ => {}
                    },
                }
            }
        }
        let Some(extra) = e.get("additionalProperties") else {
            return;
        };
        let wanted = e.get("properties").and_then(Value::as_object);
        for (name, schema) in given.into_iter().flatten() {
            if wanted.is_some_and(|w| w.contains_key(name)) {
                continue;
            }
            let here = format!("{path}.{name}");
            if extra == &Value::Bool(false) {
                self.mismatch(format!(
                    "`{here}` may be given there, and the step allows no such property"
                ));
            } else {
                self.schemas(schema, extra, &here, depth + 1);
            }
        }
        if !closed {
            let here = format!("{path}.*");
            match p.get("additionalProperties") {
                Some(from @ Value::Object(_)) => self.schemas(from, extra, &here, depth + 1),
                _ if constrains_value(extra) => self.undecided(format!(
                    "`{here}`: other properties are allowed there, and the step's contract constrains them"
                )),
                _ => {}
            }
        }
    }

    fn items(
        &mut self,
        p: &'a Map<String, Value>,
        e: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let Some(wanted) = e.get("items") else { return };
        match p.get("items") {
            Some(given) => self.schemas(given, wanted, &format!("{path}[]"), depth + 1),
            None if constrains_value(wanted) => self.undecided(format!(
                "`{path}[]`: items are not described there, and the step's contract constrains them"
            )),
            None => {}
        }
    }

    /// Keywords not modelled: implied only when the producer states the same, or a tighter
    /// bound; otherwise undecided.
    fn others(&mut self, p: &Map<String, Value>, e: &Map<String, Value>, path: &str) {
        for (key, value) in e {
            if ANNOTATIONS.contains(&key.as_str()) || MODELED.contains(&key.as_str()) {
                continue;
            }
            let given = p.get(key);
            let implied = given == Some(value)
                || match (given.and_then(Value::as_f64), value.as_f64()) {
                    (Some(g), Some(w)) if LOWER.contains(&key.as_str()) => g >= w,
                    (Some(g), Some(w)) if UPPER.contains(&key.as_str()) => g <= w,
                    _ => false,
                };
            if !implied {
                self.undecided(format!(
                    "`{path}`: the step's `{key}` is not implied by the schema there"
                ));
            }
        }
    }
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

/// Follows local `$ref`s (`#` and `#/...` pointers) to the schema they name.
pub(super) fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    let mut current = schema;
    for _ in 0..MAX_HOPS {
        let Some(target) = current.get("$ref").and_then(Value::as_str) else {
            return Some(current);
        };
        let pointer = target.strip_prefix('#')?;
        current = doc.pointer(pointer)?;
    }
    None
}

/// Same keywords with the same values, annotations aside: nothing to compare.
fn same(p: &Map<String, Value>, e: &Map<String, Value>) -> bool {
    let strip = |m: &Map<String, Value>| -> Map<String, Value> {
        m.iter()
            .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    strip(p) == strip(e)
}

fn constrains(schema: &Map<String, Value>) -> bool {
    schema.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()))
}

fn constrains_value(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => constrains(map),
        Value::Bool(b) => !b,
        _ => false,
    }
}

/// The JSON types a schema allows: its `type`, else those of its `enum`/`const` values.
fn types_of(schema: &Map<String, Value>) -> Option<BTreeSet<&'static str>> {
    if let Some(t) = schema.get("type") {
        let names: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        return Some(names.into_iter().filter_map(type_name).collect());
    }
    let values = values_of(schema)?;
    Some(values.iter().map(|v| json_type(v)).collect())
}

fn type_name(name: &str) -> Option<&'static str> {
    [
        "null", "boolean", "object", "array", "number", "string", "integer",
    ]
    .into_iter()
    .find(|t| *t == name)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// No value has a type of both sets; an integer is also a number.
fn disjoint_types(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> bool {
    let meet = |x: &str, y: &str| {
        x == y || matches!((x, y), ("integer", "number") | ("number", "integer"))
    };
    // An empty set comes from a `type` the check does not know: no conclusion.
    !a.is_empty() && !b.is_empty() && a.iter().all(|x| b.iter().all(|y| !meet(x, y)))
}

/// Equal as JSON Schema compares values: `1` and `1.0` are the same number.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

fn values_of(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(c) = schema.get("const") {
        return Some(vec![c]);
    }
    schema.get("enum")?.as_array().map(|a| a.iter().collect())
}

fn names(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn list(types: &BTreeSet<&str>) -> String {
    let shown: Vec<String> = types.iter().map(|t| format!("`{t}`")).collect();
    match shown.as_slice() {
        [one] => one.clone(),
        _ => format!("one of {}", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(p: Value, e: Value) -> Vec<(FindingKind, String)> {
        compare((&p, &p), (&e, &e), "x")
            .into_iter()
            .map(|f| (f.kind, f.message))
            .collect()
    }

    #[test]
    fn the_same_schema_fits() {
        let s =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        assert!(run(s.clone(), s).is_empty());
    }

    #[test]
    fn types_required_and_enums_are_decided() {
        let p = json!({"type": "object", "properties": {"n": {"type": "string"}, "k": {"type": "string"}}});
        let e = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}, "k": {"enum": ["a", "b"]}}});
        assert_eq!(
            run(p, e),
            [
                (FindingKind::Mismatch, "`x.n` is required by the step, and may be left out there".to_owned()),
                (FindingKind::Mismatch, "`x.k` may be any value of its type there, and the step allows only `\"a\"`, `\"b\"`".to_owned()),
                (FindingKind::Mismatch, "`x.n` is `string` there, and the step expects `integer`".to_owned()),
            ]
        );
        // An integer is a number; an enum inside the step's enum fits.
        let p = json!({"type": "object", "required": ["n", "k"], "properties": {"n": {"type": "integer"}, "k": {"enum": ["a"]}}});
        let e = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}, "k": {"enum": ["a", "b"]}}});
        assert!(run(p, e).is_empty());
    }

    #[test]
    fn what_is_not_modelled_is_undecided() {
        let p = json!({"type": "string"});
        let e = json!({"type": "string", "pattern": "^a"});
        assert_eq!(
            run(p, e),
            [(
                FindingKind::Undecided,
                "`x`: the step's `pattern` is not implied by the schema there".to_owned()
            )]
        );
        assert!(
            run(
                json!({"type": "string", "minLength": 3}),
                json!({"type": "string", "minLength": 1})
            )
            .is_empty()
        );
        assert_eq!(
            run(json!({}), json!({"type": "object"}))[0].0,
            FindingKind::Undecided
        );
    }

    #[test]
    fn all_of_members_are_each_compared() {
        let p = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let e = json!({"allOf": [
            {"required": ["a"]},
            {"properties": {"a": {"type": "integer"}}}
        ]});
        assert_eq!(
            run(p, e),
            [
                (
                    FindingKind::Mismatch,
                    "`x.a` is required by the step, and may be left out there".to_owned()
                ),
                (
                    FindingKind::Mismatch,
                    "`x.a` is `string` there, and the step expects `integer`".to_owned()
                ),
            ]
        );
    }

    /// A provided object whose `kind` is `kind` (a schema) and whose `output` is `output`.
    fn tagged(kind: Value, output: Value) -> Value {
        json!({
            "type": "object",
            "required": ["kind", "output"],
            "properties": {"kind": kind, "output": output},
            "additionalProperties": false
        })
    }

    fn when_kind(kind: &str, then: Value, otherwise: Option<Value>) -> Value {
        let mut e = json!({
            "if": {"required": ["kind"], "properties": {"kind": {"const": kind}}},
            "then": {"properties": {"output": then}}
        });
        if let Some(otherwise) = otherwise {
            e["else"] = json!({"properties": {"output": otherwise}});
        }
        e
    }

    #[test]
    fn the_branch_the_if_always_takes_is_compared() {
        let output =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        let p = tagged(json!({"const": "k"}), output);
        assert!(run(p.clone(), when_kind("k", json!({"required": ["a"]}), None)).is_empty());
        assert_eq!(
            run(p, when_kind("k", json!({"required": ["a", "b"]}), None)),
            [(
                FindingKind::Mismatch,
                "`x.output.b` is required by the step, and may be left out there".to_owned()
            )]
        );
    }

    #[test]
    fn the_else_applies_when_the_if_never_holds() {
        let output =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        let p = tagged(json!({"enum": ["m", "n"]}), output);
        // `then` would refuse, but no provided value takes it.
        let refusing_then = json!({"required": ["z"]});
        assert!(
            run(
                p.clone(),
                when_kind("k", refusing_then.clone(), Some(json!({"required": ["a"]})))
            )
            .is_empty()
        );
        assert_eq!(
            run(
                p,
                when_kind("k", refusing_then, Some(json!({"required": ["a", "c"]})))
            ),
            [(
                FindingKind::Mismatch,
                "`x.output.c` is required by the step, and may be left out there".to_owned()
            )]
        );
    }

    #[test]
    fn an_if_the_value_decides_is_undecided() {
        let undecided = vec![(
            FindingKind::Undecided,
            "`x`: whether the step's `if` holds depends on the value there".to_owned(),
        )];
        let then = json!({"required": ["z"]});
        // The provided leaves `kind` unconstrained.
        let p = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(run(p, when_kind("k", then.clone(), None)), undecided);
        // `kind` may be left out, and the `if` then holds without it.
        let p = json!({"type": "object", "properties": {"kind": {"const": "m"}}});
        assert_eq!(run(p, when_kind("k", then.clone(), None)), undecided);
        // A value that may not be an object passes `properties` whatever it holds.
        let p = json!({"type": ["object", "string"], "required": ["kind"], "properties": {"kind": {"const": "m"}}});
        assert_eq!(run(p, when_kind("k", then, None)), undecided);
        // An `if` without branches constrains nothing.
        let p = json!({"type": "object"});
        let e = json!({"type": "object", "if": {"required": ["kind"]}});
        assert!(run(p, e).is_empty());
    }

    #[test]
    fn holds_is_always_never_or_unknown() {
        let h = |p: Value, c: Value| holds((&p, &p), (&c, &c));
        assert_eq!(
            h(json!({"type": "string"}), json!({"type": "string"})),
            Holds::Always
        );
        assert_eq!(
            h(json!({"type": "string"}), json!({"type": "object"})),
            Holds::Never
        );
        assert_eq!(
            h(json!({"type": "integer"}), json!({"type": "number"})),
            Holds::Always
        );
        // 1 and 1.0 are the same number.
        assert_eq!(
            h(json!({"const": 1}), json!({"const": 1.0})),
            Holds::Unknown
        );
        assert_eq!(h(json!({"const": 1}), json!({"const": 2})), Holds::Never);
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(h(closed, json!({"required": ["b"]})), Holds::Never);
        assert_eq!(
            h(json!({"type": "object"}), json!({"required": ["b"]})),
            Holds::Unknown
        );
    }
}
