//! The plan generator's markdown path by hand (no derive): kwargs in, golden prompt out.

use agent_contracts::__private::askama::Template;
use agent_contracts::RawObject;
use agent_contracts::contract::ToolCall;
use agent_contracts::prompt::filters;
use serde::Deserialize;

/// An output the contract leaves untyped is a `RawObject`: the sub-agent's JSON as written.
#[derive(Deserialize)]
struct Item {
    agent_name: String,
    description: String,
    output: RawObject,
}

#[derive(Deserialize)]
struct Input {
    target_url: String,
    task_name: String,
    collected_information: Vec<Item>,
}

#[derive(Template)]
#[template(path = "agents/plan_generator_user.md", escape = "none", askama = agent_contracts::__private::askama)]
struct Prompt<'a> {
    task: &'a str,
    target_url: &'a str,
    task_name: &'a str,
    collected_information: Vec<Item>,
}

#[test]
fn hand_written_template_gives_the_golden_prompt() {
    let kwargs = include_str!("../../fixtures/plan_generator/kwargs.json");
    let call = ToolCall::from_json_str(kwargs, &agent_contracts::Limits::default()).unwrap();
    let input: Input = call.deserialize_context().unwrap();
    let prompt = Prompt {
        task: &call.task,
        target_url: &input.target_url,
        task_name: &input.task_name,
        collected_information: input.collected_information,
    };
    let rendered = prompt.render().unwrap();
    let expected = include_str!("../../fixtures/plan_generator/expected_user_prompt.md");
    if rendered != expected {
        std::fs::write("/tmp/rendered.md", &rendered).unwrap();
    }
    assert_eq!(rendered, expected);
}
