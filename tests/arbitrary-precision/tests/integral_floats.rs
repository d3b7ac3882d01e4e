//! With `arbitrary_precision` on, integral floats still fill integer fields (the validator
//! accepts them, so the typed read must), and fractional ones are still refused at their path.

use agent_arbitrary_precision::Integers;
use agent_contracts::{Agent, AgentInput, Limits, contract::PathSegment, contract::ToolCall};
use serde_json::{Value, json};

fn typed(context: &Value) -> Result<Value, agent_contracts::RetryError> {
    let mut kwargs = context.as_object().expect("an object").clone();
    kwargs.insert("task".into(), json!("t"));
    let call = ToolCall::from_json_str(&Value::Object(kwargs).to_string(), &Limits::default())?;
    // The contract check and the typed read, as a call runs them.
    let input = <Integers as Agent>::Input::from_call(&call, &Limits::default())?;
    Ok(serde_json::to_value(&input).expect("typed input serializes"))
}

#[test]
fn the_feature_is_on_in_this_build() {
    // Under `arbitrary_precision` a number keeps its text: `2.0` stays `2.0`.
    let number: serde_json::Number = serde_json::from_str("2.0").unwrap();
    assert_eq!(number.to_string(), "2.0");
    let big = "123456789012345678901234567890";
    assert_eq!(serde_json::from_str::<Value>(big).unwrap().to_string(), big);
}

#[test]
fn integral_floats_fill_integer_fields_everywhere() {
    let context = json!({
        "service_id": 2.0, "small": 7.0, "count": 3.0, "ids": [0, 1.0, 2],
        "scores": {"a": 2.0, "b": 5}, "either": 4.0, "one_of": 6.0,
        "nested": {"port": 8080.0, "weight": 0.5}, "choice": 2.0, "retries": 1.0
    });
    let back = typed(&context).unwrap_or_else(|e| panic!("refused: {}", e.to_json()));
    assert_eq!(
        back,
        json!({
            "service_id": 2, "small": 7, "count": 3, "ids": [0, 1, 2],
            "scores": {"a": 2, "b": 5}, "either": 4, "one_of": 6,
            "nested": {"port": 8080, "weight": 0.5}, "retries": 1,
            // An `enum` of numbers is not typed as an integer: its value is kept as written.
            "choice": 2.0
        })
    );
}

#[test]
fn fractional_values_are_refused_at_their_path() {
    let error = typed(&json!({"service_id": 2.5})).unwrap_err();
    assert_eq!(error.path, [PathSegment::Key("service_id".into())]);
    let error = typed(&json!({"service_id": 1, "ids": [1, 1.5]})).unwrap_err();
    assert_eq!(
        error.path,
        [PathSegment::Key("ids".into()), PathSegment::Index(1)]
    );
}
