//! A catastrophic pattern (`^(a+)+$`) on a long input (100,000 `a`s and a `b`) is refused in
//! linear time, both by the validator (`Contract`) and by the generated type (the derive's
//! newtype calls `agent_contracts::__private::regress::Regex`, backed by the linear-time `regex`
//! crate). A backtracking engine would take about 2^100,000 steps here: that these tests
//! finish at all is the point. No timing assertions.

use agent_contracts::{Contract, DynAgent, Limits, contract::ContractKind, contract::PathSegment};
use serde_json::{Value, json};

/// Takes a word made of `a`s.
#[derive(agent_contracts::Agent)]
#[agent(
    name = "regex_agent",
    description = "Takes a word made of a's",
    input = "fixtures/regex_linear/input.schema.json"
)]
pub struct RegexAgent;

const SCHEMA: &str = include_str!("../../fixtures/regex_linear/input.schema.json");

fn evil() -> String {
    format!("{}b", "a".repeat(100_000))
}

#[test]
fn the_validator_refuses_it_in_linear_time() {
    let contract = Contract::from_json_str("regex", ContractKind::Input, SCHEMA).unwrap();
    let error = contract
        .check(
            &json!({ "word": evil() }),
            &agent_contracts::Limits::default(),
        )
        .unwrap_err();
    assert_eq!(error.errors.len(), 1);
    assert_eq!(error.path, [PathSegment::Key("word".into())]);
    assert!(
        error
            .validation_message
            .contains("does not match \"^(a+)+$\""),
        "{}",
        error.validation_message
    );
    // The echo is cut: 200 bytes of the 100,001.
    assert!(error.validation_message.len() < 500);
    assert!(
        contract
            .check(
                &json!({ "word": "a".repeat(100_000) }),
                &agent_contracts::Limits::default()
            )
            .is_ok()
    );
}

#[test]
fn the_generated_type_refuses_it_in_linear_time() {
    type Input = regex_agent::RegexAgentInput;
    let refused = serde_json::from_value::<Input>(json!({ "word": evil() })).unwrap_err();
    assert!(
        refused.to_string().contains("doesn't match pattern"),
        "{refused}"
    );
    let accepted: Input = serde_json::from_value(json!({ "word": "a".repeat(100_000) })).unwrap();
    assert_eq!(accepted.word.len(), 100_000);
    // The newtype checks on construction too.
    assert!(regex_agent::input::RegexAgentInputWord::try_from(evil()).is_err());
    assert!(regex_agent::input::RegexAgentInputWord::try_from("aaa".to_owned()).is_ok());
}

#[test]
fn a_call_through_the_agent_is_a_retry_error() {
    let kwargs = json!({ "task": "t", "word": evil() }).to_string();
    let error = RegexAgent
        .validate(&kwargs, &Limits::default())
        .unwrap_err();
    assert_eq!(error.error, "Input contract validation failed");
    assert_eq!(error.hint, "Please fix the invalid fields: word");
    let ok = json!({ "task": "t", "word": "aaaa" }).to_string();
    assert!(RegexAgent.validate(&ok, &Limits::default()).is_ok());
}

#[test]
fn pattern_properties_keys_are_linear_too() {
    let schema = json!({
        "type": "object",
        "patternProperties": { "^(a+)+$": { "type": "integer" } },
        "additionalProperties": false
    });
    let contract = Contract::new("keys", ContractKind::Input, schema).unwrap();
    let mut instance = serde_json::Map::new();
    instance.insert(evil(), json!(1));
    assert!(
        contract
            .check(
                &Value::Object(instance),
                &agent_contracts::Limits::default()
            )
            .is_err()
    );
    let mut instance = serde_json::Map::new();
    instance.insert("a".repeat(100_000), json!(1));
    assert!(
        contract
            .check(
                &Value::Object(instance),
                &agent_contracts::Limits::default()
            )
            .is_ok()
    );
}
