//! `agent-contract mcp`: a folder's agents served over stdio, driven by rmcp's client as a
//! child process, a valid call answered by a model on loopback; and the refusals that come
//! before anything is served (a token too short or missing beyond loopback, a model spec it
//! cannot use), each a usage error. (The store of paused workflow runs and its signing key
//! are `agent-demo mcp`'s, the examples' tests.)

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

/// A model endpoint on loopback speaking OpenAI's chat completions: every request gets
/// `answer` as the assistant's message; each request's head and body are kept.
fn fake_openai(answer: &str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead as _, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let body = json!({
        "id": "chatcmpl-1",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    })
    .to_string();
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = std::io::BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            kept.lock()
                .unwrap()
                .push(format!("{head}\n{}", String::from_utf8_lossy(&request)));
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = reader.get_mut().write_all(response.as_bytes());
        }
    });
    (url, seen)
}

/// A call that passes its input contract goes to the model `--model` names, configured from
/// the variables clap read or from the flags; its answer comes back checked against the output
/// contract.
#[tokio::test]
async fn a_valid_call_is_answered_by_the_model_and_checked() {
    for by_flags in [false, true] {
        let (url, seen) = fake_openai(r#"{"total": 3}"#);
        let mut command = server(&[]);
        match by_flags {
            false => command
                .env("OPENAI_BASE_URL", &url)
                .env("OPENAI_API_KEY", "sk-test-key"),
            true => command
                .args(["--openai-base-url", &url, "--openai-api-key", "sk-test-key"])
                .env_remove("OPENAI_BASE_URL")
                .env_remove("OPENAI_API_KEY"),
        };
        let command = tokio::process::Command::from(command);
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        let answered = client
            .call_tool(call(
                "run_tagged_agent",
                json!({"task": "Count them", "count": 3}),
            ))
            .await
            .unwrap();
        assert_eq!(answered.is_error, Some(false), "{answered:?}");
        assert_eq!(answered.structured_content.unwrap(), json!({"total": 3}));
        client.cancel().await.unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{seen:?}");
        let request = seen[0].to_ascii_lowercase();
        assert!(
            request.starts_with("post /v1/chat/completions "),
            "{request}"
        );
        assert!(
            request.contains("authorization: bearer sk-test-key"),
            "{request}"
        );
        assert!(seen[0].contains("Count them"), "{}", seen[0]);
        assert!(seen[0].contains("\"model\":\"test-model\""), "{}", seen[0]);
    }
}

/// Without `--model`, offline: an agent answers the first `examples` entry of its output
/// contract, checked as any answer; an agent whose contract has none fails its call saying
/// what to add.
#[tokio::test]
async fn without_a_model_each_agent_answers_its_contracts_example() {
    let dir = std::env::temp_dir().join(format!("mcp-offline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (agent, examples) in [("greeter", true), ("plain", false)] {
        let folder = dir.join(agent);
        std::fs::create_dir_all(&folder).unwrap();
        let input = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let mut output = json!({"type": "object", "properties": {"greeting": {"type": "string"}},
            "required": ["greeting"]});
        if examples {
            output["examples"] = json!([{"greeting": "Hello"}, {"greeting": "Hi"}]);
        }
        std::fs::write(folder.join("input.schema.json"), input.to_string()).unwrap();
        std::fs::write(folder.join("output.schema.json"), output.to_string()).unwrap();
    }
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    command
        .arg("--schemas")
        .arg(&dir)
        .arg("mcp")
        .stdin(std::process::Stdio::null());
    let command = tokio::process::Command::from(command);
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let answered = client
        .call_tool(call(
            "run_greeter",
            json!({"task": "Greet Ada", "name": "Ada"}),
        ))
        .await
        .unwrap();
    assert_eq!(answered.is_error, Some(false), "{answered:?}");
    assert_eq!(
        answered.structured_content.unwrap(),
        json!({"greeting": "Hello"})
    );
    let failed = client
        .call_tool(call("run_plain", json!({"task": "Greet Ada"})))
        .await;
    let text = format!("{failed:?}");
    assert!(text.contains("no canned answer for `plain`"), "{text}");
    assert!(text.contains("`examples`"), "{text}");
    client.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
