//! Hostile calls and contracts, each with a minimal input: too many values, a prompt that
//! outgrows its call, numbers no `f64` holds, and schemas whose validation would never end or
//! would branch without bound. Each gets a clear error; nothing crashes.

use agent_contracts::contract::ToolCall;
use agent_contracts::{Contract, contract::ContractKind};
use agent_contracts::{DynAgent, Limits};
use agent_contracts::{contract::ErrorKind, contract::PathSegment};
use agent_tests::{DiscoveryAgent, KWARGS, PlanGeneratorAgent};
use serde_json::{Value, json};

fn contract(schema: Value) -> Result<Contract, String> {
    Contract::new("hostile", ContractKind::Input, schema).map_err(|e| e.to_string())
}

#[test]
fn a_call_of_millions_of_empty_objects_is_refused_before_validation() {
    // Within the byte limit, but 1.3 million values: refused by the value count.
    let items = vec!["{}"; 1_300_000].join(",");
    let kwargs = format!(r#"{{"task": "t", "collected_information": [{items}]}}"#);
    assert!(kwargs.len() <= Limits::default().max_bytes);
    let error = ToolCall::from_json_str(&kwargs, &agent_contracts::Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooManyValues { limit: 250_000 });
    assert_eq!(
        error.error, "Input holds more than 250000 JSON values",
        "{error}"
    );
}

#[test]
fn a_prompt_that_outgrows_its_call_is_a_retry_error() {
    // Legal nesting (60 levels) repeated: every level indents the lines under it.
    let mut deep = json!("x");
    for _ in 0..60 {
        deep = json!([deep]);
    }
    let mut kwargs: serde_json::Map<String, Value> = serde_json::from_str(KWARGS).unwrap();
    // Beside the fixture's own items; an agent without an output contract of its own.
    let item = json!({"agent_name": "data_prep_agent", "description": "deep",
                      "output": {"tree": deep}});
    let Some(Value::Array(items)) = kwargs.get_mut("collected_information") else {
        panic!("the fixture collects items");
    };
    items.extend(vec![item; 400]);
    let kwargs = Value::Object(kwargs).to_string();
    let limits = Limits::default().with_max_prompt_bytes(1024 * 1024);
    let error = PlanGeneratorAgent.prepare(&kwargs, &limits).unwrap_err();
    let agent_contracts::contract::PrepareError::Retry(error) = error else {
        panic!("expected a retry error, got {error}");
    };
    assert!(
        matches!(error.kind, ErrorKind::PromptTooLarge { limit: 1_048_576, size } if size > 1_048_576),
        "{error}"
    );
    // Within the default limit the same call renders.
    PlanGeneratorAgent
        .prepare(&kwargs, &Limits::default())
        .unwrap();
}

#[test]
fn a_number_no_double_holds_is_a_retry_error_naming_its_path() {
    let kwargs = r#"{"task": "t", "target_url": "https://a.example", "limits": {"max": 1e400}}"#;
    let error = DiscoveryAgent
        .validate(kwargs, &Limits::default())
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::NumberOutOfRange);
    assert_eq!(
        error.path,
        [
            PathSegment::Key("limits".into()),
            PathSegment::Key("max".into())
        ]
    );
    assert_eq!(
        error.validation_message,
        "the number at `/limits/max` is out of range: a JSON number must be a finite double"
    );
    // Negative too, and in an answer.
    let answer = r#"{"page_title": "A", "discovered_elements": [], "forms_detected": -1e400}"#;
    let error = agent_contracts::contract::extract_json(answer, &Limits::default()).unwrap_err();
    assert_eq!(error.kind, ErrorKind::NumberOutOfRange);
    assert_eq!(error.path, [PathSegment::Key("forms_detected".into())]);
}

#[test]
fn a_pure_ref_cycle_is_refused_when_the_contract_is_built() {
    let error = contract(json!({
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}
    }))
    .unwrap_err();
    assert!(
        error.contains("refers back to itself through `#/$defs/"),
        "{error}"
    );
}

#[test]
fn self_reference_at_the_root_is_refused_but_a_self_property_is_not() {
    for schema in [
        json!({"type": "object", "$ref": "#", "properties": {"a": {"type": "string"}}}),
        json!({"type": "object", "allOf": [{"$ref": "#"}]}),
    ] {
        let error = contract(schema).unwrap_err();
        assert!(error.contains("`#` refers back to itself"), "{error}");
    }
    let tree = contract(json!({"type": "object", "properties": {"self": {"$ref": "#"}}})).unwrap();
    let nested = json!({"self": {"self": {"self": {}}}});
    tree.check(&nested, &agent_contracts::Limits::default())
        .unwrap();
}

#[test]
fn shared_branches_that_multiply_are_refused() {
    let mut defs = serde_json::Map::new();
    for i in 0..20 {
        let next = format!("#/$defs/l{}", i + 1);
        defs.insert(
            format!("l{i}"),
            json!({"oneOf": [{"$ref": next}, {"$ref": next, "description": "again"}]}),
        );
    }
    defs.insert("l20".into(), json!({"type": "integer"}));
    let error = contract(
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/l0"}},
                                 "$defs": defs}),
    )
    .unwrap_err();
    assert!(error.contains("evaluation paths"), "{error}");
    // The same branch twice is refused outright.
    let error = contract(json!({"anyOf": [{"type": "string", "minLength": 1},
                                          {"type": "string", "minLength": 1}]}))
    .unwrap_err();
    assert!(error.contains("lists the same branch twice"), "{error}");
}
