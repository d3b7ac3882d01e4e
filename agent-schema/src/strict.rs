//! The providers' strict subsets of JSON Schema (OpenAI's strict structured outputs and
//! function tools, Anthropic's structured outputs and strict tools), and the lossless rewrite
//! that brings a contract into one.
//!
//! A provider's sampler can only follow a schema in its subset: every object closed and every
//! property required, a handful of keywords. [`strict_form`] decides, for one contract and one
//! provider ([`Dialect`]), whether the contract is in the subset as written, can be brought into
//! it without losing an answer the contract accepts, or cannot (and why). The rewrite:
//! - an optional property becomes required and nullable (`anyOf` with `{"type": "null"}`); the
//!   answer's `null`s there are removed before the contract check ([`remove_nulls`]), so the
//!   answer a strict model writes passes the original contract;
//! - an object with declared properties is closed (`additionalProperties: false`): keys the
//!   contract does not name carry nothing its typed output holds;
//! - keywords the provider does not take but that only narrow what passes (`minLength`,
//!   `minimum` for Anthropic, annotations) are dropped: the contract still checks them, so the
//!   sampler only allows more.
//!
//! What no rewrite can fix keeps a contract out: maps (`additionalProperties` with a schema),
//! untyped values, `allOf`, an optional property under a union (its `null` could not be told
//! apart), recursion where a provider refuses it.
//!
//! Both the code generator (which decides at build time and embeds the result) and the runtime
//! (which removes the `null`s) use this module, so they cannot disagree.
//!
//! ```
//! use agent_contracts_schema::strict::{Dialect, Strictness, strict_form};
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"note": {"type": "string"}}});
//! let Strictness::Rewritten(rewrite) = strict_form(&schema, Dialect::OpenAi) else { panic!() };
//! assert_eq!(rewrite.schema, json!({
//!     "type": "object",
//!     "properties": {"note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
//!     "required": ["note"],
//!     "additionalProperties": false,
//! }));
//! assert_eq!(rewrite.summary(), "nullable /note; closed /");
//! ```

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::fmt;

/// A provider's strict subset of JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI's structured outputs (`response_format` and function tools with
    /// `strict: true`).
    OpenAi,
    /// Anthropic's structured outputs (`output_config.format` and tools with `strict: true`).
    Anthropic,
}

impl Dialect {
    /// Every dialect, in the order reports list them.
    pub const ALL: [Dialect; 2] = [Dialect::OpenAi, Dialect::Anthropic];

    /// The provider's name in specs and reports (`openai`, `anthropic`).
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a contract fits a dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strictness {
    /// The schema is in the subset as written.
    AsWritten,
    /// The schema fits after a lossless rewrite.
    Rewritten(Rewrite),
    /// No lossless rewrite fits: what prevents it, each with where (a JSON pointer into the
    /// schema), in schema order.
    Not(Vec<String>),
}

/// A contract brought into a dialect's subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The schema to send.
    pub schema: Value,
    /// Where in an answer the rewrite lets a `null` stand for an absent property.
    pub nulls: Vec<NullPath>,
    /// The objects it closed (JSON pointers into the schema).
    pub closed: Vec<String>,
    /// The keywords it dropped.
    pub dropped: BTreeSet<String>,
}

impl Rewrite {
    /// One line: `nullable /a, /b/*/c; closed /, /b; dropped `minLength``.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.nulls.is_empty() {
            let paths: Vec<String> = self.nulls.iter().map(ToString::to_string).collect();
            parts.push(format!("nullable {}", paths.join(", ")));
        }
        if !self.closed.is_empty() {
            let closed: Vec<&str> = self
                .closed
                .iter()
                .map(|p| if p.is_empty() { "/" } else { p.as_str() })
                .collect();
            parts.push(format!("closed {}", closed.join(", ")));
        }
        if !self.dropped.is_empty() {
            let dropped: Vec<String> = self.dropped.iter().map(|k| format!("`{k}`")).collect();
            parts.push(format!("dropped {}", dropped.join(", ")));
        }
        parts.join("; ")
    }
}

/// A place in an answer: object keys, and `*` for every item of an array.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NullPath(pub Vec<Step>);

/// One step of a [`NullPath`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// The property of this name.
    Key(String),
    /// Every item of an array.
    Each,
}

impl fmt::Display for NullPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.0 {
            match step {
                Step::Key(key) => write!(f, "/{key}")?,
                Step::Each => f.write_str("/*")?,
            }
        }
        Ok(())
    }
}

impl NullPath {
    /// As JSON: an array of keys, `null` for every item.
    pub fn to_json(&self) -> Value {
        self.0
            .iter()
            .map(|step| match step {
                Step::Key(key) => Value::String(key.clone()),
                Step::Each => Value::Null,
            })
            .collect()
    }

    /// From [`NullPath::to_json`]'s form; `None` for anything else.
    pub fn from_json(value: &Value) -> Option<Self> {
        let steps = value.as_array()?.iter().map(|step| match step {
            Value::String(key) => Some(Step::Key(key.clone())),
            Value::Null => Some(Step::Each),
            _ => None,
        });
        steps.collect::<Option<Vec<_>>>().map(NullPath)
    }
}

/// Removes the `null`s at `paths` from `answer` (the properties the rewrite made nullable
/// that the contract has optional and not nullable); whether it removed any. A `null` there
/// fails the contract as written, so removing it never lets a wrong answer through.
pub fn remove_nulls(answer: &mut Value, paths: &[NullPath]) -> bool {
    let mut removed = false;
    for path in paths {
        removed |= remove_at(answer, &path.0);
    }
    removed
}

fn remove_at(node: &mut Value, steps: &[Step]) -> bool {
    match steps {
        [] => false,
        [Step::Key(key)] => match node.as_object_mut() {
            Some(map) if map.get(key) == Some(&Value::Null) => map.remove(key).is_some(),
            _ => false,
        },
        [Step::Key(key), rest @ ..] => node.get_mut(key).is_some_and(|n| remove_at(n, rest)),
        [Step::Each, rest @ ..] => match node.as_array_mut() {
            Some(items) => items
                .iter_mut()
                .fold(false, |removed, item| remove_at(item, rest) | removed),
            None => false,
        },
    }
}

/// What the code generator embeds beside an output contract: per dialect the schema to send
/// (the contract as written, or its rewrite), and where the rewrites let a `null` stand for an
/// absent property.
///
/// ```
/// use agent_contracts_schema::strict::{Dialect, StrictForms};
/// let schema = serde_json::json!({"type": "object", "properties": {"m": {"type": "object"}}});
/// let forms = StrictForms::of(&schema);
/// assert_eq!(forms.schema(Dialect::OpenAi), None);
/// assert_eq!(StrictForms::from_json(&forms.to_json()), Some(forms));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StrictForms {
    /// The schema to send with `strict`, per dialect that has one.
    pub schemas: Vec<(Dialect, Value)>,
    /// Where an answer's `null`s are removed before the contract check.
    pub nulls: Vec<NullPath>,
}

impl StrictForms {
    /// The forms of `schema` in every dialect.
    pub fn of(schema: &Value) -> Self {
        let mut forms = Self::default();
        for dialect in Dialect::ALL {
            match strict_form(schema, dialect) {
                Strictness::AsWritten => forms.schemas.push((dialect, schema.clone())),
                Strictness::Rewritten(rewrite) => {
                    forms.schemas.push((dialect, rewrite.schema));
                    forms.nulls.extend(rewrite.nulls);
                }
                Strictness::Not(_) => {}
            }
        }
        forms.nulls.sort();
        forms.nulls.dedup();
        forms
    }

    /// The schema to send to `dialect`, if it has one.
    pub fn schema(&self, dialect: Dialect) -> Option<&Value> {
        let found = self.schemas.iter().find(|(d, _)| *d == dialect);
        found.map(|(_, schema)| schema)
    }

    /// As JSON text: `{"openai": schema or null, "anthropic": ..., "nulls": [paths]}`.
    pub fn to_json(&self) -> String {
        let mut map = Map::new();
        for dialect in Dialect::ALL {
            let schema = self.schema(dialect).cloned().unwrap_or(Value::Null);
            map.insert(dialect.name().into(), schema);
        }
        let nulls = self.nulls.iter().map(NullPath::to_json).collect();
        map.insert("nulls".into(), Value::Array(nulls));
        Value::Object(map).to_string()
    }

    /// From [`StrictForms::to_json`]'s text; `None` for anything else.
    pub fn from_json(text: &str) -> Option<Self> {
        let value: Value = serde_json::from_str(text).ok()?;
        let schemas = Dialect::ALL.into_iter().filter_map(|d| {
            let schema = value.get(d.name()).filter(|s| !s.is_null())?;
            Some((d, schema.clone()))
        });
        let nulls = value
            .get("nulls")?
            .as_array()?
            .iter()
            .map(NullPath::from_json);
        Some(Self {
            schemas: schemas.collect(),
            nulls: nulls.collect::<Option<Vec<_>>>()?,
        })
    }
}

/// Whether `schema` fits `dialect` as written, after a lossless rewrite, or not.
pub fn strict_form(schema: &Value, dialect: Dialect) -> Strictness {
    let mut walk = Rewriter {
        dialect,
        root: schema,
        problems: Vec::new(),
        closed: Vec::new(),
        dropped: BTreeSet::new(),
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        walk.problems
            .push("the root is not `\"type\": \"object\"`".into());
    }
    let rewritten = walk.node(schema, "", 0);
    let mut nulls = Nulls {
        root: schema,
        found: Vec::new(),
        refs: Vec::new(),
        recursive: false,
        problems: Vec::new(),
    };
    nulls.walk(schema, &mut Vec::new(), false);
    let mut problems = walk.problems;
    problems.extend(nulls.problems);
    if nulls.recursive && (dialect == Dialect::Anthropic || !nulls.found.is_empty()) {
        problems.push("a recursive `$ref`".into());
    }
    if !problems.is_empty() {
        problems.dedup();
        return Strictness::Not(problems);
    }
    if rewritten == *schema {
        return Strictness::AsWritten;
    }
    nulls.found.sort();
    nulls.found.dedup();
    Strictness::Rewritten(Rewrite {
        schema: rewritten,
        nulls: nulls.found,
        closed: walk.closed,
        dropped: walk.dropped,
    })
}

/// Keywords kept as they are.
const KEPT: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
];

/// Keywords only OpenAI takes (both take `format`, each its own list of formats).
const OPENAI_ONLY: &[&str] = &[
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords no rewrite can drop: they give the answer its structure.
const PREVENTING: &[&str] = &[
    "allOf",
    "patternProperties",
    "prefixItems",
    "unevaluatedProperties",
    "dependentSchemas",
];

const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// OpenAI's most levels of nesting.
const OPENAI_MAX_DEPTH: usize = 10;

struct Rewriter<'a> {
    dialect: Dialect,
    root: &'a Value,
    problems: Vec<String>,
    closed: Vec<String>,
    dropped: BTreeSet<String>,
}

impl Rewriter<'_> {
    fn node(&mut self, node: &Value, at: &str, depth: usize) -> Value {
        if self.dialect == Dialect::OpenAi && depth > OPENAI_MAX_DEPTH {
            self.problems.push(format!(
                "nesting deeper than {OPENAI_MAX_DEPTH} levels at {at}"
            ));
        }
        let Some(map) = node.as_object() else {
            self.problems
                .push(format!("an untyped value (`{node}`) at {}", or_root(at)));
            return node.clone();
        };
        let typed = ["type", "$ref", "anyOf", "oneOf", "enum", "const", "allOf"]
            .iter()
            .any(|k| map.contains_key(*k));
        if !typed {
            self.problems
                .push(format!("an untyped value at {}", or_root(at)));
        }
        let mut out = Map::new();
        for (key, value) in map {
            self.keyword(key, value, at, depth, &mut out);
        }
        if has_type(map, "object") {
            self.close(map, at, &mut out);
        }
        Value::Object(out)
    }

    fn keyword(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        depth: usize,
        out: &mut Map<String, Value>,
    ) {
        let here = format!("{at}/{}", escape(key));
        match key {
            "properties" | "$defs" | "definitions" => {
                let children = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, child)| {
                        let at = format!("{here}/{}", escape(name));
                        (name.clone(), self.node(child, &at, depth + 1))
                    });
                let children: Map<String, Value> = children.collect();
                out.insert(key.into(), Value::Object(children));
            }
            "items" => {
                let child = self.node(value, &here, depth + 1);
                out.insert(key.into(), child);
            }
            "anyOf" | "oneOf" => {
                let branches = value.as_array().into_iter().flatten().enumerate();
                let branches =
                    branches.map(|(i, b)| self.node(b, &format!("{here}/{i}"), depth + 1));
                let branches: Vec<Value> = branches.collect();
                if key == "oneOf" {
                    // Any answer `oneOf` accepts, `anyOf` does; the contract keeps the rest.
                    self.dropped.insert("oneOf".into());
                }
                out.insert("anyOf".into(), Value::Array(branches));
            }
            "additionalProperties" if value.is_object() && value != &json!({}) => {
                self.problems
                    .push(format!("`additionalProperties` (a map) at {}", or_root(at)));
            }
            "additionalProperties" => {} // `close` decides it
            "enum"
                if self.dialect == Dialect::Anthropic
                    && value
                        .as_array()
                        .is_some_and(|v| v.iter().any(|v| v.is_object() || v.is_array())) =>
            {
                self.problems
                    .push(format!("an `enum` of objects or arrays at {}", or_root(at)));
            }
            "format" => {
                let formats = match self.dialect {
                    Dialect::OpenAi => OPENAI_FORMATS,
                    Dialect::Anthropic => ANTHROPIC_FORMATS,
                };
                match value.as_str() {
                    Some(f) if formats.contains(&f) => {
                        out.insert(key.into(), value.clone());
                    }
                    _ => {
                        self.dropped
                            .insert(format!("format: {}", value.as_str().unwrap_or("?")));
                    }
                }
            }
            "minItems"
                if self.dialect == Dialect::Anthropic && value.as_u64().is_some_and(|n| n <= 1) =>
            {
                out.insert(key.into(), value.clone());
            }
            _ if KEPT.contains(&key) => {
                out.insert(key.into(), value.clone());
            }
            _ if self.dialect == Dialect::OpenAi && OPENAI_ONLY.contains(&key) => {
                out.insert(key.into(), value.clone());
            }
            _ if PREVENTING.contains(&key) => {
                self.problems.push(format!("`{key}` at {}", or_root(at)));
            }
            _ => {
                self.dropped.insert(key.to_owned());
            }
        }
    }

    /// An object: closed, every property required, the optional ones nullable.
    fn close(&mut self, map: &Map<String, Value>, at: &str, out: &mut Map<String, Value>) {
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            let map_schema = map.get("additionalProperties");
            if !map_schema.is_some_and(|s| s.is_object() && s != &json!({})) {
                self.problems
                    .push(format!("an object without `properties` at {}", or_root(at)));
            }
            return;
        };
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.closed.push(at.to_owned());
        }
        out.insert("additionalProperties".into(), Value::Bool(false));
        let required = required(map);
        let Some(Value::Object(rewritten)) = out.get_mut("properties") else {
            return;
        };
        for (name, schema) in properties {
            if !required.contains(name)
                && !admits_null(schema, self.root)
                && let Some(child) = rewritten.get_mut(name)
            {
                let inner = child.take();
                *child = json!({"anyOf": [inner, {"type": "null"}]});
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        out.insert("required".into(), Value::Array(all));
    }
}

/// Finds the answer paths of the nulls the rewrite injects, and what makes them ambiguous.
struct Nulls<'a> {
    root: &'a Value,
    found: Vec<NullPath>,
    /// The `$ref`s being followed, to stop at recursion.
    refs: Vec<String>,
    recursive: bool,
    problems: Vec<String>,
}

impl<'a> Nulls<'a> {
    fn walk(&mut self, node: &'a Value, path: &mut Vec<Step>, in_union: bool) {
        let Some(map) = node.as_object() else { return };
        if let Some(target) = map.get("$ref").and_then(Value::as_str) {
            if self.refs.iter().any(|r| r == target) {
                self.recursive = true;
            } else if let Some(resolved) = resolve(self.root, target) {
                self.refs.push(target.to_owned());
                self.walk(resolved, path, in_union);
                self.refs.pop();
            }
        }
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            let required = required(map);
            for (name, schema) in properties {
                path.push(Step::Key(name.clone()));
                if !required.contains(name) && !admits_null(schema, self.root) {
                    if in_union {
                        let at = NullPath(path.clone());
                        self.problems
                            .push(format!("an optional property under a union at {at}"));
                    } else {
                        self.found.push(NullPath(path.clone()));
                    }
                }
                self.walk(schema, path, in_union);
                path.pop();
            }
        }
        if let Some(items) = map.get("items") {
            path.push(Step::Each);
            self.walk(items, path, in_union);
            path.pop();
        }
        for key in ["anyOf", "oneOf"] {
            for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
                self.walk(branch, path, true);
            }
        }
    }
}

fn required(map: &Map<String, Value>) -> Vec<String> {
    let required = map.get("required").and_then(Value::as_array);
    let names = required.into_iter().flatten().filter_map(Value::as_str);
    names.map(str::to_owned).collect()
}

fn has_type(map: &Map<String, Value>, name: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    }
}

/// Whether `schema` lets `null` through (as far as a local look tells).
fn admits_null(schema: &Value, root: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if has_type(map, "null") || map.get("const") == Some(&Value::Null) {
        return true;
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values.contains(&Value::Null);
    }
    let branches = ["anyOf", "oneOf"].into_iter().filter_map(|k| map.get(k));
    if branches
        .filter_map(Value::as_array)
        .flatten()
        .any(|b| admits_null(b, root))
    {
        return true;
    }
    // One level of `$ref` (a recursive one is refused elsewhere).
    match map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        Some(target) if target != schema => target
            .as_object()
            .is_some_and(|t| has_type(t, "null") || t.get("const") == Some(&Value::Null)),
        _ => false,
    }
}

/// A local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`).
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let pointer = target.strip_prefix('#')?;
    root.pointer(pointer)
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn or_root(at: &str) -> &str {
    if at.is_empty() { "/" } else { at }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_object_with_every_property_required_is_strict_as_written() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {"$ref": "#/$defs/item"}},
                "c": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            },
            "required": ["a", "b", "c"],
            "additionalProperties": false,
            "$defs": {"item": {"type": "object", "properties": {"x": {"type": "number"}},
                "required": ["x"], "additionalProperties": false}}
        });
        for dialect in Dialect::ALL {
            assert_eq!(
                strict_form(&schema, dialect),
                Strictness::AsWritten,
                "{dialect}"
            );
        }
    }

    #[test]
    fn optional_properties_become_nullable_through_refs_and_arrays() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/item"}},
                "maybe": {"type": ["string", "null"]}
            },
            "required": ["items"],
            "$defs": {"item": {"type": "object", "properties": {
                "x": {"type": "string", "minLength": 1}
            }}}
        });
        let Strictness::Rewritten(rewrite) = strict_form(&schema, Dialect::Anthropic) else {
            panic!("not rewritten")
        };
        assert_eq!(
            rewrite.summary(),
            "nullable /items/*/x; closed /$defs/item, /; dropped `minItems`, `minLength`"
        );
        assert_eq!(
            rewrite.schema["$defs"]["item"]["properties"]["x"],
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        // Already nullable: required, not wrapped.
        assert_eq!(
            rewrite.schema["properties"]["maybe"],
            json!({"type": ["string", "null"]})
        );
        assert_eq!(rewrite.schema["required"], json!(["items", "maybe"]));
        let Strictness::Rewritten(openai) = strict_form(&schema, Dialect::OpenAi) else {
            panic!("not rewritten")
        };
        assert_eq!(openai.schema["properties"]["items"]["minItems"], json!(2));
    }

    #[test]
    fn maps_untyped_values_and_union_optionals_prevent_it() {
        let schema = json!({
            "type": "object",
            "properties": {
                "m": {"type": "object", "additionalProperties": {"type": "number"}},
                "any": {},
                "u": {"anyOf": [{"type": "object", "properties": {"k": {"type": "string"}}}]},
                "all": {"allOf": [{"type": "string"}]}
            }
        });
        assert_eq!(
            strict_form(&schema, Dialect::OpenAi),
            Strictness::Not(vec![
                "`allOf` at /properties/all".into(),
                "an untyped value at /properties/any".into(),
                "`additionalProperties` (a map) at /properties/m".into(),
                "an optional property under a union at /u/k".into(),
            ])
        );
    }

    #[test]
    fn recursion_is_openai_only_and_only_as_written() {
        let schema = json!({"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#"}}
        }, "required": ["children"], "additionalProperties": false});
        assert_eq!(strict_form(&schema, Dialect::OpenAi), Strictness::AsWritten);
        assert_eq!(
            strict_form(&schema, Dialect::Anthropic),
            Strictness::Not(vec!["a recursive `$ref`".into()])
        );
    }

    #[test]
    fn nulls_are_removed_only_where_injected() {
        let paths = [
            NullPath(vec![Step::Key("a".into())]),
            NullPath(vec![
                Step::Key("l".into()),
                Step::Each,
                Step::Key("b".into()),
            ]),
        ];
        let mut answer = json!({"a": null, "c": null, "l": [{"b": null}, {"b": 1}, 3]});
        assert!(remove_nulls(&mut answer, &paths));
        assert_eq!(answer, json!({"c": null, "l": [{}, {"b": 1}, 3]}));
        assert!(!remove_nulls(&mut answer, &paths));
        let json = paths[1].to_json();
        assert_eq!(json, json!(["l", null, "b"]));
        assert_eq!(NullPath::from_json(&json), Some(paths[1].clone()));
    }
}
