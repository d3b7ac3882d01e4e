//! `agent-contract a2a`: a folder's agents served as an A2A agent on loopback, its card read
//! and a message sent by hand (HTTP/1.1 on a TCP stream), with no model call; and the
//! refusals before anything is served.

use serde_json::{Value, json};
use std::io::{BufRead as _, Read as _, Write as _};

const USER_SCHEMAS: &str = "../tests/fixtures/user_crate/schemas";

fn server(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    command
        .args([
            "--schemas",
            USER_SCHEMAS,
            "a2a",
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

/// One HTTP/1.1 request to `addr`; the response's body as JSON.
fn request(addr: &str, head: &str, body: &str) -> Value {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let text = format!(
        "{head}\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(text.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}

/// Kills the server when the test ends, passed or not.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_cli_serves_a_folder_as_an_a2a_agent_and_prints_its_address() {
    let mut child = server(&["--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let running = Running(child);
    let mut line = String::new();
    std::io::BufReader::new(stderr)
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .strip_prefix("agent-contract: serving A2A at http://")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    let card = request(&addr, "GET /.well-known/agent-card.json HTTP/1.1", "");
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["broken_agent", "search_agent", "tagged_agent"]);
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("http://{addr}/")
    );
    // The folder's contract checks the call: no model is reached.
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Find it"}],
        "metadata": {"skill": "search_agent"}}}});
    let answer = request(&addr, "POST / HTTP/1.1", &send.to_string());
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_REJECTED", "{answer}");
    assert_eq!(
        task["status"]["message"]["parts"][1]["data"]["missing_fields"],
        json!(["query"])
    );
    drop(running);
}

#[test]
fn a2a_needs_http_and_a_token_beyond_loopback() {
    let out = server(&[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("--http ADDR")
    );
    let out = server(&["--http", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("AGENT_CONTRACT_MCP_TOKEN"), "{stderr}");
}

/// A folder of one agent, `greeter`, whose output contract carries its canned answer in
/// `examples` (or, with `broken`, an example its own contract refuses), in a fresh temp folder.
fn greeter_folder(name: &str, broken: bool) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let agent = dir.join("schemas/greeter");
    std::fs::create_dir_all(&agent).unwrap();
    let input = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "required": ["name"]});
    let example = match broken {
        false => json!({"greeting": "Hello, Ada"}),
        true => json!({"greeting": 7}),
    };
    let output = json!({"type": "object", "properties": {"greeting": {"type": "string"}},
        "required": ["greeting"], "examples": [example]});
    std::fs::write(agent.join("input.schema.json"), input.to_string()).unwrap();
    std::fs::write(agent.join("output.schema.json"), output.to_string()).unwrap();
    dir
}

/// `agent-contract --schemas DIR a2a ARGS`, offline (no `--model`), a key in the environment.
fn offline_server(dir: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_agent-contract"));
    command
        .arg("--schemas")
        .arg(dir.join("schemas"))
        .arg("a2a")
        .args(args)
        .env_remove("AGENT_CONTRACT_MCP_TOKEN")
        .env(
            "AGENT_CONTRACT_MCP_KEY",
            "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef",
        )
        .stdin(std::process::Stdio::null());
    command
}

#[test]
fn without_a_model_the_cli_answers_offline_and_opens_its_store() {
    let dir = greeter_folder("offline", false);
    let store = dir.join("tasks.db");
    let store_url = format!("sqlite:{}", store.display());
    let mut child = offline_server(&dir, &["--http", "127.0.0.1:0", "--store", &store_url])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let running = Running(child);
    let mut lines = std::io::BufReader::new(stderr).lines();
    let offline = lines.next().unwrap().unwrap();
    assert!(
        offline.contains("no --model: answering offline"),
        "{offline}"
    );
    assert!(offline.contains("(1 of 1 agents have one)"), "{offline}");
    let line = lines.next().unwrap().unwrap();
    let addr = line
        .strip_prefix("agent-contract: serving A2A at http://")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    // The store was opened (created) before the address was printed.
    assert!(store.exists(), "no store at {}", store.display());

    let send = |data: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m1", "role": "ROLE_USER",
            "parts": [{"text": "Greet her"}, {"data": data}],
            "metadata": {"skill": "greeter"}}}})
        .to_string()
    };
    let answer = request(&addr, "POST / HTTP/1.1", &send(json!({"name": "Ada"})));
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["data"],
        json!({"greeting": "Hello, Ada"})
    );
    let answer = request(&addr, "POST / HTTP/1.1", &send(json!({"nom": "Ada"})));
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_REJECTED", "{answer}");
    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a2a_refuses_a_store_without_a_key_oauth_and_a_canned_answer_its_contract_breaks() {
    let dir = greeter_folder("refusals", false);
    let out = offline_server(&dir, &["--http", "127.0.0.1:0", "--store", "sqlite:x.db"])
        .env_remove("AGENT_CONTRACT_MCP_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--store needs a secret key in AGENT_CONTRACT_MCP_KEY"),
        "{stderr}"
    );
    assert!(!dir.join("x.db").exists() && !std::path::Path::new("x.db").exists());

    let weak = format!("sqlite:{}", dir.join("weak.db").display());
    let out = offline_server(&dir, &["--http", "127.0.0.1:0", "--store", &weak])
        .env("AGENT_CONTRACT_MCP_KEY", "0f".repeat(16) + &"a7".repeat(16))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("the key has 2 distinct bytes"), "{stderr}");
    assert!(!stderr.contains("0fa7"), "the key is never shown: {stderr}");

    let oauth = [
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        "https://issuer.example",
        "--oauth-jwks-url",
        "https://issuer.example/jwks",
        "--oauth-audience",
        "a2a",
    ];
    let out = offline_server(&dir, &oauth).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("not OAuth"), "{stderr}");

    let broken = greeter_folder("broken-example", true);
    let out = offline_server(&broken, &["--http", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("`greeter`: the first `examples` entry"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&broken);
}
