//! `notifications/progress` for a `tools/call` with a progress token: one at each model call
//! (the first answer and each retry), naming the agent, and ticks while a slow model call is
//! in flight, all before the result; none for a call without a token.

use agent_contracts_mcp::AgentServer;
use agent_contracts_runtime::ScriptedModel;
use agent_contracts_runtime::{
    ChatModel, Message, model::BoxFuture, model::ChatRequest, model::ChatResponse,
    model::ModelError,
};
use agent_examples::agents::DiscoveryAgent;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A model that answers as its script says, `delay` later.
struct Slow {
    script: ScriptedModel,
    delay: Duration,
}

impl ChatModel for Slow {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.script.complete(request).await
        })
    }
}

/// A client that keeps every progress notification it hears.
#[derive(Clone, Default)]
struct Listener {
    heard: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.heard.lock().unwrap().push(params);
    }
}

/// Serves the discovery agent on `model`, with ticks every 100 ms, to a client that keeps what
/// it hears: the client, its listener, and the parameters of a valid call.
async fn connect(
    model: Arc<dyn ChatModel>,
) -> (
    RunningService<RoleClient, Listener>,
    Listener,
    CallToolRequestParams,
) {
    let server = AgentServer::new(vec![&DiscoveryAgent], model)
        .with_progress_interval(Duration::from_millis(100));
    let (server_in, client_out) = tokio::io::duplex(1 << 16);
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve_io(server_in, server_out));
    let listener = Listener::default();
    let client = listener
        .clone()
        .serve((client_in, client_out))
        .await
        .unwrap();
    let mut params = CallToolRequestParams::new("run_discovery_agent");
    params.arguments = Some(
        serde_json::from_value(json!({"task": "Scan", "target_url": "https://a.example"})).unwrap(),
    );
    (client, listener, params)
}

const PAGE: &str = r#"{"page_title": "Login", "discovered_elements": []}"#;

/// Serves the discovery agent on a model that first breaks its output contract, then
/// answers, each answer `delay` late, with ticks every 100 ms; calls it with a progress token
/// (rmcp's client gives one) and returns what the client heard by the time the result arrived.
async fn heard(delay: Duration) -> Vec<ProgressNotificationParam> {
    let script = ScriptedModel::default().script(
        "discovery_agent",
        [
            Message::assistant(r#"{"page_title": 5, "discovered_elements": []}"#),
            Message::assistant(PAGE),
        ],
    );
    let (client, listener, params) = connect(Arc::new(Slow { script, delay })).await;
    let request = ClientRequest::CallToolRequest(Request::new(params));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let result = handle.await_response().await.unwrap();
    let heard = listener.heard.lock().unwrap().clone();
    let ServerResult::CallToolResult(result) = result else {
        panic!("not a tool result: {result:?}");
    };
    assert_eq!(result.is_error, Some(false));
    client.cancel().await.unwrap();
    heard
}

#[tokio::test]
async fn each_model_call_is_reported_before_the_result() {
    let heard = heard(Duration::ZERO).await;
    let messages: Vec<&str> = heard.iter().filter_map(|p| p.message.as_deref()).collect();
    assert_eq!(
        messages,
        [
            "model call 1: `discovery_agent` is thinking",
            "model call 2: `discovery_agent` is thinking"
        ]
    );
    let progress: Vec<f64> = heard.iter().map(|p| p.progress).collect();
    assert_eq!(progress, [1.0, 2.0]);
}

#[tokio::test]
async fn a_slow_model_call_is_reported_while_in_flight() {
    let heard = heard(Duration::from_millis(350)).await;
    let waiting = heard
        .iter()
        .filter_map(|p| p.message.as_deref())
        .filter(|m| m.contains("still waiting for `discovery_agent`"))
        .count();
    // About three ticks a call at 100 ms over 350 ms; at least one each.
    assert!(waiting >= 2, "{heard:?}");
    let progress: Vec<f64> = heard.iter().map(|p| p.progress).collect();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
}

#[tokio::test]
async fn a_call_without_a_token_hears_nothing() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    // rmcp's client gives every request a token, so this client writes the lines itself.
    let script = ScriptedModel::default().script("discovery_agent", [Message::assistant(PAGE)]);
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(script));
    let (server_in, mut client_out) = tokio::io::duplex(1 << 16);
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve_io(server_in, server_out));
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_discovery_agent","arguments":{"task":"Scan","target_url":"https://a.example"}}}"#,
    ] {
        client_out
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = BufReader::new(client_in).lines();
    let mut seen = Vec::new();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let done = line.contains(r#""id":2"#);
            seen.push(line);
            if done {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .unwrap();
    assert!(seen.last().unwrap().contains("Login"), "{seen:?}");
    assert!(
        !seen.iter().any(|l| l.contains("notifications/progress")),
        "{seen:?}"
    );
}

/// A model whose answer trickles in: `chunk` bytes every `pause`.
struct Trickle {
    answer: &'static str,
    chunk: usize,
    pause: Duration,
}

impl ChatModel for Trickle {
    fn complete<'a>(
        &'a self,
        _: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move { Ok(ChatResponse::from(self.answer)) })
    }

    fn stream<'a>(
        &'a self,
        _: &'a ChatRequest,
        sink: &'a mut dyn agent_contracts_runtime::model::StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            for piece in self.answer.as_bytes().chunks(self.chunk) {
                tokio::time::sleep(self.pause).await;
                let text = std::str::from_utf8(piece).unwrap();
                if sink
                    .delta(agent_contracts_runtime::model::StreamDelta::Text(text))
                    .is_break()
                {
                    panic!("a valid answer is never stopped");
                }
            }
            Ok(ChatResponse::from(self.answer))
        })
    }
}

#[tokio::test]
async fn a_streaming_answer_is_reported_as_it_is_written() {
    const LONG_PAGE: &str = r#"{"page_title": "Login - MyApp, the page with the sign-in form", "discovered_elements": []}"#;
    let model = Trickle {
        answer: LONG_PAGE,
        chunk: 8,
        pause: Duration::from_millis(60),
    };
    let (client, listener, params) = connect(Arc::new(model)).await;
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    let heard = listener.heard.lock().unwrap().clone();
    client.cancel().await.unwrap();
    // Each tick after text arrived carries the answer so far: a growing prefix of it.
    let prefix = "model call 1: `discovery_agent` has written ";
    let written: Vec<(usize, String)> = heard
        .iter()
        .filter_map(|p| p.message.as_deref()?.strip_prefix(prefix))
        .map(|rest| {
            let (bytes, text) = rest.split_once(" bytes: ").unwrap();
            (bytes.parse().unwrap(), text.to_owned())
        })
        .collect();
    assert!(!written.is_empty(), "{heard:?}");
    for (bytes, text) in &written {
        assert_eq!(text.len(), *bytes);
        assert!(LONG_PAGE.starts_with(text.as_str()), "{text}");
    }
    assert!(
        written.iter().any(|(bytes, _)| *bytes < LONG_PAGE.len()),
        "{written:?}"
    );
    assert!(written.windows(2).all(|w| w[0].0 < w[1].0), "{written:?}");
}
