//! How the client calls a server's tools over time, against a probe server on loopback (rmcp's
//! streamable HTTP server with a handler written here): the call's timeout starts again at each
//! progress notification, within its longest time in all; a call whose caller stops waiting is
//! cancelled at the server (`notifications/cancelled`); and `notifications/tools/list_changed`
//! has the client read the list again.

use agent_contracts_mcp::client::{McpServer, ToolSettings};
use agent_contracts_runtime::Tool;
use agent_contracts_runtime::model::{Media, MediaData, MediaKind};
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the probe server offers and saw.
#[derive(Default)]
struct Seen {
    /// The tools it lists now.
    tools: Vec<rmcp::model::Tool>,
    /// The reasons of the `notifications/cancelled` it received.
    cancelled: Vec<String>,
}

#[derive(Clone)]
struct Probe {
    seen: Arc<Mutex<Seen>>,
}

fn tool(name: &str, description: &str) -> rmcp::model::Tool {
    let schema = json!({"type": "object", "properties": {
        "ms": {"type": "integer", "minimum": 0},
        "progress_ms": {"type": "integer", "minimum": 0}}});
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    rmcp::model::Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
}

impl Probe {
    fn new() -> Self {
        let seen = Seen {
            tools: vec![
                tool(
                    "slow",
                    "Answers `ms` later, with progress every `progress_ms`",
                ),
                tool("switch", "Changes the tool list"),
                tool("media", "Answers with an image, audio and resources"),
            ],
            ..Seen::default()
        };
        Self {
            seen: Arc::new(Mutex::new(seen)),
        }
    }

    fn cancelled(&self) -> Vec<String> {
        self.seen.lock().unwrap().cancelled.clone()
    }
}

impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.seen.lock().unwrap().tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let number = |key: &str| arguments.get(key).and_then(Value::as_u64).unwrap_or(0);
        match request.name.as_ref() {
            "slow" => {
                let answer = tokio::time::sleep(Duration::from_millis(number("ms")));
                tokio::pin!(answer);
                let every = Duration::from_millis(number("progress_ms").max(1));
                let mut ticks =
                    tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                let token = context.meta.get_progress_token();
                let mut progress = 0.0;
                loop {
                    tokio::select! {
                        () = &mut answer => break,
                        _ = ticks.tick(), if number("progress_ms") > 0 && token.is_some() => {
                            progress += 1.0;
                            let note = ProgressNotificationParam::new(token.clone().unwrap(), progress);
                            let _ = context.peer.notify_progress(note).await;
                        }
                    }
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("done")]).into())
            }
            "media" => {
                let blob = rmcp::model::ResourceContents::BlobResourceContents {
                    uri: "file:///q3.pdf".into(),
                    mime_type: Some("application/pdf".into()),
                    blob: "JVBERi0=".into(),
                    meta: None,
                };
                let mut link = rmcp::model::Resource::new("file:///all.csv", "all sales");
                link.mime_type = Some("text/csv".into());
                Ok(CallToolResult::success(vec![
                    ContentBlock::text("Q3"),
                    ContentBlock::image("iVBORw0KGgo=", "image/png"),
                    ContentBlock::audio("UklGRg==", "audio/wav"),
                    ContentBlock::embedded_text("file:///notes.txt", "up 4 %"),
                    ContentBlock::resource(blob),
                    ContentBlock::resource_link(link),
                ])
                .into())
            }
            "switch" => {
                self.seen.lock().unwrap().tools = vec![
                    tool("slow", "Answers later: the changed description"),
                    tool("added", "A tool the change added"),
                ];
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(CallToolResult::success(vec![ContentBlock::text("switched")]).into())
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _: NotificationContext<RoleServer>,
    ) {
        self.seen
            .lock()
            .unwrap()
            .cancelled
            .push(notification.reason.unwrap_or_default());
    }
}

/// Serves `probe` on a port the OS picks: its URL.
async fn serve(probe: Probe) -> String {
    let service = StreamableHttpService::new(
        move || Ok(probe.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/mcp")
}

async fn connect(settings: ToolSettings) -> (Probe, McpServer, Vec<Arc<dyn Tool>>) {
    let probe = Probe::new();
    let url = serve(probe.clone()).await;
    let server = McpServer::http("probe", &url, None).await.unwrap();
    let tools = server.tools(settings).await.unwrap();
    (probe, server, tools)
}

fn named(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.definition().name == name)
        .unwrap()
        .clone()
}

/// Waits up to 5 s for `done`.
async fn eventually(done: impl Fn() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not within 5 s");
}

#[tokio::test]
async fn progress_keeps_a_long_call_alive_and_silence_or_the_longest_time_ends_it() {
    let settings = ToolSettings::default()
        .with_timeout(Duration::from_millis(300))
        .with_max_time(Duration::from_millis(1500));
    let (_, _server, tools) = connect(settings).await;
    let slow = named(&tools, "slow");
    // 900 ms, three times the timeout, with progress every 50 ms: answered.
    let answer = slow.call(r#"{"ms": 900, "progress_ms": 50}"#).await;
    assert_eq!(answer, json!("done"));
    // The same call without progress: the timeout.
    let answer = slow.call(r#"{"ms": 900}"#).await;
    assert_eq!(answer["success"], false, "{answer}");
    assert_eq!(
        answer["error"],
        "the MCP server `probe` did not answer within 0.3 s (nor report progress)"
    );
    // Progress for ever: the longest time in all.
    let answer = slow.call(r#"{"ms": 20000, "progress_ms": 50}"#).await;
    assert_eq!(
        answer["error"], "the MCP server `probe` did not finish within 1.5 s",
        "{answer}"
    );
}

#[tokio::test]
async fn a_call_whose_caller_stops_waiting_is_cancelled_at_the_server() {
    let (probe, _server, tools) = connect(ToolSettings::default()).await;
    let slow = named(&tools, "slow");
    // The run drops the call after 100 ms (as a cancelled run does).
    let dropped =
        tokio::time::timeout(Duration::from_millis(100), slow.call(r#"{"ms": 20000}"#)).await;
    assert!(dropped.is_err());
    eventually(|| !probe.cancelled().is_empty()).await;
    assert_eq!(
        probe.cancelled(),
        ["the caller stopped waiting for the tool"]
    );
    // A call that ends is not cancelled.
    assert_eq!(slow.call(r#"{"ms": 10}"#).await, json!("done"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(probe.cancelled().len(), 1);
}

#[tokio::test]
async fn a_changed_tool_list_is_read_again() {
    let (_, server, tools) = connect(ToolSettings::default()).await;
    let (slow, switch) = (named(&tools, "slow"), named(&tools, "switch"));
    assert_eq!(switch.call("{}").await, json!("switched"));
    eventually(|| server.__refreshes() == 1).await;
    // The tool the server dropped says so, without reaching it.
    let answer = switch.call("{}").await;
    assert_eq!(
        answer["error"], "the MCP server `probe` no longer offers this tool",
        "{answer}"
    );
    // A tool kept has its new definition; the list is the new one.
    assert_eq!(
        slow.definition().description,
        "Answers later: the changed description"
    );
    let names: Vec<String> = server
        .tools(ToolSettings::default())
        .await
        .unwrap()
        .iter()
        .map(|t| t.definition().name)
        .collect();
    assert_eq!(names, ["slow", "added"]);
}

#[tokio::test]
async fn a_results_images_audio_and_binary_resources_come_as_media_and_the_rest_as_text() {
    let (_, _server, tools) = connect(ToolSettings::default()).await;
    let output = named(&tools, "media").call_with_media("{}").await;
    assert_eq!(
        output.value,
        json!("Q3\nup 4 %\n(a resource: all sales at file:///all.csv)")
    );
    let expected = [
        Media::new(
            MediaKind::Image,
            "image/png",
            MediaData::Base64("iVBORw0KGgo=".into()),
        ),
        Media::new(
            MediaKind::Audio,
            "audio/wav",
            MediaData::Base64("UklGRg==".into()),
        ),
        Media::new(
            MediaKind::Document,
            "application/pdf",
            MediaData::Base64("JVBERi0=".into()),
        )
        .with_uri("file:///q3.pdf"),
    ];
    assert_eq!(output.media, expected);
    // `call` is the same result without the media.
    assert_eq!(named(&tools, "media").call("{}").await, output.value);
}
