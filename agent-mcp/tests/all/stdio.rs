//! The server over a line-delimited stream pair ([`AgentServer::serve_io`], which
//! `serve_stdio` runs on the process's stdin and stdout), driven by rmcp's client: arguments
//! reach the prompt as the client wrote them, and a line too long for the server to read for
//! its text still gets rmcp's answer, in a session that goes on.

use agent_contracts_mcp::AgentServer;
use agent_contracts_runtime::{Config, Message, ScriptedModel};
use agent_examples::agents::PlanGeneratorAgent;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};

use crate::common::{FIXTURE, GOLDEN_PROMPT, NUMBERS, NUMBERS_PROMPT, Wire};

const GOOD_PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill both inputs, submit."}"#;

/// `server` on one end of in-memory pipes, rmcp's client on the other, `wire` between them.
async fn client_of(server: AgentServer, wire: Wire) -> RunningService<RoleClient, ()> {
    let (client_out, wire_in) = tokio::io::duplex(1 << 16);
    let (wire_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve_io(server_in, server_out));
    tokio::spawn(rewrite(wire_in, wire_out, wire));
    ().serve((client_in, client_out)).await.unwrap()
}

/// Passes the client's lines on, with `wire`'s swaps made.
async fn rewrite(from: DuplexStream, mut to: DuplexStream, wire: Wire) {
    let mut lines = BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = wire.apply(&line).unwrap_or(line);
        if to.write_all(format!("{line}\n").as_bytes()).await.is_err() {
            break;
        }
    }
}

/// `text` on one line, as the stdio transport frames a message (the fixtures' line breaks are
/// all between tokens).
fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

fn call(arguments: serde_json::Map<String, Value>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("run_plan_generator_agent");
    params.arguments = Some(arguments);
    params
}

fn model(answers: usize) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        vec![Message::assistant(GOOD_PLAN); answers],
    ))
}

#[tokio::test]
async fn arguments_reach_the_prompt_as_the_client_wrote_them() {
    let model = model(2);
    let wire = Wire::default();
    let client = client_of(
        AgentServer::new(vec![&PlanGeneratorAgent], model.clone()),
        wire.clone(),
    )
    .await;
    for text in [FIXTURE, NUMBERS] {
        let arguments = wire.as_written(&one_line(text));
        let result = client.call_tool(call(arguments)).await.unwrap();
        assert!(wire.all_sent());
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests[0].messages[1].content, GOLDEN_PROMPT);
    assert_eq!(requests[1].messages[1].content, NUMBERS_PROMPT);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_line_too_long_gets_a_json_rpc_error_and_the_session_survives() {
    let model = model(3);
    let wire = Wire::default();
    // Arguments' text is read from lines of up to 8 KiB + the envelope room.
    let mut config = Config::default();
    config.limits.max_bytes = 8 * 1024;
    let server = AgentServer::with_config(vec![&PlanGeneratorAgent], model.clone(), config);
    let client = client_of(server, wire.clone()).await;

    // Past the bound (by insignificant whitespace): never parsed, answered with a JSON-RPC
    // error under the call's id, so the client's call ends with it; no agent runs.
    let padding = " ".repeat(agent_contracts_mcp::MAX_ENVELOPE_BYTES + 16 * 1024);
    let padded = one_line(FIXTURE).replacen('{', &format!("{{{padding}"), 1);
    let arguments = wire.as_written(&padded);
    let error = client.call_tool(call(arguments)).await.unwrap_err();
    assert!(wire.all_sent());
    assert!(
        error.to_string().contains("the message is too large"),
        "{error}"
    );
    assert_eq!(model.requests_of("plan_generator_agent").len(), 0);

    // The session goes on, its next call read as written.
    let arguments = wire.as_written(&one_line(NUMBERS));
    let result = client.call_tool(call(arguments)).await.unwrap();
    assert!(wire.all_sent());
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests[0].messages[1].content, NUMBERS_PROMPT);
    client.cancel().await.unwrap();
}
