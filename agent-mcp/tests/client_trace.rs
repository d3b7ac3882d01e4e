//! The MCP client puts the calling span's `traceparent` in `_meta`: a remote agent's spans
//! join the caller's trace, the server's `tools/call` a child of the caller's `execute_tool`.
//! A process of its own: the subscriber is global (the server runs on spawned tasks).

use agent_contracts_mcp::AgentServer;
use agent_contracts_mcp::client::{McpServer, ToolSettings};
use agent_contracts_otel::Telemetry;
use agent_contracts_otel::opentelemetry::trace::SpanKind;
use agent_contracts_otel::opentelemetry_sdk::metrics::SdkMeterProvider;
use agent_contracts_otel::opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use agent_contracts_runtime::model::tool_calls;
use agent_contracts_runtime::{Message, Runtime, ScriptedModel};
use agent_examples::agents::DiscoveryAgent;
use std::sync::Arc;
use tracing_subscriber::layer::SubscriberExt as _;

#[tokio::test]
async fn a_remote_agents_spans_join_the_callers_trace() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let telemetry = Telemetry::with_providers(provider, SdkMeterProvider::builder().build());
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(telemetry.layer()))
        .unwrap();

    let page = r#"{"page_title": "Login", "discovered_elements": []}"#;
    let remote = ScriptedModel::default().script("discovery_agent", [page]);
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(remote));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    let client = McpServer::http("agents", &format!("http://{addr}/mcp"), None)
        .await
        .unwrap();
    let tools = client.tools(ToolSettings::default()).await.unwrap();

    let arguments = r#"{"task": "Scan", "target_url": "https://a.example"}"#;
    let local = ScriptedModel::default().script(
        "main",
        [
            tool_calls([("run_discovery_agent", arguments)]),
            Message::assistant("done"),
        ],
    );
    let runtime = tools
        .into_iter()
        .fold(Runtime::new(local), |runtime, tool| runtime.with_tool(tool));
    runtime
        .run_loop("main", "Scan pages.", "Scan a.example", &[])
        .await
        .expect("the loop ends");

    telemetry.flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();
    let execute = spans
        .iter()
        .find(|s| s.name == "execute_tool run_discovery_agent")
        .unwrap_or_else(|| panic!("the caller's tool call: {names:?}"));
    assert!(
        execute
            .attributes
            .iter()
            .any(|kv| kv.key.as_str() == "gen_ai.tool.type" && kv.value.as_str() == "extension")
    );
    let call = spans
        .iter()
        .find(|s| s.name == "tools/call run_discovery_agent")
        .unwrap_or_else(|| panic!("the server's call: {names:?}"));
    assert_eq!(call.span_kind, SpanKind::Server);
    assert_eq!(
        call.span_context.trace_id(),
        execute.span_context.trace_id()
    );
    assert_eq!(call.parent_span_id, execute.span_context.span_id());
    let remote_agent = spans
        .iter()
        .find(|s| s.name == "invoke_agent discovery_agent")
        .unwrap_or_else(|| panic!("the remote agent's call: {names:?}"));
    assert_eq!(
        remote_agent.span_context.trace_id(),
        execute.span_context.trace_id()
    );
}
