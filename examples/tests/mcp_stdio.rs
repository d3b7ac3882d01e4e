//! `agent-contract mcp` over stdio, driven by rmcp's client as a child process: the tools, a
//! retry error as an `isError` result, a checked structured output from a valid call, and the
//! event-planning workflow paused at its question and resumed, on the offline canned model.

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const FIXTURE: &str = include_str!("../../tests/fixtures/plan_generator/kwargs.json");

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = arguments {
        params.arguments = Some(map);
    }
    params
}

#[tokio::test]
async fn the_cli_serves_the_agents_over_stdio() {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    command.arg("mcp");
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "run_plan_generator_agent"));
    assert!(
        tools
            .iter()
            .filter(|t| t.name.starts_with("run_"))
            .all(|t| t.input_schema["required"][0] == "task")
    );

    let mut kwargs: Value = serde_json::from_str(FIXTURE).unwrap();
    kwargs
        .as_object_mut()
        .unwrap()
        .remove("collected_information");
    let refused = client
        .call_tool(call("run_plan_generator_agent", kwargs))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content.unwrap()["missing_fields"],
        json!(["collected_information"])
    );

    let answered = client
        .call_tool(call(
            "run_plan_generator_agent",
            serde_json::from_str(FIXTURE).unwrap(),
        ))
        .await
        .unwrap();
    assert_eq!(answered.is_error, Some(false));
    assert_eq!(
        answered.structured_content.unwrap()["plan_file_path"],
        "plans/login_form_automation.md"
    );

    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.ends_with(&["run_event_planning", "resume_event_planning"]));
    let task = agent_examples::event_planning::REQUEST;
    let paused = client
        .call_tool(call("run_event_planning", json!({"task": task})))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(paused["status"], "input_required");
    assert_eq!(
        paused["question"],
        "Do any guests have dietary restrictions?"
    );
    let answer = agent_examples::event_planning::HUMAN_ANSWER;
    let finished = client
        .call_tool(call(
            "resume_event_planning",
            json!({"handle": paused["handle"], "answer": answer}),
        ))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(finished["status"], "finished");
    assert_eq!(finished["output"], agent_examples::event_planning::PLAN);
    client.cancel().await.unwrap();
}
