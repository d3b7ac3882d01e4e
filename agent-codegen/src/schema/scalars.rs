//! Which scalar JSON type each branch of a union stands for: the rejection rules let a union
//! of scalar branches through because the preparation of typify's copy types it by the union
//! of those types, so both ask the same question here.

use std::collections::BTreeSet;

use serde_json::Value;

/// The single scalar JSON type of each branch (`string`, `integer`, `number`, `boolean` or
/// `null`), or `None` if any branch is not a plain scalar schema.
pub(crate) fn scalar_types(branches: &[Value]) -> Option<Vec<&'static str>> {
    branches
        .iter()
        .map(|branch| {
            let schema = branch.as_object()?;
            if schema.keys().any(|k| COMBINATORS.contains(&k.as_str())) {
                return None;
            }
            let types: BTreeSet<&'static str> = match schema.get("type") {
                Some(Value::String(t)) => BTreeSet::from([scalar(t)?]),
                Some(_) => return None,
                None => {
                    let values = schema.get("const").into_iter().chain(
                        schema
                            .get("enum")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten(),
                    );
                    values
                        .map(|v| scalar(json_type(v)))
                        .collect::<Option<_>>()?
                }
            };
            match types.len() {
                1 => types.into_iter().next(),
                _ => None,
            }
        })
        .collect()
}

const COMBINATORS: &[&str] = &[
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "properties",
    "items",
];

fn scalar(name: &str) -> Option<&'static str> {
    ["string", "integer", "number", "boolean", "null"]
        .into_iter()
        .find(|t| *t == name)
}

/// The JSON Schema type name of a value (`integer` for integral numbers).
pub(crate) fn json_type(value: &Value) -> &'static str {
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
