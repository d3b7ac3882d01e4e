//! Input and output contracts of the plan generator: the retry error, exactly (spec items 2
//! and 7).

use agent_contracts::{Agent, AgentInput};
use agent_contracts::{
    Contract, RetryError, contract::ContractKind, contract::ErrorKind, contract::PathSegment,
    contract::ToolCall,
};
use agent_tests::{PlanGeneratorAgent, RETRY_KEYS};
use serde_json::{Value, json};

const OUTPUT_SCHEMA: &str =
    include_str!("../../../schemas/plan_generator_agent/output.schema.json");

/// The input contract as the agent has it: its sibling `$ref`s (each item's `output` to its
/// agent's output contract) bundled when the crate compiled.
fn input() -> &'static Contract {
    <<PlanGeneratorAgent as Agent>::Input as AgentInput>::input_contract()
}

fn output() -> Contract {
    Contract::from_json_str("plan_generator_agent", ContractKind::Output, OUTPUT_SCHEMA).unwrap()
}

fn schema() -> Value {
    input().schema().clone()
}

/// A property's description in the input schema, by JSON pointer.
fn described(pointer: &str) -> Value {
    schema()
        .pointer(pointer)
        .and_then(|node| node.get("description"))
        .cloned()
        .unwrap_or_else(|| panic!("no description at {pointer}"))
}

/// Checks the kwargs text's merged context against the input contract.
fn check_input(kwargs: &str) -> RetryError {
    let call = ToolCall::from_json_str(kwargs, &agent_contracts::Limits::default()).unwrap();
    input().check_call(&call, &Default::default()).unwrap_err()
}

/// The contract's retry error for `context` (JSON text) sent as a call, in the caller's order.
fn check_context(context: &str) -> RetryError {
    check_input(&format!(r#"{{"task": "t", "context": {context}}}"#))
}

fn keys(json: &Value) -> Vec<&str> {
    json.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// The error of a call without the discovery agent's output.
const CONTAINS_DISCOVERY: &str =
    "No item is the output of discovery_agent (an item whose agent_name is \"discovery_agent\")";

fn valid_context() -> Value {
    json!({
        "target_url": "https://myapp.com/login",
        "task_name": "login_form_automation",
        "collected_information": [
            {"agent_name": "discovery_agent", "description": "found it",
             "output": {"page_title": "Login", "discovered_elements": [{"a": 1}]}},
            {"agent_name": "selector_agent", "description": "chose them",
             "output": {"selectors": {"a": "#a"}, "strategy": "id-first"}}
        ]
    })
}

#[test]
fn the_schemas_compile_and_know_their_required_fields() {
    let c = input();
    assert_eq!(c.name(), "plan_generator_agent");
    assert_eq!(c.kind(), ContractKind::Input);
    assert_eq!(c.schema(), &schema());
    assert_eq!(
        c.required_fields(),
        ["target_url", "task_name", "collected_information"]
    );
    assert_eq!(output().kind(), ContractKind::Output);
    assert_eq!(
        output().required_fields(),
        ["plan_file_path", "status", "agent_response_content"]
    );
}

#[test]
fn a_valid_context_passes() {
    assert_eq!(
        input().check(&valid_context(), &agent_contracts::Limits::default()),
        Ok(())
    );
    let kwargs = include_str!("../../fixtures/plan_generator/kwargs.json");
    let call = ToolCall::from_json_str(kwargs, &agent_contracts::Limits::default()).unwrap();
    assert_eq!(
        input().check(call.context(), &agent_contracts::Limits::default()),
        Ok(())
    );
}

#[test]
fn only_a_task_lists_every_required_field_as_missing() {
    let e = check_input(r#"{"task": "Generate plan"}"#);
    assert_eq!(e.kind, ErrorKind::InputContract);
    let json = e.to_json();
    assert_eq!(keys(&json), RETRY_KEYS);
    let required = |field: &str| {
        json!({
            "path": [],
            "message": format!("\"{field}\" is a required property"),
            "description": described(&format!("/properties/{field}")),
        })
    };
    assert_eq!(
        json,
        json!({
            "success": false,
            "error": "Input contract validation failed",
            "validation_message": "\"target_url\" is a required property",
            "path": [],
            "required_fields": ["target_url", "task_name", "collected_information"],
            "missing_fields": ["target_url", "task_name", "collected_information"],
            "provided_fields": [],
            "hint": "Please provide all required fields: target_url, task_name, collected_information",
            "errors": [
                required("target_url"),
                required("task_name"),
                required("collected_information"),
            ],
        })
    );
    assert_eq!(
        e.to_string(),
        "Input contract validation failed: \"target_url\" is a required property"
    );
}

#[test]
fn missing_fields_are_in_schema_order_and_provided_fields_in_caller_order() {
    let e = check_input(
        r#"{"task": "t", "extra": 1, "collected_information": [], "run_identifier": "r"}"#,
    );
    assert_eq!(e.missing_fields, ["target_url", "task_name"]);
    assert_eq!(e.provided_fields, ["extra", "collected_information"]);
    assert_eq!(
        e.hint,
        "Please provide all required fields: target_url, task_name"
    );
}

#[test]
fn an_empty_collected_information_names_the_invalid_field() {
    let mut context = valid_context();
    context["collected_information"] = json!([]);
    let e = input()
        .check(&context, &agent_contracts::Limits::default())
        .unwrap_err();
    let json = e.to_json();
    assert_eq!(keys(&json), RETRY_KEYS);
    assert_eq!(
        json,
        json!({
            "success": false,
            "error": "Input contract validation failed",
            "validation_message": "[] has less than 1 item",
            "path": ["collected_information"],
            "required_fields": ["target_url", "task_name", "collected_information"],
            "missing_fields": [],
            // A `Value` checked on its own lists its keys sorted (see `check_call`).
            "provided_fields": ["collected_information", "target_url", "task_name"],
            "hint": "Please fix the invalid fields: collected_information",
            "errors": [{
                "path": ["collected_information"],
                "message": "[] has less than 1 item",
                "description": described("/properties/collected_information"),
            }, {
                "path": ["collected_information"],
                "message": CONTAINS_DISCOVERY,
                "description": described("/properties/collected_information"),
            }, {
                "path": ["collected_information"],
                "message": "No item is the output of selector_agent (an item whose agent_name is \"selector_agent\")",
                "description": described("/properties/collected_information"),
            }],
        })
    );
}

#[test]
fn a_bad_agent_name_is_located_and_described_through_the_ref() {
    let mut context = valid_context();
    context["collected_information"][0]["agent_name"] = json!("bogus_agent");
    let e = input()
        .check(&context, &agent_contracts::Limits::default())
        .unwrap_err();
    let message =
        r#""bogus_agent" is not one of "discovery_agent", "selector_agent" or 2 other candidates"#;
    assert_eq!(
        e.to_json(),
        json!({
            "success": false,
            "error": "Input contract validation failed",
            "validation_message": message,
            "path": ["collected_information", 0, "agent_name"],
            "required_fields": ["target_url", "task_name", "collected_information"],
            "missing_fields": [],
            // A `Value` checked on its own lists its keys sorted (see `check_call`).
            "provided_fields": ["collected_information", "target_url", "task_name"],
            "hint": "Please fix the invalid fields: collected_information",
            "errors": [{
                "path": ["collected_information", 0, "agent_name"],
                "message": message,
                "description": "Identifier of the source agent",
            }, {
                // The contract requires an item from the discovery agent (`contains`): the
                // message says which, never the whole array.
                "path": ["collected_information"],
                "message": CONTAINS_DISCOVERY,
                "description": described("/properties/collected_information"),
            }],
        })
    );
    assert_eq!(
        e.path,
        [
            PathSegment::Key("collected_information".into()),
            PathSegment::Index(0),
            PathSegment::Key("agent_name".into()),
        ]
    );
}

#[test]
fn a_missing_nested_field_is_described_by_its_own_property() {
    let mut context = valid_context();
    context["collected_information"][0]
        .as_object_mut()
        .unwrap()
        .remove("output");
    let e = input()
        .check(&context, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(e.missing_fields, Vec::<String>::new());
    assert_eq!(
        serde_json::to_value(&e.errors).unwrap(),
        json!([{
            "path": ["collected_information", 0],
            "message": "\"output\" is a required property",
            "description": described("/$defs/agentOutput/properties/output"),
        }])
    );
    assert_eq!(
        e.hint,
        "Please fix the invalid fields: collected_information"
    );
}

#[test]
fn several_invalid_fields_are_all_named_once_in_order() {
    let e = check_context(
        r#"{
            "target_url": "",
            "task_name": 7,
            "collected_information": [
                {"agent_name": "bogus_agent", "description": "d", "output": {}},
                {"agent_name": "selector_agent", "description": "d", "output": []}
            ]
        }"#,
    );
    assert_eq!(
        e.hint,
        "Please fix the invalid fields: target_url, task_name, collected_information"
    );
    let summary: Vec<(Value, &str, Option<&str>)> = e
        .errors
        .iter()
        .map(|v| {
            (
                serde_json::to_value(&v.path).unwrap(),
                v.message.as_str(),
                v.description.as_deref(),
            )
        })
        .collect();
    let output_description = described("/$defs/agentOutput/properties/output");
    assert_eq!(
        summary,
        [
            (
                json!(["target_url"]),
                r#""" is shorter than 1 character"#,
                described("/properties/target_url").as_str()
            ),
            (
                json!(["task_name"]),
                r#"7 is not of type "string""#,
                described("/properties/task_name").as_str()
            ),
            (
                json!(["collected_information", 0, "agent_name"]),
                r#""bogus_agent" is not one of "discovery_agent", "selector_agent" or 2 other candidates"#,
                Some("Identifier of the source agent")
            ),
            // Once, though both the field's own `type` and the selector's output contract
            // (tied to the item by its `agent_name`) refuse it.
            (
                json!(["collected_information", 1, "output"]),
                r#"[] is not of type "object""#,
                output_description.as_str()
            ),
            (
                json!(["collected_information"]),
                CONTAINS_DISCOVERY,
                described("/properties/collected_information").as_str()
            ),
        ]
    );
}

#[test]
fn at_most_twenty_errors_are_listed() {
    let items: Vec<Value> = (0..30)
        .map(|i| json!({"agent_name": format!("bogus_{i}"), "description": "d", "output": {}}))
        .collect();
    let mut context = valid_context();
    context["collected_information"] = Value::Array(items);
    let e = input()
        .check(&context, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(e.errors.len(), 20);
    for (i, v) in e.errors.iter().enumerate() {
        assert_eq!(
            serde_json::to_value(&v.path).unwrap(),
            json!(["collected_information", i, "agent_name"])
        );
        assert_eq!(
            v.message,
            format!(
                r#""bogus_{i}" is not one of "discovery_agent", "selector_agent" or 2 other candidates"#
            )
        );
    }
    assert_eq!(e.validation_message, e.errors[0].message);
    assert_eq!(
        e.hint,
        "Please fix the invalid fields: collected_information"
    );
}

/// Every message of `e` is bounded and none holds more than 200 bytes of `value`.
fn assert_echo_bounded(e: &RetryError, value: &str) {
    let json = serde_json::to_string(e).unwrap();
    assert!(json.len() < 4 * 1024, "retry error of {} bytes", json.len());
    let echoed = &value[..201];
    let messages = e
        .errors
        .iter()
        .map(|v| v.message.as_str())
        .chain([e.validation_message.as_str(), e.hint.as_str()]);
    for message in messages {
        assert!(message.len() <= 600, "message of {} bytes", message.len());
        assert!(
            !message.contains(echoed),
            "echoes over 200 bytes: {message:.100}…"
        );
    }
}

#[test]
fn a_huge_wrong_value_is_not_echoed() {
    let huge = "x".repeat(10 * 1024);
    let mut context = valid_context();
    context["collected_information"] = json!(huge);
    let e = input()
        .check(&context, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_echo_bounded(&e, &huge);
    let prefix = format!("\"{}…", &huge[..199]);
    assert_eq!(
        e.validation_message,
        format!(r#"{prefix} is not of type "array""#)
    );
    assert_eq!(
        serde_json::to_value(&e.path).unwrap(),
        json!(["collected_information"])
    );

    // In an enum, nested, and a huge array or object where a string is expected.
    let mut context = valid_context();
    context["collected_information"][0]["agent_name"] = json!(huge);
    context["target_url"] = json!(vec![huge.as_str(); 3]);
    context["task_name"] = json!({ huge.as_str(): 1 });
    let e = input()
        .check(&context, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(e.errors.len(), 4);
    assert_echo_bounded(&e, &huge);
    for v in &e.errors {
        assert!(
            v.message.contains('…') || v.message == CONTAINS_DISCOVERY,
            "{}",
            v.message
        );
    }
}

#[test]
fn a_huge_unexpected_key_is_not_echoed() {
    let huge = "k".repeat(10 * 1024);
    let answer = json!({
        "plan_file_path": "plans/a.md",
        "status": "success",
        "agent_response_content": "done",
        huge.as_str(): 1,
    });
    let e = output()
        .check(&answer, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(e.errors.len(), 1);
    assert_echo_bounded(&e, &huge);
    assert_eq!(
        e.validation_message,
        format!(
            "Additional properties are not allowed ('{}… was unexpected)",
            "k".repeat(199)
        )
    );
    // The key is caller text in `provided_fields` too (listed in the `Value`'s sorted order).
    assert_eq!(
        e.provided_fields,
        [
            "agent_response_content".to_owned(),
            format!("{}…", "k".repeat(200)),
            "plan_file_path".to_owned(),
            "status".to_owned(),
        ]
    );
}

#[test]
fn many_unexpected_keys_are_listed_within_the_bound() {
    let mut answer = json!({
        "plan_file_path": "plans/a.md",
        "status": "success",
        "agent_response_content": "done",
        "x": 1,
        "y": 2,
    });
    let e = output()
        .check(&answer, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(
        e.validation_message,
        "Additional properties are not allowed ('x', 'y' were unexpected)"
    );
    for i in 0..100 {
        answer[format!("extra_{i:04}")] = json!(i);
    }
    let e = output()
        .check(&answer, &agent_contracts::Limits::default())
        .unwrap_err();
    // In the `Value`'s sorted order.
    let list: String = (0..100)
        .map(|i| format!("'extra_{i:04}'"))
        .chain(["'x'".to_owned(), "'y'".to_owned()])
        .collect::<Vec<_>>()
        .join(", ");
    assert_eq!(
        e.validation_message,
        format!(
            "Additional properties are not allowed ({}… were unexpected)",
            &list[..200]
        )
    );
}

#[test]
fn a_huge_key_failing_property_names_is_masked() {
    let contract = Contract::new(
        "keys",
        ContractKind::Input,
        json!({"type": "object", "propertyNames": {"maxLength": 3}}),
    )
    .unwrap();
    let huge = "k".repeat(10 * 1024);
    let e = contract
        .check(
            &json!({ huge.as_str(): 1 }),
            &agent_contracts::Limits::default(),
        )
        .unwrap_err();
    assert_echo_bounded(&e, &huge);
    assert_eq!(
        e.validation_message,
        format!("\"{}… is longer than 3 characters", "k".repeat(199))
    );
}

#[test]
fn a_wrong_answer_breaks_the_output_contract() {
    let answer = json!({"plan_file_path": "", "status": "done", "extra": 1});
    let e = output()
        .check(&answer, &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutputContract);
    let output_schema: Value = serde_json::from_str(OUTPUT_SCHEMA).unwrap();
    let describe = |field: &str| output_schema["properties"][field]["description"].clone();
    let json = e.to_json();
    assert_eq!(keys(&json), RETRY_KEYS);
    assert_eq!(
        json,
        json!({
            "success": false,
            "error": "Output contract validation failed",
            "validation_message": "\"agent_response_content\" is a required property",
            "path": [],
            "required_fields": ["plan_file_path", "status", "agent_response_content"],
            "missing_fields": ["agent_response_content"],
            "provided_fields": ["extra", "plan_file_path", "status"],
            "hint": "Please provide all required fields: agent_response_content",
            "errors": [
                {
                    "path": [],
                    "message": "\"agent_response_content\" is a required property",
                    "description": describe("agent_response_content"),
                },
                {
                    "path": ["plan_file_path"],
                    "message": r#""" is shorter than 1 character"#,
                    "description": describe("plan_file_path"),
                },
                {
                    "path": ["status"],
                    "message": r#""done" is not one of "success", "partial" or "failed""#,
                    "description": describe("status"),
                },
                {
                    "path": [],
                    "message": "Additional properties are not allowed ('extra' was unexpected)",
                    "description": output_schema["description"],
                },
            ],
        })
    );
}

#[test]
fn an_answer_that_is_not_an_object_breaks_the_output_contract() {
    let e = output()
        .check(&json!("plans/a.md"), &agent_contracts::Limits::default())
        .unwrap_err();
    assert_eq!(
        e.to_json(),
        json!({
            "success": false,
            "error": "Output contract validation failed",
            "validation_message": r#""plans/a.md" is not of type "object""#,
            "path": [],
            "required_fields": ["plan_file_path", "status", "agent_response_content"],
            "missing_fields": ["plan_file_path", "status", "agent_response_content"],
            "provided_fields": [],
            "hint": "Please provide all required fields: plan_file_path, status, agent_response_content",
            "errors": [{
                "path": [],
                "message": r#""plans/a.md" is not of type "object""#,
                "description": serde_json::from_str::<Value>(OUTPUT_SCHEMA).unwrap()["description"],
            }],
        })
    );
}

#[test]
fn a_right_answer_passes_the_output_contract() {
    let answer = json!({
        "plan_file_path": "plans/login_form_automation.md",
        "status": "partial",
        "agent_response_content": "Plan written; two steps lack selectors."
    });
    assert_eq!(
        output().check(&answer, &agent_contracts::Limits::default()),
        Ok(())
    );
}

#[test]
fn a_deserialize_error_has_the_same_shape() {
    let context = valid_context();
    let serde_error = serde_json::from_str::<u8>("\"x\"").unwrap_err();
    let e = input().deserialize_error(&context, &serde_error, &agent_contracts::Limits::default());
    let json = e.to_json();
    assert_eq!(keys(&json), RETRY_KEYS);
    assert_eq!(json["error"], json!("Input contract validation failed"));
    assert_eq!(
        json["validation_message"],
        json!("invalid type: string \"x\", expected u8 at line 1 column 3")
    );
    assert_eq!(json["missing_fields"], json!([]));
    assert_eq!(
        json["hint"],
        json!("Please fix the call so that it matches the contract; see `errors`")
    );
}

#[test]
fn a_broken_schema_is_a_contract_error_not_a_panic() {
    let not_json = Contract::from_json_str("x", ContractKind::Input, "{").unwrap_err();
    assert!(
        not_json
            .to_string()
            .starts_with("contract `x`: schema is not valid JSON: "),
        "{not_json}"
    );
    let invalid = Contract::new("x", ContractKind::Input, json!({"type": 5})).unwrap_err();
    assert!(
        invalid.to_string().starts_with("contract `x`: "),
        "{invalid}"
    );
    let remote = Contract::new(
        "x",
        ContractKind::Input,
        json!({"$ref": "https://example.com/schema.json"}),
    );
    assert!(remote.is_err(), "a remote $ref must not be fetched");
}
