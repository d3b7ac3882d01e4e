//! Two `agent-demo mcp --http --stateless` processes on one SQLite store and one key,
//! behind a round-robin HTTP proxy written here (each request to the next instance, no sticky
//! sessions): rmcp's client, on the current protocol and on `2025-06-18` (which opens a
//! session with `initialize`), starts the event-planning workflow through one instance and
//! answers its question through the other.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncBufReadExt as _;

/// Starts `agent-demo mcp --http 127.0.0.1:0 --stateless --store URL` and reads the
/// address it bound from its first line on stderr.
async fn instance(url: &str) -> (tokio::process::Child, SocketAddr) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"))
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--store",
            url,
        ])
        .env(
            "AGENT_CONTRACT_MCP_KEY",
            "3f9c1e7a52b0d84c6e21f5a9073bd4e8c1a6f2097d3e5b8a4c0f1e2d3b6a7958",
        )
        .env_remove("AGENT_CONTRACT_MCP_TOKEN")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(stderr)
        .read_line(&mut line)
        .await
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("agent-demo: serving MCP at http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr.parse().unwrap())
}

/// The proxy: each request to the next backend in turn, the response streamed back; it notes
/// which backend got each `tools/call`, by tool name. Tool calls take turns among themselves
/// (the first to one instance, the next to the other), whatever requests come between, so
/// the test knows a run and its answer met different instances.
#[derive(Clone)]
struct Proxy {
    backends: Arc<[SocketAddr]>,
    next: Arc<Mutex<usize>>,
    next_call: Arc<Mutex<usize>>,
    calls: Arc<Mutex<Vec<(String, usize)>>>,
    client: reqwest::Client,
}

async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let tool = serde_json::from_slice::<Value>(&body)
        .ok()
        .filter(|message| message["method"] == "tools/call")
        .map(|message| message["params"]["name"].as_str().unwrap_or("").to_owned());
    let turn = |counter: &Mutex<usize>| {
        let mut next = counter.lock().unwrap();
        *next += 1;
        (*next - 1) % proxy.backends.len()
    };
    let backend = match tool {
        Some(tool) => {
            let backend = turn(&proxy.next_call);
            proxy.calls.lock().unwrap().push((tool, backend));
            backend
        }
        None => turn(&proxy.next),
    };
    let url = format!("http://{}{}", proxy.backends[backend], parts.uri);
    let mut outgoing = proxy.client.request(parts.method, url).body(body);
    for (name, value) in &parts.headers {
        // The connection's own headers are the proxy's to set.
        if !matches!(
            name.as_str(),
            "host" | "content-length" | "connection" | "transfer-encoding"
        ) {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = outgoing.send().await.unwrap();
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !matches!(
            name.as_str(),
            "content-length" | "connection" | "transfer-encoding"
        ) {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(map) = arguments else {
        unreachable!()
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(map)
}

/// Runs the workflow to its question and answers it, through the proxy at `addr`, as a client
/// of `info`'s protocol version.
async fn pause_and_resume(addr: SocketAddr, info: ClientConfig) {
    // reqwest's rustls needs a crypto provider before any client is built.
    agent_contracts::mcp::tls::install_crypto_provider();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = info.serve(transport).await.unwrap();
    let task = agent_examples::event_planning::REQUEST;
    let paused = client
        .call_tool(call("run_event_planning", json!({"task": task})))
        .await
        .unwrap();
    assert_eq!(paused.is_error, Some(false), "{paused:?}");
    let paused = paused.structured_content.unwrap();
    assert_eq!(paused["status"], "input_required");
    let answer = agent_examples::event_planning::HUMAN_ANSWER;
    let finished = client
        .call_tool(call(
            "resume_event_planning",
            json!({"handle": paused["handle"], "answer": answer}),
        ))
        .await
        .unwrap();
    assert_eq!(finished.is_error, Some(false), "{finished:?}");
    let finished = finished.structured_content.unwrap();
    assert_eq!(finished["status"], "finished");
    assert_eq!(finished["output"], agent_examples::event_planning::PLAN);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_behind_a_round_robin_proxy_serve_one_client() {
    let dir = std::env::temp_dir().join(format!(
        "agent-contract-mcp-instances-{}-{}",
        std::process::id(),
        agent_contracts::store::now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    // The first creates the database; the second opens it.
    let (_first, a) = instance(&url).await;
    let (_second, b) = instance(&url).await;

    // reqwest's rustls needs a crypto provider before any client is built.
    agent_contracts::mcp::tls::install_crypto_provider();
    let proxy = Proxy {
        backends: Arc::from([a, b]),
        next: Arc::default(),
        next_call: Arc::default(),
        calls: Arc::default(),
        client: reqwest::Client::new(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(proxy.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let implementation = Implementation::new("instances-test", "0");
    let current = ClientConfig::new(ClientCapabilities::default(), implementation.clone());
    let legacy = current
        .clone()
        .with_protocol_version(ProtocolVersion::V_2025_06_18);
    for info in [current, legacy] {
        let version = info.protocol_version.clone();
        proxy.calls.lock().unwrap().clear();
        pause_and_resume(addr, info).await;
        // Each call went to an instance of its own: the run paused through one and went on
        // through the other.
        let calls = proxy.calls.lock().unwrap().clone();
        let backend_of = |tool: &str| {
            calls
                .iter()
                .find(|(name, _)| name == tool)
                .map(|(_, backend)| *backend)
                .unwrap_or_else(|| panic!("{tool} never reached an instance: {calls:?}"))
        };
        assert_ne!(
            backend_of("run_event_planning"),
            backend_of("resume_event_planning"),
            "{version}: {calls:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
