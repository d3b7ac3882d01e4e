//! OpenAI's strict subset of JSON Schema: a schema meeting it can be sent with
//! `"strict": true`, so the server's sampler can only produce matching answers.
//!
//! The rules checked: every object lists all its properties in `required` and sets
//! `additionalProperties: false`; the root is an object; no keyword outside the subset
//! appears (composition other than `anyOf`, conditionals, pattern properties, ...).

use serde_json::Value;

/// Keywords the strict mode refuses.
const UNSUPPORTED: &[&str] = &[
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
];

/// Whether `schema` meets the strict subset.
pub fn is_strict_compatible(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("anyOf").is_none()
        && node_ok(schema, 0)
}

fn node_ok(node: &Value, depth: usize) -> bool {
    // OpenAI allows 10 levels of nesting; deeper schemas are sent without `strict`.
    if depth > 10 {
        return false;
    }
    let Some(map) = node.as_object() else {
        return node.is_boolean() && depth > 0;
    };
    if UNSUPPORTED.iter().any(|k| map.contains_key(*k)) {
        return false;
    }
    if let Some(props) = map.get("properties") {
        let Some(props) = props.as_object() else {
            return false;
        };
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if props.keys().any(|k| !required.contains(&k.as_str()))
            || map.get("additionalProperties") != Some(&Value::Bool(false))
            || !props.values().all(|p| node_ok(p, depth + 1))
        {
            return false;
        }
    } else if is_object_type(map) && map.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    children_ok(map, depth)
}

fn is_object_type(map: &serde_json::Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    }
}

fn children_ok(map: &serde_json::Map<String, Value>, depth: usize) -> bool {
    let single = ["items", "additionalProperties"]
        .iter()
        .filter_map(|k| map.get(*k))
        .filter(|v| v.is_object());
    let lists = map
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let defs = ["$defs", "definitions"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_object))
        .flat_map(|d| d.values());
    single
        .chain(lists)
        .chain(defs)
        .all(|child| node_ok(child, depth + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_closed_object_with_every_property_required_is_strict() {
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
        assert!(is_strict_compatible(&schema));
    }

    #[test]
    fn optional_properties_open_objects_and_other_keywords_are_not() {
        let optional = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": [], "additionalProperties": false});
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a"]});
        let one_of = json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}},
            "required": ["a"], "additionalProperties": false});
        let nested_open = json!({"type": "object", "properties": {"a": {"type": "object"}},
            "required": ["a"], "additionalProperties": false});
        let not_object = json!({"type": "array"});
        for schema in [optional, open, one_of, nested_open, not_object] {
            assert!(!is_strict_compatible(&schema), "{schema}");
        }
    }
}
