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

/// `agent-contract mcp --store sqlite:...` with its key in the environment.
fn stored_server(url: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    command
        .args(["mcp", "--store", url])
        .env("AGENT_CONTRACT_MCP_KEY", "5a".repeat(32));
    command
}

#[tokio::test]
async fn a_run_paused_by_one_server_process_is_resumed_by_the_next_on_the_same_store() {
    let dir = std::env::temp_dir().join(format!(
        "agent-contract-mcp-store-{}-{}",
        std::process::id(),
        agent_core::store::now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());

    let first = ().serve(TokioChildProcess::new(stored_server(&url)).unwrap()).await.unwrap();
    let task = agent_examples::event_planning::REQUEST;
    let paused = first
        .call_tool(call("run_event_planning", json!({"task": task})))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(paused["status"], "input_required");
    // The first process ends: the run is only in the database now.
    first.cancel().await.unwrap();

    let second = ().serve(TokioChildProcess::new(stored_server(&url)).unwrap()).await.unwrap();
    let answer = agent_examples::event_planning::HUMAN_ANSWER;
    let arguments = json!({"handle": paused["handle"], "answer": answer});
    let finished = second
        .call_tool(call("resume_event_planning", arguments.clone()))
        .await
        .unwrap();
    assert_eq!(finished.is_error, Some(false), "{finished:?}");
    let finished = finished.structured_content.unwrap();
    assert_eq!(finished["output"], agent_examples::event_planning::PLAN);
    let again = second
        .call_tool(call("resume_event_planning", arguments))
        .await
        .unwrap();
    assert_eq!(again.is_error, Some(true));
    second.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_store_without_a_key_is_a_usage_error() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"))
        .args(["mcp", "--store", "sqlite::memory:"])
        .env_remove("AGENT_CONTRACT_MCP_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("--store needs a secret key in AGENT_CONTRACT_MCP_KEY: 64 hex digits"),
        "{stderr}"
    );
}
