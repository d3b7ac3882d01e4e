//! serde_json behaves in a user's crate as it does without agent-core. Each of these fails
//! when serde_json's `arbitrary_precision` feature is on (numbers then travel through serde as
//! a private map, which the buffering of `untagged`, `tag` and `flatten` does not undo).

use serde::Deserialize;
use std::collections::BTreeMap;

/// A provider SDK's kind of type: the same field as a number or as text.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum Amount {
    Number(f64),
    Text(String),
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Usage { input_tokens: u64, cost: f64 },
    Stop { reason: String },
}

#[derive(Debug, Deserialize, PartialEq)]
struct Scores {
    name: String,
    #[serde(flatten)]
    scores: BTreeMap<String, f64>,
}

#[test]
fn an_untagged_enum_takes_a_number() {
    let amounts: Vec<Amount> = serde_json::from_str(r#"[0.60, "a lot", 7]"#).unwrap();
    assert_eq!(
        amounts,
        [
            Amount::Number(0.6),
            Amount::Text("a lot".into()),
            Amount::Number(7.0)
        ]
    );
}

#[test]
fn an_internally_tagged_enum_takes_numbers() {
    let event: Event =
        serde_json::from_str(r#"{"type": "usage", "input_tokens": 12, "cost": 0.002}"#).unwrap();
    assert_eq!(
        event,
        Event::Usage {
            input_tokens: 12,
            cost: 0.002
        }
    );
}

#[test]
fn a_flattened_map_takes_numbers() {
    let scores: Scores =
        serde_json::from_str(r#"{"name": "run 1", "recall": 0.9, "precision": 1e-3}"#).unwrap();
    assert_eq!(scores.name, "run 1");
    assert_eq!(
        scores.scores,
        BTreeMap::from([("precision".to_owned(), 0.001), ("recall".to_owned(), 0.9)])
    );
}

#[test]
fn the_same_build_still_renders_numbers_as_written() {
    // The reason agent-core once turned those features on: numbers and key order in prompts.
    // They come from the text now.
    let call = agent_contracts::contract::ToolCall::from_json_str(
        r#"{"task": "t", "z": 0.60, "a": [1e5, 0.000001]}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let raw: agent_contracts::RawJson =
        serde_json::from_str(r#"{"z": 0.60, "a": [1e5, 0.000001]}"#).unwrap();
    assert_eq!(
        agent_contracts::prompt::to_markdown(&raw).unwrap(),
        "- **z**: 0.60\n- **a**:\n  - 1e5\n  - 0.000001"
    );
    assert_eq!(
        agent_contracts::__private::default_call_prompt(&call),
        "t\n\n## Context\n```json\n{\n  \"z\": 0.60,\n  \"a\": [\n    1e5,\n    0.000001\n  ]\n}\n```"
    );
}
