//! The plan generator's markdown path by hand (no derive): kwargs in, golden prompt out.

use agent_core::__private::askama::Template;
use agent_core::kwargs::ToolCall;
use agent_core::prompt::filters;
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize)]
struct Item {
    agent_name: String,
    description: String,
    output: Map<String, Value>,
}

#[derive(Template)]
#[template(path = "agents/plan_generator_user.md", escape = "none", askama = agent_core::__private::askama)]
struct Prompt<'a> {
    task: &'a str,
    target_url: &'a str,
    task_name: &'a str,
    collected_information: Vec<Item>,
}

#[test]
fn hand_written_template_gives_the_golden_prompt() {
    let kwargs = include_str!("../fixtures/plan_generator/kwargs.json");
    let call = ToolCall::from_json_str(kwargs).unwrap();
    let ctx = call.context_map();
    let prompt = Prompt {
        task: &call.task,
        target_url: ctx["target_url"].as_str().unwrap(),
        task_name: ctx["task_name"].as_str().unwrap(),
        collected_information: Vec::<Item>::deserialize(&ctx["collected_information"]).unwrap(),
    };
    let rendered = prompt.render().unwrap();
    let expected = include_str!("../fixtures/plan_generator/expected_user_prompt.md");
    if rendered != expected {
        std::fs::write("/tmp/rendered.md", &rendered).unwrap();
    }
    assert_eq!(rendered, expected);
}
