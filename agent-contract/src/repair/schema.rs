//! Value fixes a contract's schema makes certain: the value walked beside the schema, fixed
//! only where the schema names one subschema for it and that subschema leaves one reading.

use super::record::{Repair, RepairKind, Repairs, pointer_segment};
use crate::contract::Contract;
use crate::limits::Limits;
use serde_json::{Map, Number, Value};

/// Most `$ref`s followed in a row from one schema node: a reference cycle ends here.
const MAX_REF_HOPS: usize = 32;

/// `value` fixed for `contract`, and the fixes, when at least one fix was made and the fixed
/// value passes the contract; `made` fixes were already made to it (they count towards
/// [`Limits::max_repairs`]).
pub(super) fn repair(
    contract: &Contract,
    value: &Value,
    repairs: Repairs,
    limits: &Limits,
    made: usize,
) -> Option<(Value, Vec<Repair>)> {
    let mut fixed = value.clone();
    let mut walk = Walk {
        root: contract.schema(),
        repairs,
        limits,
        room: limits.max_repairs.checked_sub(made)?,
        // Each value is visited once per schema node that applies to it; the budget keeps a
        // schema of many `allOf`s over a large value bounded.
        visits: limits.max_values.saturating_mul(4),
        fixes: Vec::new(),
        path: Vec::new(),
    };
    walk.node(contract.schema(), &mut fixed, 0)?;
    if walk.fixes.is_empty() || contract.check(&fixed, limits).is_err() {
        return None;
    }
    Some((fixed, walk.fixes))
}

struct Walk<'s> {
    root: &'s Value,
    repairs: Repairs,
    limits: &'s Limits,
    /// Fixes that may still be made.
    room: usize,
    /// Schema nodes that may still be visited.
    visits: usize,
    fixes: Vec<Repair>,
    path: Vec<String>,
}

impl<'s> Walk<'s> {
    /// Fixes `value` under `schema` and below; `None` when a bound is passed (nothing is
    /// repaired then).
    fn node(&mut self, schema: &'s Value, value: &mut Value, depth: usize) -> Option<()> {
        self.visits = self.visits.checked_sub(1)?;
        if depth > self.limits.max_depth {
            return None;
        }
        let Some(schema) = self.resolve(schema) else {
            return Some(());
        };
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for member in all {
                self.node(member, value, depth + 1)?;
            }
        }
        // `anyOf`/`oneOf` of one schema and `null` (a nullable field): the schema, for a
        // value that is not null. Any other alternatives: a fix would choose among them.
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alternatives)) = schema.get(key)
                && !value.is_null()
                && let [one] = alternatives
                    .iter()
                    .filter(|s| !self.is_null_schema(s))
                    .collect::<Vec<_>>()[..]
            {
                self.node(one, value, depth + 1)?;
            }
        }
        self.here(schema, value)?;
        match value {
            Value::Object(map) => self.members(schema, map, depth),
            Value::Array(items) => {
                let prefix = schema.get("prefixItems").and_then(Value::as_array);
                let rest = schema.get("items").filter(|s| !s.is_array());
                for (i, item) in items.iter_mut().enumerate() {
                    let Some(sub) = prefix.and_then(|p| p.get(i)).or(rest) else {
                        continue;
                    };
                    self.path.push(i.to_string());
                    let done = self.node(sub, item, depth + 1);
                    self.path.pop();
                    done?;
                }
                Some(())
            }
            _ => Some(()),
        }
    }

    /// The members of an object, each under its property's schema, or the
    /// `additionalProperties` schema when no `patternProperties` could apply instead.
    fn members(
        &mut self,
        schema: &'s Map<String, Value>,
        map: &mut Map<String, Value>,
        depth: usize,
    ) -> Option<()> {
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema
            .get("additionalProperties")
            .filter(|_| !schema.contains_key("patternProperties"));
        for (key, member) in map.iter_mut() {
            let Some(sub) = properties.and_then(|p| p.get(key)).or(additional) else {
                continue;
            };
            self.path.push(key.clone());
            let done = self.node(sub, member, depth + 1);
            self.path.pop();
            done?;
        }
        Some(())
    }

    /// The fixes of a value itself under one schema node.
    fn here(&mut self, schema: &Map<String, Value>, value: &mut Value) -> Option<()> {
        let types = wanted(schema);
        if let Value::String(text) = value {
            if let Some(options) = enum_strings(schema)
                && !options.iter().any(|o| o == text)
            {
                let folded = text.to_lowercase();
                let mut matches = options.iter().filter(|o| o.to_lowercase() == folded);
                if let (Some(one), None) = (matches.next(), matches.next())
                    && self.repairs.allows(RepairKind::EnumCase)
                {
                    let fixed = Value::String((*one).to_owned());
                    return self.replace(RepairKind::EnumCase, value, fixed);
                }
                // No unique match: an enum of numbers or booleans may still take the string.
            }
            if !types.is_empty() && !types.contains(&"string") {
                let integer_only = !types.contains(&"number");
                if (types.contains(&"integer") || types.contains(&"number"))
                    && self.repairs.allows(RepairKind::NumberString)
                    && let Some(number) = exact_number(text, integer_only)
                {
                    return self.replace(RepairKind::NumberString, value, Value::Number(number));
                }
                if types.contains(&"boolean") && self.repairs.allows(RepairKind::BooleanString) {
                    let fixed = match text.as_str() {
                        "true" => Some(true),
                        "false" => Some(false),
                        _ => None,
                    };
                    if let Some(fixed) = fixed {
                        return self.replace(RepairKind::BooleanString, value, Value::Bool(fixed));
                    }
                }
            }
        }
        // One value where an array is wanted and the value's own type is not: never `null`,
        // which may mean "none" as well as "one null".
        if types.contains(&"array")
            && !value.is_array()
            && !value.is_null()
            && !types.iter().any(|t| is_type(value, t))
            && self.repairs.allows(RepairKind::SingleToArray)
        {
            let fixed = Value::Array(vec![value.clone()]);
            return self.replace(RepairKind::SingleToArray, value, fixed);
        }
        Some(())
    }

    fn replace(&mut self, kind: RepairKind, value: &mut Value, fixed: Value) -> Option<()> {
        self.room = self.room.checked_sub(1)?;
        let before = value.to_string();
        let after = fixed.to_string();
        let mut path = String::new();
        for segment in &self.path {
            pointer_segment(&mut path, segment);
        }
        self.fixes
            .push(Repair::new(path, kind, &before, &after, self.limits));
        *value = fixed;
        Some(())
    }

    /// The schema node `schema` stands for: local `$ref`s followed; `None` for a boolean
    /// schema, a reference that leads nowhere, or a cycle.
    fn resolve(&self, mut schema: &'s Value) -> Option<&'s Map<String, Value>> {
        for _ in 0..MAX_REF_HOPS {
            let node = schema.as_object()?;
            match node.get("$ref").and_then(Value::as_str) {
                // Beside a `$ref`, other keywords apply too; the walk follows the reference
                // only for a node that holds nothing else a fix depends on.
                Some(reference) if !holds_fix_keywords(node) => {
                    schema = self.root.pointer(reference.strip_prefix('#')?)?;
                }
                _ => return Some(node),
            }
        }
        None
    }

    fn is_null_schema(&self, schema: &'s Value) -> bool {
        self.resolve(schema).is_some_and(|node| {
            node.get("type").and_then(Value::as_str) == Some("null")
                || node.get("const") == Some(&Value::Null)
        })
    }
}

fn holds_fix_keywords(node: &Map<String, Value>) -> bool {
    ["type", "enum", "const", "properties", "items", "allOf"]
        .iter()
        .any(|k| node.contains_key(*k))
}

/// The types a node wants: its `type`, or else the types of its `enum` or `const` values.
fn wanted(schema: &Map<String, Value>) -> Vec<&'static str> {
    const TYPES: [&str; 7] = [
        "string", "integer", "number", "boolean", "array", "object", "null",
    ];
    let named = |name: &str| TYPES.iter().copied().find(|t| *t == name);
    match schema.get("type") {
        Some(Value::String(t)) => named(t).into_iter().collect(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter_map(named)
            .collect(),
        _ => {
            let values: Vec<&Value> = match (schema.get("enum"), schema.get("const")) {
                (Some(Value::Array(values)), _) => values.iter().collect(),
                (_, Some(value)) => vec![value],
                _ => Vec::new(),
            };
            let mut types: Vec<&'static str> = Vec::new();
            for value in values {
                let t = match value {
                    Value::Number(n) if n.is_f64() => "number",
                    Value::Number(_) => "integer",
                    Value::String(_) => "string",
                    Value::Bool(_) => "boolean",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                    Value::Null => "null",
                };
                if !types.contains(&t) {
                    types.push(t);
                }
            }
            types
        }
    }
}

/// The strings of a node's `enum` (or its string `const`), when it has any.
fn enum_strings(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    let strings: Vec<&str> = match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().filter_map(Value::as_str).collect(),
        (_, Some(Value::String(one))) => vec![one.as_str()],
        _ => return None,
    };
    (!strings.is_empty()).then_some(strings)
}

/// Whether `value` is of JSON Schema type `name` (an integral number is an integer).
fn is_type(value: &Value, name: &str) -> bool {
    match (value, name) {
        (Value::Number(_), "number") => true,
        (Value::Number(n), "integer") => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        (Value::String(_), "string") | (Value::Bool(_), "boolean") | (Value::Null, "null") => true,
        (Value::Array(_), "array") | (Value::Object(_), "object") => true,
        _ => false,
    }
}

/// The number `text` is exactly (JSON's grammar, nothing around it), when reading it loses
/// nothing: an integer literal must fit 64 bits (beyond, serde_json would round it), and
/// where only integers are wanted, the number must be integral (a fraction is never rounded).
fn exact_number(text: &str, integer_only: bool) -> Option<Number> {
    let first = *text.as_bytes().first()?;
    let last = *text.as_bytes().last()?;
    if !(first == b'-' || first.is_ascii_digit()) || !last.is_ascii_digit() {
        return None;
    }
    let number: Number = serde_json::from_str(text).ok()?;
    let literal_integer = !text.contains(['.', 'e', 'E']);
    if number.is_f64() {
        let f = number.as_f64()?;
        if literal_integer || !f.is_finite() || (integer_only && f.fract() != 0.0) {
            return None;
        }
    }
    Some(number)
}
