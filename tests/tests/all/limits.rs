//! Every limit on untrusted input is a clear retry error: nesting depth (checked without
//! recursion), input bytes, number of errors reported, bytes of any echoed value; building the
//! retry error takes a bounded number of errors whatever the input; and the rendered prompt
//! stays linear in the input.
//!
//! No timing assertions: speed is for the benches. Tests that would take unbounded time or
//! stack without the limits simply would not finish.

use agent_contracts::{
    Contract, DynAgent, Limits, RetryError, contract::ContractKind, contract::ErrorKind,
    contract::PathSegment, contract::ToolCall,
};
use serde_json::{Value, json};

fn plan_generator() -> &'static dyn DynAgent {
    agent_examples::agents::find("plan_generator_agent").expect("the plan generator is built in")
}

/// The items the plan generator's contract requires: a discovery and a selector output, each
/// valid for its agent's output contract.
fn required_items() -> Value {
    json!([
        {
            "agent_name": "discovery_agent",
            "description": "Discovered the form",
            "output": {"page_title": "Login", "discovered_elements": []}
        },
        {
            "agent_name": "selector_agent",
            "description": "Chose the selectors",
            "output": {"selectors": {}, "strategy": "id-first"}
        }
    ])
}

/// A valid plan generator call with `extra` merged in at the top level.
fn plan_kwargs(extra: Value) -> String {
    let mut kwargs = json!({
        "task": "Generate plan",
        "target_url": "https://myapp.com/login",
        "task_name": "login_form_automation",
        "collected_information": required_items()
    });
    if let (Value::Object(k), Value::Object(e)) = (&mut kwargs, extra) {
        k.extend(e);
    }
    kwargs.to_string()
}

fn contract(schema: Value) -> Contract {
    Contract::new("limits", ContractKind::Input, schema).unwrap()
}

/// `[[[ ... 1 ... ]]]`, `levels` arrays deep.
fn nested_arrays(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

// ---- nesting depth ------------------------------------------------------------------------

#[test]
fn depth_limit_is_exact_and_counts_the_call_object() {
    let limits = Limits::default();
    assert_eq!(limits.max_depth, 64);
    // The kwargs object is level 1: 63 arrays inside it reach 64, one more is too deep.
    let ok = format!(r#"{{"task": "t", "deep": {}}}"#, nested_arrays(63));
    assert!(ToolCall::from_json_str(&ok, &agent_contracts::Limits::default()).is_ok());
    let deep = format!(r#"{{"task": "t", "deep": {}}}"#, nested_arrays(64));
    let error = ToolCall::from_json_str(&deep, &agent_contracts::Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
    assert_eq!(error.error, "Input nesting exceeds the depth limit of 64");
    assert_eq!(error.hint, "Flatten the data: nest it less deeply");
    assert_eq!(error.errors.len(), 1);
}

#[test]
fn a_hundred_thousand_levels_cost_no_stack() {
    // serde_json would stop at 128 levels on its own; the depth scan runs before it and uses no
    // recursion, so this is the limit's error and not the parser's.
    let deep = format!(r#"{{"task": "t", "deep": {}}}"#, nested_arrays(100_000));
    let error = ToolCall::from_json_str(&deep, &agent_contracts::Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
    // Unbalanced text (never closed) is measured the same way.
    let open = format!(r#"{{"task": "t", "deep": {}"#, "{\"a\":".repeat(100_000));
    let error = ToolCall::from_json_str(&open, &agent_contracts::Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
    // Through an agent, the error names the contract's required fields.
    let error = plan_generator()
        .validate(&deep, &Limits::default())
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
    assert_eq!(
        error.required_fields,
        ["target_url", "task_name", "collected_information"]
    );
}

#[test]
fn a_stringified_context_counts_from_the_call_level() {
    let context = format!(r#"{{"deep": {}}}"#, nested_arrays(63));
    let kwargs = json!({"task": "t", "context": context}).to_string();
    let error = ToolCall::from_json_str(&kwargs, &agent_contracts::Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
    let context = format!(r#"{{"deep": {}}}"#, nested_arrays(62));
    let kwargs = json!({"task": "t", "context": context}).to_string();
    assert!(ToolCall::from_json_str(&kwargs, &agent_contracts::Limits::default()).is_ok());
}

#[test]
fn a_parsed_value_is_measured_iteratively() {
    // Building, measuring and dropping a deep `Value` all recurse in serde_json except the
    // measuring: the thread gets the stack the first and last need.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut deep = json!(1);
            for _ in 0..20_000 {
                deep = Value::Array(vec![deep]);
            }
            let kwargs = json!({"task": "t", "deep": deep});
            let error = ToolCall::from_value(kwargs, &Limits::default()).unwrap_err();
            assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
        })
        .unwrap()
        .join()
        .unwrap();
    let limits = Limits::default().with_max_depth(3);
    let ok = json!({"task": "t", "a": [[1]]});
    assert!(ToolCall::from_value(ok, &limits).is_ok());
    let deep = json!({"task": "t", "a": [[[1]]]});
    let error = ToolCall::from_value(deep, &limits).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 3 });
}

#[test]
fn an_answer_is_depth_checked_too() {
    let answer = format!("Here it is: {{\"a\": {}}}", nested_arrays(100_000));
    let error = agent_contracts::contract::extract_json(&answer, &Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooDeep { limit: 64 });
}

// ---- input bytes --------------------------------------------------------------------------

#[test]
fn input_bytes_limit() {
    let limits = Limits::default().with_max_bytes(1024);
    let exactly = format!(r#"{{"task": "{}"}}"#, "x".repeat(1024 - 12));
    assert_eq!(exactly.len(), 1024);
    assert!(ToolCall::from_json_str(&exactly, &limits).is_ok());
    let over = format!(r#"{{"task": "{}"}}"#, "x".repeat(1024 - 11));
    let error = ToolCall::from_json_str(&over, &limits).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::TooLarge {
            size: 1025,
            limit: 1024
        }
    );
    assert_eq!(
        error.error,
        "Input of 1025 bytes exceeds the size limit of 1024 bytes"
    );
    assert_eq!(
        error.hint,
        "Send less data: summarize or drop what the agent does not need"
    );
    // The size is checked before anything is parsed: text that is not even JSON gets the
    // same error.
    let junk = "{".repeat(2000);
    let error = ToolCall::from_json_str(&junk, &limits).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::TooLarge {
            size: 2000,
            limit: 1024
        }
    );
}

#[test]
fn the_default_size_limit_is_four_mebibytes() {
    let limits = Limits::default();
    assert_eq!(limits.max_bytes, 4 * 1024 * 1024);
    let over = format!(r#"{{"task": "{}"}}"#, "x".repeat(limits.max_bytes));
    let error = plan_generator().validate(&over, &limits).unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::TooLarge {
            size: over.len(),
            limit: limits.max_bytes
        }
    );
    // An oversized answer is refused the same way.
    let error = agent_contracts::contract::extract_json(&over, &limits).unwrap_err();
    assert!(matches!(error.kind, ErrorKind::TooLarge { .. }));
}

// ---- number of errors -----------------------------------------------------------------------

/// `n` invalid items of about 50 bytes each.
fn invalid_items(n: usize) -> String {
    let item = "this item should have been an integer, it is not";
    let items: Vec<&str> = vec![item; n];
    json!({"task": "t", "items": items}).to_string()
}

fn integer_items() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "integer"}}}
    })
}

#[test]
fn a_small_array_of_invalid_items_reports_exactly_max_errors() {
    let call = ToolCall::from_json_str(&invalid_items(5_000), &agent_contracts::Limits::default())
        .unwrap();
    let error = contract(integer_items())
        .check(call.context(), &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(error.errors.len(), Limits::default().max_errors);
    assert_eq!(error.errors.len(), 20);
    for (i, violation) in error.errors.iter().enumerate() {
        assert_eq!(
            violation.path,
            [PathSegment::Key("items".into()), PathSegment::Index(i)]
        );
        assert!(violation.message.ends_with("is not of type \"integer\""));
    }
    assert_eq!(error.hint, "Please fix the invalid fields: items");
    // A smaller limit is exact too.
    let limits = Limits::default().with_max_errors(3);
    let error = contract(integer_items())
        .check(call.context(), &limits)
        .unwrap_err();
    assert_eq!(error.errors.len(), 3);
}

#[test]
fn a_three_megabyte_array_of_invalid_items_reports_its_first_error_only() {
    // 60,000 failing items: the validator would gather 60,000 errors before handing out one,
    // so past 10,000 values the report is the first error, found by a pass that stops there.
    let kwargs = invalid_items(60_000);
    assert!(kwargs.len() > 3_000_000, "{} bytes", kwargs.len());
    let call = ToolCall::from_json_str(&kwargs, &agent_contracts::Limits::default()).unwrap();
    let error = contract(integer_items())
        .check(call.context(), &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(error.errors.len(), 1);
    assert_eq!(
        error.path,
        [PathSegment::Key("items".into()), PathSegment::Index(0)]
    );
    assert_eq!(error.hint, "Please fix the invalid fields: items");
}

#[test]
fn many_bad_fields_report_at_most_max_errors() {
    let mut properties = serde_json::Map::new();
    let mut instance = serde_json::Map::new();
    for i in 0..500 {
        properties.insert(format!("f{i}"), json!({"type": "string"}));
        instance.insert(format!("f{i}"), json!(i));
    }
    let schema = json!({"type": "object", "properties": properties});
    let error = contract(schema)
        .check(
            &Value::Object(instance),
            &agent_contracts::Limits::default(),
        )
        .unwrap_err();
    assert_eq!(error.errors.len(), 20);
    // The hint names the fields of the reported errors only.
    assert_eq!(error.hint.matches(", ").count(), 19);
}

// ---- bytes of echoed values -----------------------------------------------------------------

/// The longest text a retry error may hold from the caller: `max_echo_bytes` and the `…` that
/// marks a cut.
fn echo_bound(limits: &Limits) -> usize {
    limits.max_echo_bytes + '…'.len_utf8()
}

fn assert_bounded(error: &RetryError, limits: &Limits) {
    let echo = echo_bound(limits);
    for violation in &error.errors {
        assert!(
            violation.message.len() <= 2 * limits.max_echo_bytes + '…'.len_utf8(),
            "message of {} bytes",
            violation.message.len()
        );
        for segment in &violation.path {
            if let PathSegment::Key(key) = segment {
                assert!(key.len() <= echo, "path key of {} bytes", key.len());
            }
        }
    }
    for field in &error.provided_fields {
        assert!(
            field.len() <= echo,
            "provided field of {} bytes",
            field.len()
        );
    }
    assert!(error.provided_fields.len() <= limits.max_listed_fields);
    assert!(error.hint.len() <= 200 + limits.max_errors * (echo + 2));
}

#[test]
fn a_huge_value_is_echoed_within_the_bound() {
    let limits = Limits::default();
    let huge = "A".repeat(1_000_000);
    let schema = json!({
        "type": "object",
        "properties": {
            "level": {"enum": ["low", "high"]},
            "code": {"type": "string", "pattern": "^[a-z]+$"},
            "list": {"type": "array", "maxItems": 1},
            "n": {"type": "integer"}
        }
    });
    let instance = json!({
        "level": huge,
        "code": huge,
        "list": [huge, huge],
        "n": {"nested": huge}
    });
    let error = contract(schema)
        .check(&instance, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(error.errors.len(), 4);
    assert_bounded(&error, &limits);
    for violation in &error.errors {
        assert!(violation.message.contains("AAAA"), "{}", violation.message);
        assert!(violation.message.contains('…'), "{}", violation.message);
    }
    // The error as a whole stays small.
    assert!(error.to_json().to_string().len() < 8 * 1024);
}

#[test]
fn caller_keys_are_echoed_within_the_bound() {
    let limits = Limits::default();
    let long = "k".repeat(100_000);
    // Keys show up in `provided_fields`, in error paths under `additionalProperties`, in the
    // hint (the first path segment), and in the unexpected-property message.
    let schema = json!({
        "type": "object",
        "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number"}}},
        "additionalProperties": {"type": "number"}
    });
    let instance = json!({ long.clone(): "not a number", "scores": { long.clone(): "nan" } });
    let error = contract(schema)
        .check(&instance, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(error.errors.len(), 2);
    assert_bounded(&error, &limits);
    let cut = format!("{}…", "k".repeat(limits.max_echo_bytes));
    let paths: Vec<&[PathSegment]> = error.errors.iter().map(|v| v.path.as_slice()).collect();
    assert!(paths.contains(&[PathSegment::Key(cut.clone())].as_slice()));
    assert!(
        paths.contains(
            &[
                PathSegment::Key("scores".into()),
                PathSegment::Key(cut.clone())
            ]
            .as_slice()
        )
    );
    assert_eq!(error.provided_fields[0], cut);
    assert!(error.hint.contains(&cut) && error.hint.contains("scores"));

    let closed = json!({
        "type": "object",
        "properties": {"a": {}},
        "additionalProperties": false
    });
    let many: serde_json::Map<String, Value> = (0..1000)
        .map(|i| (format!("{i}{long}"), json!(1)))
        .collect();
    let error = contract(closed)
        .check(&Value::Object(many), &agent_contracts::Limits::default())
        .unwrap_err();
    assert_bounded(&error, &limits);
    assert_eq!(error.provided_fields.len(), limits.max_listed_fields);
    // The unexpected keys are listed within the bound.
    let message = &error.errors[0].message;
    assert!(
        message.starts_with("Additional properties are not allowed ('0kkk"),
        "{message}"
    );
    assert!(message.ends_with("were unexpected)"), "{message}");
}

#[test]
fn a_smaller_echo_bound_applies_everywhere() {
    let limits = Limits::default().with_max_echo_bytes(10);
    let schema = json!({
        "type": "object",
        "properties": {"name": {"const": "x"}},
        "additionalProperties": {"type": "string"}
    });
    let instance = json!({"name": "y".repeat(50), "a-key-longer-than-ten": 1});
    let error = contract(schema).check(&instance, &limits).unwrap_err();
    assert_bounded(&error, &limits);
    // A `Value` instance lists its keys sorted.
    assert_eq!(error.provided_fields, ["a-key-long…", "name"]);
    let paths: Vec<&[PathSegment]> = error.errors.iter().map(|v| v.path.as_slice()).collect();
    assert!(paths.contains(&[PathSegment::Key("a-key-long…".into())].as_slice()));
}

// ---- output size ----------------------------------------------------------------------------

/// The markdown of a value within the default limits (depth 64) is at most `K` times its JSON
/// (compact) plus a constant: `K` = 64 + 16. Deep nesting costs indentation per line, so the
/// worst inputs are deep and line-heavy; both are below.
const K: usize = 80;

#[test]
fn rendered_markdown_stays_linear_in_the_input() {
    let mut worst: f64 = 0.0;
    let mut check = |value: Value| {
        let json_len = value.to_string().len();
        let rendered = agent_contracts::prompt::to_markdown(&value).unwrap();
        assert!(
            rendered.len() <= K * json_len + 64,
            "{} bytes rendered from {json_len} bytes",
            rendered.len()
        );
        worst = worst.max(rendered.len() as f64 / json_len as f64);
    };
    // 63 levels of arrays, with a string of line breaks at the bottom (each `\n` is two bytes
    // of JSON and a line indented 128 columns deep).
    let mut deep = json!("\n".repeat(10_000));
    for _ in 0..63 {
        deep = Value::Array(vec![deep]);
    }
    check(deep);
    // 63 levels of objects with one-letter keys, and many empty arrays at the bottom.
    let mut deep = Value::Array(vec![json!([]); 10_000]);
    for _ in 0..63 {
        deep = json!({ "k": deep });
    }
    check(deep);
    // Wide and shallow.
    check(Value::Array(vec![json!([]); 100_000]));
    check(Value::Array(vec![json!(""); 100_000]));
    check(json!({"a": "\n#".repeat(100_000)}));
    assert!(worst > 1.0);
    println!("worst ratio of rendered to JSON bytes: {worst:.1} (bound {K})");
}

#[test]
fn a_plan_prompt_stays_linear_in_the_kwargs() {
    let mut output = json!("\n- x".repeat(20_000));
    for _ in 0..60 {
        output = Value::Array(vec![output]);
    }
    let mut items = required_items();
    if let Value::Array(items) = &mut items {
        items.push(json!({
            "agent_name": "data_prep_agent",
            "description": "\n".repeat(10_000),
            "output": {"deep": output}
        }));
    }
    let kwargs = plan_kwargs(json!({ "collected_information": items }));
    let prepared = plan_generator()
        .prepare(&kwargs, &Limits::default())
        .unwrap();
    assert!(prepared.user_prompt.len() <= K * kwargs.len() + 4096);
}
