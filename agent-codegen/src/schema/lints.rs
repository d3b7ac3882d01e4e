//! Contract lints: constructs JSON Schema allows but that are almost always a mistake in a
//! contract, refused where they were written; and the validator's refusal of a schema, said
//! the way a person fixes it.
//!
//! - `required` naming a property the node does not declare: the schema is valid, the typed
//!   input cannot hold the field, and every call then fails asking the parent for a field no
//!   one knows (`article_txt` for `article_text`). A node that means it says
//!   `"x-undeclared-required": true`.
//! - an `enum` listing a value twice.
//! - the validator's meta-schema refusal (`"type": "strng"`, `"minimum": "1"`, a `pattern`
//!   that does not compile): located at the keyword, with what it must be.

use serde_json::Value;

use crate::schema::problem::{Problem, display};
use crate::schema::walk::{Node, child_pointer};
use crate::suggest::closest;

/// The annotation that keeps `required` names a node does not declare.
pub(crate) const ALLOW_UNDECLARED_REQUIRED: &str = "x-undeclared-required";

/// The JSON types `type` may name.
const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Keywords whose value is a number.
const NUMBERS: [&str; 5] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// Keywords whose value is a non-negative integer.
const COUNTS: [&str; 8] = [
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];

/// The lints of one node.
pub(crate) fn check(node: &Node<'_>, problems: &mut Vec<Problem>) {
    undeclared_required(node, problems);
    duplicate_enum_values(node, problems);
}

fn undeclared_required(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let schema = node.schema;
    // Only a node that declares its properties itself: `required` in an `anyOf` branch, or
    // beside `patternProperties`, `allOf` or a `$ref`, may name properties declared there.
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let shared = ["patternProperties", "allOf", "anyOf", "oneOf", "$ref"];
    if shared.iter().any(|k| schema.contains_key(*k))
        || schema.get(ALLOW_UNDECLARED_REQUIRED) == Some(&Value::Bool(true))
    {
        return;
    }
    let Some(required) = schema.get("required").and_then(Value::as_array) else {
        return;
    };
    let required_pointer = child_pointer(&node.pointer, "required");
    for (i, name) in required.iter().enumerate() {
        let Some(name) = name.as_str() else { continue };
        let at = format!("{required_pointer}/{i}");
        // A name another rule already refused here (a reserved key) is not said twice.
        if properties.contains_key(name) || problems.iter().any(|p| p.pointer == at) {
            continue;
        }
        let guess = closest(name, properties.keys().map(String::as_str))
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        let declared: Vec<&str> = properties.keys().map(String::as_str).collect();
        problems.push(Problem::new(
            at,
            format!(
                "`required` at `{}` names `{name}`, which its `properties` do not declare{guess}; the properties are: {}. Fix the name, declare the property, or add `\"{ALLOW_UNDECLARED_REQUIRED}\": true` beside `required` if the field is meant to be any value",
                display(&node.pointer),
                declared.join(", ")
            ),
        ));
    }
}

fn duplicate_enum_values(node: &Node<'_>, problems: &mut Vec<Problem>) {
    let Some(values) = node.schema.get("enum").and_then(Value::as_array) else {
        return;
    };
    let enum_pointer = child_pointer(&node.pointer, "enum");
    for (i, value) in values.iter().enumerate() {
        if let Some(first) = values[..i].iter().position(|earlier| earlier == value) {
            problems.push(Problem::new(
                format!("{enum_pointer}/{i}"),
                format!(
                    "`enum` at `{}` lists {value} twice (items {first} and {i}); list each value once",
                    display(&node.pointer)
                ),
            ));
        }
    }
}

/// The validator refused `schema` at `pointer` (its meta-schema check, or a pattern it could
/// not compile) with `reason`: the problem at that keyword, with what the keyword must be.
pub(crate) fn meta_refusal(schema: &Value, pointer: &str, reason: &str) -> Problem {
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    // `type: ["strng", "null"]` is refused at `/type/0`: the keyword is the array's.
    let keyword_index = match segments.as_slice() {
        [.., _, index] if index.parse::<usize>().is_ok() => segments.len() - 2,
        [] => 0,
        _ => segments.len() - 1,
    };
    let keyword = segments
        .get(keyword_index)
        .map(|k| k.replace("~1", "/").replace("~0", "~"))
        .unwrap_or_default();
    let node: String = segments[..keyword_index.min(segments.len())]
        .iter()
        .map(|s| format!("/{s}"))
        .collect();
    let value = schema.pointer(pointer).unwrap_or(&Value::Null);
    let at = display(&node);
    let message = match keyword.as_str() {
        "type" => {
            let guess = value
                .as_str()
                .and_then(|name| closest(name, TYPES.into_iter()))
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            format!(
                "`type` at `{at}` is {value}{guess}: it must be one of {}, or an array of them",
                TYPES.join(", ")
            )
        }
        k if NUMBERS.contains(&k) => {
            let unquote = value
                .as_str()
                .filter(|text| text.parse::<f64>().is_ok())
                .map(|text| format!(" (write {text} without quotes)"))
                .unwrap_or_default();
            format!("`{k}` at `{at}` is {value}: it must be a number{unquote}")
        }
        k if COUNTS.contains(&k) => {
            format!("`{k}` at `{at}` is {value}: it must be a non-negative integer")
        }
        "pattern" => {
            format!("`pattern` at `{at}` does not compile as a regular expression: {reason}")
        }
        "required" => format!(
            "`required` at `{at}` is {value}: it must be an array of distinct property names"
        ),
        _ if keyword.is_empty() => format!("the validator refuses this schema: {reason}"),
        k => format!("`{k}` at `{at}` is not valid JSON Schema: {reason}"),
    };
    Problem::new(pointer, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(schema: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        let node = Node {
            pointer: "/properties/source".into(),
            schema: schema.as_object().unwrap(),
        };
        check(&node, &mut problems);
        problems
    }

    #[test]
    fn an_undeclared_required_name_is_refused_with_a_guess() {
        let schema = json!({
            "properties": {"article_text": {}, "title": {}},
            "required": ["title", "article_txt"],
        });
        let problems = node(&schema);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].pointer, "/properties/source/required/1");
        assert!(
            problems[0]
                .message
                .starts_with("`required` at `/properties/source` names `article_txt`, which its `properties` do not declare (did you mean `article_text`?); the properties are: article_text, title."),
            "{}",
            problems[0].message
        );
        // Said on purpose, or in a node whose properties may be declared elsewhere: allowed.
        for allowed in [
            json!({"properties": {"a": {}}, "required": ["b"], "x-undeclared-required": true}),
            json!({"properties": {"a": {}}, "required": ["b"], "allOf": [{"properties": {"b": {}}}]}),
            json!({"required": ["b"]}),
        ] {
            assert!(node(&allowed).is_empty(), "{allowed}");
        }
    }

    #[test]
    fn an_enum_value_listed_twice_is_refused() {
        let problems = node(&json!({"enum": ["a", 1, "a", 1.0, 1]}));
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/properties/source/enum/2", "/properties/source/enum/4"]
        );
        assert!(
            problems[0]
                .message
                .contains("lists \"a\" twice (items 0 and 2)")
        );
    }

    #[test]
    fn the_validators_refusal_says_what_the_keyword_must_be() {
        let schema =
            json!({"properties": {"n": {"type": "strng", "minimum": "1", "maxLength": -1}}});
        let at = |pointer: &str| meta_refusal(&schema, pointer, "refused").message;
        assert_eq!(
            at("/properties/n/type"),
            "`type` at `/properties/n` is \"strng\" (did you mean `string`?): it must be one of array, boolean, integer, null, number, object, string, or an array of them"
        );
        assert_eq!(
            at("/properties/n/minimum"),
            "`minimum` at `/properties/n` is \"1\": it must be a number (write 1 without quotes)"
        );
        assert_eq!(
            at("/properties/n/maxLength"),
            "`maxLength` at `/properties/n` is -1: it must be a non-negative integer"
        );
        let listed = json!({"type": ["strng", "null"]});
        assert!(
            meta_refusal(&listed, "/type/0", "x")
                .message
                .starts_with("`type` at `#` is \"strng\"")
        );
        assert_eq!(
            meta_refusal(&schema, "", "why").message,
            "the validator refuses this schema: why"
        );
    }
}
