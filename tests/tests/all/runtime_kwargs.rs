//! Tool-call kwargs: reserved keys, merging into the context, key order, and every bad input
//! turned into a retry error of one shape (spec items 1 and 3).

use agent_contracts::{Limits, RetryError, contract::ErrorKind, contract::ToolCall};
use agent_tests::RETRY_KEYS;
use serde_json::{Value, json};

/// The retry error's JSON keys, in order.
fn call(text: &str) -> ToolCall {
    ToolCall::from_json_str(text, &agent_contracts::Limits::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The merged context as compact JSON text: exact values and exact key order.
fn context_text(text: &str) -> String {
    serde_json::to_string(&call(text).context_json()).unwrap()
}

fn err(text: &str) -> RetryError {
    match ToolCall::from_json_str(text, &agent_contracts::Limits::default()) {
        Ok(call) => panic!("{text:.200}: accepted as {call:?}"),
        Err(e) => e,
    }
}

/// A call-level retry error: the fixed shape, `success: false`, `error` from the kind, the
/// message as the only violation and no field lists (a bare `ToolCall` knows no contract).
fn assert_call_error(e: &RetryError, kind: ErrorKind, message: &str) {
    assert_eq!(e.kind, kind);
    let json = e.to_json();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, RETRY_KEYS);
    assert_eq!(json["success"], json!(false));
    assert_eq!(json["error"], json!(kind.to_string()));
    assert_eq!(json["validation_message"], json!(message));
    assert_eq!(json["path"], json!([]));
    assert_eq!(json["required_fields"], json!([]));
    assert_eq!(json["missing_fields"], json!([]));
    assert_eq!(json["provided_fields"], json!([]));
    assert!(!e.hint.is_empty());
    assert_eq!(json["errors"], json!([{"path": [], "message": message}]));
}

// ---- 1. merging ---------------------------------------------------------------------------

#[test]
fn reserved_keys_are_taken_out_and_the_rest_is_the_context() {
    let c = call(
        r#"{"b": 1, "task": "Do it", "run_identifier": "r-1", "a": "x",
            "expected_outputs": ["plan"], "output_contract_schema": {"type": "object"}, "c": null}"#,
    );
    assert_eq!(c.task, "Do it");
    assert_eq!(c.run_identifier.as_deref(), Some("r-1"));
    assert_eq!(c.expected_outputs, Some(json!(["plan"])));
    assert_eq!(c.output_contract_schema, Some(json!({"type": "object"})));
    assert_eq!(
        serde_json::to_string(&c.context_json()).unwrap(),
        r#"{"b":1,"a":"x","c":null}"#
    );
    assert_eq!(c.context().as_object().unwrap().len(), 3);
    // As a map (a `Value`'s): keys sorted.
    assert_eq!(
        serde_json::to_string(&c.into_context()).unwrap(),
        r#"{"a":"x","b":1,"c":null}"#
    );
}

#[test]
fn run_identifier_may_be_null_or_absent() {
    assert_eq!(
        call(r#"{"task": "t", "run_identifier": null}"#).run_identifier,
        None
    );
    let c = call(r#"{"task": "t"}"#);
    assert_eq!(c.run_identifier, None);
    assert_eq!(c.expected_outputs, None);
    assert_eq!(c.output_contract_schema, None);
    assert_eq!(serde_json::to_string(&c.context_json()).unwrap(), "{}");
}

#[test]
fn reserved_keys_other_than_task_are_optional_and_passed_through_untouched() {
    let c = call(r#"{"task": "t", "expected_outputs": null, "output_contract_schema": 7}"#);
    assert_eq!(c.expected_outputs, Some(Value::Null));
    assert_eq!(c.output_contract_schema, Some(json!(7)));
    assert_eq!(
        context_text(r#"{"task": "t", "expected_outputs": null}"#),
        "{}"
    );
}

#[test]
fn context_absent_keeps_the_flat_keys_in_order() {
    assert_eq!(
        context_text(r#"{"z": 1, "task": "t", "a": 2, "m": {"y": 1, "b": 2}}"#),
        r#"{"z":1,"a":2,"m":{"y":1,"b":2}}"#
    );
}

#[test]
fn context_null_is_no_context() {
    assert_eq!(
        context_text(r#"{"task": "t", "z": 1, "context": null, "a": 2}"#),
        r#"{"z":1,"a":2}"#
    );
    assert_eq!(context_text(r#"{"task": "t", "context": null}"#), "{}");
}

#[test]
fn context_object_is_spliced_where_it_stood() {
    assert_eq!(
        context_text(r#"{"x": 1, "task": "t", "context": {"y": 2, "z": 3}, "w": 4}"#),
        r#"{"x":1,"y":2,"z":3,"w":4}"#
    );
    // At the start and at the end.
    assert_eq!(
        context_text(r#"{"context": {"y": 2, "z": 3}, "task": "t", "w": 4}"#),
        r#"{"y":2,"z":3,"w":4}"#
    );
    assert_eq!(
        context_text(r#"{"task": "t", "w": 4, "context": {"y": 2, "z": 3}}"#),
        r#"{"w":4,"y":2,"z":3}"#
    );
    assert_eq!(context_text(r#"{"task": "t", "context": {}}"#), "{}");
}

#[test]
fn context_string_holding_an_object_is_parsed_and_spliced() {
    assert_eq!(
        context_text(r#"{"x": 1, "task": "t", "context": "{\"y\": 2, \"z\": [0.60]}", "w": 4}"#),
        r#"{"x":1,"y":2,"z":[0.60],"w":4}"#
    );
    // Whitespace around the object is JSON whitespace.
    assert_eq!(
        context_text(r#"{"task": "t", "context": " \n{\"y\": 2}\t"}"#),
        r#"{"y":2}"#
    );
    assert_eq!(context_text(r#"{"task": "t", "context": "{}"}"#), "{}");
}

#[test]
fn a_top_level_key_wins_over_the_same_key_in_context_and_keeps_its_place() {
    // After `context`: the explicit entry is dropped, the flat one stays where it stood.
    assert_eq!(
        context_text(r#"{"task": "t", "context": {"a": "inner", "b": 2}, "a": "outer", "c": 3}"#),
        r#"{"b":2,"a":"outer","c":3}"#
    );
    // Before `context`.
    assert_eq!(
        context_text(r#"{"a": "outer", "task": "t", "context": {"b": 2, "a": "inner"}}"#),
        r#"{"a":"outer","b":2}"#
    );
    // Stringified context, and a flat `null` still wins.
    assert_eq!(
        context_text(r#"{"task": "t", "context": "{\"a\": 1, \"b\": 2}", "b": null}"#),
        r#"{"a":1,"b":null}"#
    );
}

#[test]
fn top_level_reserved_keys_win_over_the_same_keys_in_context() {
    // A parent that copied its whole call into `context`: `task` is not data.
    let c = call(
        r#"{"task": "t", "run_identifier": "r", "context":
            "{\"task\": \"t\", \"run_identifier\": \"r\", \"a\": 1, \"context\": 2}"}"#,
    );
    assert_eq!(c.task, "t");
    assert_eq!(
        serde_json::to_string(&c.context_json()).unwrap(),
        r#"{"a":1,"context":2}"#
    );
    // A reserved name the parent did not use at the top level stays data.
    assert_eq!(
        context_text(r#"{"task": "t", "context": {"expected_outputs": [1], "b": 2}}"#),
        r#"{"expected_outputs":[1],"b":2}"#
    );
}

#[test]
fn numbers_keep_their_text_through_merging() {
    let text = r#"{"task": "t", "a": 0.60, "context": {"b": 12345678901234567890, "c": 3.14159265358979323846264338327950288},
        "d": -0.0}"#;
    assert_eq!(
        context_text(text),
        r#"{"a":0.60,"b":12345678901234567890,"c":3.14159265358979323846264338327950288,"d":-0.0}"#
    );
}

#[test]
fn from_value_merges_like_from_json_str() {
    let text = r#"{"x": 1, "task": "t", "context": "{\"y\": 2}", "w": {"v": [1, 2]}}"#;
    let value: Value = serde_json::from_str(text).unwrap();
    let from_value = ToolCall::from_value(value, &Limits::default()).unwrap();
    assert_eq!(from_value.context(), call(text).context());
    // A parsed `Value` has its keys sorted: that is the order the call keeps.
    assert_eq!(
        serde_json::to_string(&from_value.context_json()).unwrap(),
        r#"{"y":2,"w":{"v":[1,2]},"x":1}"#
    );
}

#[test]
fn new_builds_a_call_with_that_context() {
    let map = json!({"b": 1, "a": 2}).as_object().unwrap().clone();
    let c = ToolCall::new("t", map);
    assert_eq!(c.task, "t");
    assert_eq!(c.run_identifier, None);
    // A map built in code keeps the map's order (a `Value`'s: sorted).
    assert_eq!(
        serde_json::to_string(&c.context_json()).unwrap(),
        r#"{"a":2,"b":1}"#
    );
}

// ---- 3. bad input -------------------------------------------------------------------------

#[test]
fn kwargs_that_are_not_an_object() {
    for (text, found) in [
        ("[1,2]", "got an array"),
        (r#""x""#, "got a string"),
        ("42", "got a number"),
        ("null", "got null"),
        ("true", "got a boolean"),
    ] {
        assert_call_error(&err(text), ErrorKind::NotObject, found);
    }
    assert_eq!(
        ErrorKind::NotObject.to_string(),
        "Tool call arguments must be a JSON object"
    );
}

#[test]
fn text_that_is_not_json() {
    for (text, message) in [
        (
            r#"{"task": "#,
            "EOF while parsing a value at line 1 column 9",
        ),
        ("plan it", "expected value at line 1 column 1"),
        ("", "EOF while parsing a value at line 1 column 0"),
        (
            r#"{"task": "t"} trailing"#,
            "trailing characters at line 1 column 15",
        ),
    ] {
        assert_call_error(&err(text), ErrorKind::NotJson, message);
    }
    assert_eq!(
        ErrorKind::NotJson.to_string(),
        "Tool call arguments are not valid JSON"
    );
}

#[test]
fn missing_task() {
    for text in [
        "{}",
        r#"{"context": {"task": "inside"}}"#,
        r#"{"Task": "t"}"#,
    ] {
        assert_call_error(
            &err(text),
            ErrorKind::MissingTask,
            "\"task\" is a required property",
        );
    }
    assert_eq!(
        ErrorKind::MissingTask.to_string(),
        "Missing required `task` string"
    );
}

#[test]
fn task_that_is_not_a_string() {
    for (text, message) in [
        (r#"{"task": 5}"#, "`task` is a number"),
        (r#"{"task": null}"#, "`task` is null"),
        (r#"{"task": ["a"]}"#, "`task` is an array"),
        (r#"{"task": {"text": "a"}}"#, "`task` is an object"),
    ] {
        assert_call_error(&err(text), ErrorKind::TaskNotString, message);
    }
    assert_eq!(
        ErrorKind::TaskNotString.to_string(),
        "`task` must be a string"
    );
}

#[test]
fn run_identifier_that_is_not_a_string() {
    assert_call_error(
        &err(r#"{"task": "t", "run_identifier": 12345}"#),
        ErrorKind::RunIdentifierNotString,
        "`run_identifier` is a number",
    );
}

#[test]
fn context_that_is_not_an_object() {
    for (context, message) in [
        (r#""[1]""#, "`context` is a string holding an array"),
        (r#""not json""#, "`context` is a string that is not JSON"),
        (r#""""#, "`context` is a string that is not JSON"),
        (r#""null""#, "`context` is a string holding null"),
        (r#""\"{}\"""#, "`context` is a string holding a string"),
        ("5", "`context` is a number"),
        ("[1]", "`context` is an array"),
        ("true", "`context` is a boolean"),
    ] {
        let text = format!(r#"{{"task": "t", "context": {context}}}"#);
        assert_call_error(&err(&text), ErrorKind::ContextNotObject, message);
    }
    assert_eq!(
        ErrorKind::ContextNotObject.to_string(),
        "`context` must be a JSON object or a string holding one"
    );
}

/// `{"task": "t", "a": [[...[]...]]}` nested `depth` levels in all (the kwargs object is 1).
fn nested_kwargs(depth: usize) -> String {
    let inner = depth - 1;
    format!(
        r#"{{"task": "t", "a": {}{}}}"#,
        "[".repeat(inner),
        "]".repeat(inner)
    )
}

fn too_deep(e: &RetryError) {
    assert_call_error(
        e,
        ErrorKind::TooDeep { limit: 64 },
        "Input nesting exceeds the depth limit of 64",
    );
}

#[test]
fn depth_64_is_accepted_and_65_is_not() {
    let ok = call(&nested_kwargs(64));
    assert_eq!(ok.context().as_object().unwrap().len(), 1);
    too_deep(&err(&nested_kwargs(65)));

    // Objects count like arrays, and so does the parsed-value path.
    let objects = |depth: usize| {
        format!(
            r#"{{"task": "t", "a": {}1{}}}"#,
            r#"{"k": "#.repeat(depth - 1),
            "}".repeat(depth - 1)
        )
    };
    call(&objects(64));
    too_deep(&err(&objects(65)));
    for (depth, accepted) in [(64, true), (65, false)] {
        // Built by hand: serde_json's own recursion limit (128) is not what is tested here.
        let mut value = json!(1);
        for _ in 0..depth - 1 {
            value = json!([value]);
        }
        let kwargs = json!({"task": "t", "a": value});
        match ToolCall::from_value(kwargs, &Limits::default()) {
            Ok(_) => assert!(accepted, "depth {depth} accepted"),
            Err(e) => {
                assert!(!accepted, "depth {depth} refused");
                too_deep(&e);
            }
        }
    }
}

#[test]
fn a_hundred_thousand_brackets_are_an_error_not_a_stack_overflow() {
    too_deep(&err(&"[".repeat(100_000)));
    too_deep(&err(&("[".repeat(100_000) + &"]".repeat(100_000))));
    too_deep(&err(&format!(
        r#"{{"task": "t", "a": {}}}"#,
        r#"{"a": "#.repeat(100_000)
    )));
    // Brackets inside strings are text, not nesting.
    let c = call(&format!(
        r#"{{"task": "t", "a": "{}"}}"#,
        "[".repeat(100_000)
    ));
    assert_eq!(c.context()["a"].as_str().unwrap().len(), 100_000);
}

#[test]
fn deep_nesting_inside_a_stringified_context_counts_like_an_object_context() {
    // The stringified context sits at level 1 of the kwargs, as an object context would.
    for depth in [63, 64, 65] {
        let object = format!("{}{}", "[".repeat(depth - 1), "]".repeat(depth - 1));
        let object = format!(r#"{{"a": {object}}}"#); // `depth` levels
        let direct = format!(r#"{{"task": "t", "context": {object}}}"#);
        let stringified = serde_json::to_string(&json!({"task": "t", "context": object})).unwrap();
        let accepted = depth < 64;
        for text in [&direct, &stringified] {
            match ToolCall::from_json_str(text, &agent_contracts::Limits::default()) {
                Ok(c) => {
                    assert!(accepted, "depth {depth} accepted: {text}");
                    assert_eq!(c.context().as_object().unwrap().len(), 1);
                }
                Err(e) => {
                    assert!(!accepted, "depth {depth} refused: {text}");
                    too_deep(&e);
                }
            }
        }
    }
    let hidden =
        serde_json::to_string(&json!({"task": "t", "context": "[".repeat(100_000)})).unwrap();
    too_deep(&err(&hidden));
    let value: Value = serde_json::from_str(&hidden).unwrap();
    too_deep(&ToolCall::from_value(value, &Limits::default()).unwrap_err());
}

#[test]
fn input_over_the_byte_limit() {
    let limits = Limits::default().with_max_bytes(1000);
    let sized = |len: usize| {
        let text = format!(r#"{{"task": "t", "a": "{}"}}"#, "x".repeat(len - 22));
        assert_eq!(text.len(), len);
        text
    };
    assert!(ToolCall::from_json_str(&sized(1000), &limits).is_ok());
    let e = ToolCall::from_json_str(&sized(1001), &limits).unwrap_err();
    assert_call_error(
        &e,
        ErrorKind::TooLarge {
            size: 1001,
            limit: 1000,
        },
        "Input of 1001 bytes exceeds the size limit of 1000 bytes",
    );
    // The size is checked before anything else: oversized garbage is "too large".
    let e = ToolCall::from_json_str(&"[".repeat(5000), &limits).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::TooLarge {
            size: 5000,
            limit: 1000
        }
    );
    // A smaller depth limit applies too.
    let shallow = Limits::default().with_max_depth(2);
    assert!(ToolCall::from_json_str(r#"{"task": "t", "a": [1]}"#, &shallow).is_ok());
    let e = ToolCall::from_json_str(r#"{"task": "t", "a": [[1]]}"#, &shallow).unwrap_err();
    assert_call_error(
        &e,
        ErrorKind::TooDeep { limit: 2 },
        "Input nesting exceeds the depth limit of 2",
    );
}

#[test]
fn the_retry_error_serializes_with_exactly_the_documented_keys() {
    let e = err("[1,2]");
    assert_eq!(
        serde_json::to_string(&e).unwrap(),
        concat!(
            r#"{"success":false,"error":"Tool call arguments must be a JSON object","#,
            r#""validation_message":"got an array","path":[],"required_fields":[],"#,
            r#""missing_fields":[],"provided_fields":[],"#,
            r#""hint":"Send the tool call arguments as one JSON object with a `task` string","#,
            r#""errors":[{"path":[],"message":"got an array"}]}"#
        )
    );
    assert_eq!(
        e.to_string(),
        "Tool call arguments must be a JSON object: got an array"
    );
}

#[test]
fn with_required_names_the_contract_fields_on_a_call_error() {
    let required = ["a".to_owned(), "b".to_owned()];
    let e = err(r#"{"task": 1}"#).with_required(&required);
    let json = e.to_json();
    assert_eq!(json["required_fields"], json!(["a", "b"]));
    assert_eq!(json["provided_fields"], json!([]));
    assert_eq!(json["error"], json!("`task` must be a string"));
}
