//! `agent-contract mcp` over stdio, driven by rmcp's client as a child process: the tools, a
//! retry error as an `isError` result, and a checked structured output from a valid call, on
//! the offline canned model.

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
    client.cancel().await.unwrap();
}
