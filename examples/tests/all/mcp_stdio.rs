//! `agent-demo mcp` over stdio, driven by rmcp's client as a child process: the tools, a
//! retry error as an `isError` result, a checked structured output from a valid call, and the
//! event-planning workflow paused at its question and resumed, on the offline canned model;
//! and a call's arguments read as the client wrote them, not as rmcp's map. (A folder's
//! agents served by `agent-contract mcp` are agent-contracts-cli's tests.)

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const FIXTURE: &str = include_str!("../../../tests/fixtures/plan_generator/kwargs.json");

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = arguments {
        params.arguments = Some(map);
    }
    params
}

#[tokio::test]
async fn the_cli_serves_the_agents_over_stdio() {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"));
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
    assert!(names.ends_with(&[
        "run_event_planning",
        "resume_event_planning",
        "run_support_triage",
        "resume_support_triage"
    ]));
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

/// `agent-demo mcp --store sqlite:...` with its key in the environment.
fn stored_server(url: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"));
    command.args(["mcp", "--store", url]).env(
        "AGENT_CONTRACT_MCP_KEY",
        "3f9c1e7a52b0d84c6e21f5a9073bd4e8c1a6f2097d3e5b8a4c0f1e2d3b6a7958",
    );
    command
}

#[tokio::test]
async fn a_run_paused_by_one_server_process_is_resumed_by_the_next_on_the_same_store() {
    let dir = std::env::temp_dir().join(format!(
        "agent-contract-mcp-store-{}-{}",
        std::process::id(),
        agent_contracts::store::now_ms()
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
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"))
        .args(["mcp", "--store", "sqlite::memory:"])
        .env_remove("AGENT_CONTRACT_MCP_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(
            "--store needs a secret key in AGENT_CONTRACT_MCP_KEY (--mcp-key): 64 hex digits"
        ),
        "{stderr}"
    );
}

#[test]
fn mcp_refuses_a_signing_key_too_regular_to_be_secret() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"))
        .args(["mcp", "--store", "sqlite::memory:"])
        .env("AGENT_CONTRACT_MCP_KEY", "00".repeat(32))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("AGENT_CONTRACT_MCP_KEY"), "{stderr}");
    assert!(stderr.contains("1 distinct byte values"), "{stderr}");
    assert!(!stderr.contains(&"00".repeat(32)), "the key is never shown");
}

/// Passes the client's lines to the server's stdin, the first `tools/call` whose arguments are
/// `from` (as rmcp's client writes a map) carrying `to` instead; counts the swaps.
async fn swap_arguments(
    from: tokio::io::DuplexStream,
    mut to: tokio::process::ChildStdin,
    (map, text): (String, String),
    swapped: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let from_text = format!("\"arguments\":{map}");
    let mut lines = tokio::io::BufReader::new(from).lines();
    while let Ok(Some(mut line)) = lines.next_line().await {
        if line.contains(&from_text) && swapped.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            line = line.replacen(&from_text, &format!("\"arguments\":{text}"), 1);
            swapped.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        line.push('\n');
        if to.write_all(line.as_bytes()).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
}

#[tokio::test]
async fn the_cli_reads_a_calls_arguments_as_the_client_wrote_them() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"))
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    // rmcp's client writes a map (sorted keys, `0.6` for `0.60`): the text goes on the wire
    // instead, keys out of sorted order, as a client that keeps its text sends it.
    let text = r#"{"task": "Plan", "zeta": 0.60, "task_name": "login", "target_url": "https://a.example", "alpha": 1e5}"#;
    let map: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
    let swapped = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (client_out, wire_in) = tokio::io::duplex(1 << 16);
    let rmcp_map = serde_json::to_string(&map).unwrap();
    tokio::spawn(swap_arguments(
        wire_in,
        stdin,
        (rmcp_map, text.to_owned()),
        swapped.clone(),
    ));
    let client = ().serve((stdout, client_out)).await.unwrap();
    let refused = client
        .call_tool(call("run_plan_generator_agent", Value::Object(map)))
        .await
        .unwrap();
    assert_eq!(swapped.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(refused.is_error, Some(true));
    let error = refused.structured_content.unwrap();
    assert_eq!(error["missing_fields"], json!(["collected_information"]));
    // The caller's fields in the caller's order: the server read the text, not the map.
    assert_eq!(
        error["provided_fields"],
        json!(["zeta", "task_name", "target_url", "alpha"])
    );
    client.cancel().await.unwrap();
    child.wait().await.unwrap();
}
