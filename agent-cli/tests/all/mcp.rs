//! `agent-contract mcp`: a folder's agents served over stdio, driven by rmcp's client as a
//! child process; and the refusals that come before anything is served (a token too short or
//! missing beyond loopback, a signing key missing or too regular), each a usage error.

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const USER_SCHEMAS: &str = "../tests/fixtures/user_crate/schemas";

/// `agent-contract --schemas USER_SCHEMAS mcp --model openai:test-model ARGS`, with a key for
/// the model (never used: these tests make no model call) and nothing else from the
/// environment that would change what is checked.
fn server(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    command
        .args([
            "--schemas",
            USER_SCHEMAS,
            "mcp",
            "--model",
            "openai:test-model",
        ])
        .args(args)
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env_remove("AGENT_CONTRACT_MCP_TOKEN")
        .env_remove("AGENT_CONTRACT_MCP_KEY")
        .stdin(std::process::Stdio::null());
    command
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = arguments {
        params.arguments = Some(map);
    }
    params
}

#[tokio::test]
async fn the_cli_serves_a_folder_of_agents_read_at_start() {
    let command = tokio::process::Command::from(server(&[]));
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["run_broken_agent", "run_search_agent", "run_tagged_agent"]
    );
    // The folder's contract checks the call.
    let refused = client
        .call_tool(call("run_search_agent", json!({"task": "Find it"})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content.unwrap()["missing_fields"],
        json!(["query"])
    );
    client.cancel().await.unwrap();
}

#[test]
fn mcp_refuses_to_serve_beyond_loopback_without_a_token() {
    let out = server(&["--http", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("AGENT_CONTRACT_MCP_TOKEN"), "{stderr}");
    assert!(stderr.contains("--no-auth"), "{stderr}");
    // A token too short to be a secret is refused too, on any address.
    let out = server(&["--http", "127.0.0.1:0"])
        .env("AGENT_CONTRACT_MCP_TOKEN", "hunter2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("shorter than 16"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "the token is never shown");
}

#[test]
fn mcp_refuses_a_signing_key_too_regular_to_be_secret() {
    let out = server(&["--store", "sqlite::memory:"])
        .env("AGENT_CONTRACT_MCP_KEY", "00".repeat(32))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("AGENT_CONTRACT_MCP_KEY"), "{stderr}");
    assert!(stderr.contains("1 distinct byte values"), "{stderr}");
    assert!(!stderr.contains(&"00".repeat(32)), "the key is never shown");
}

#[test]
fn a_store_without_a_key_is_a_usage_error() {
    let out = server(&["--store", "sqlite::memory:"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(
            "--store needs a secret key in AGENT_CONTRACT_MCP_KEY (--mcp-key): 64 hex digits"
        ),
        "{stderr}"
    );
}

#[test]
fn a_model_spec_it_cannot_read_is_a_usage_error() {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    let out = command
        .args(["--schemas", USER_SCHEMAS, "mcp", "--model", "mistral:large"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("agent-contract: --model mistral:large: "),
        "{stderr}"
    );
    // A missing key names its variable, read through clap like every other.
    // (OpenAI's own endpoint needs one; another OpenAI-compatible one may not.)
    let out = server(&[])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");
}
