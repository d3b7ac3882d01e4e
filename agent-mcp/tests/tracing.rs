//! The span of each `tools/call`, by the MCP conventions: named `tools/call {tool}`, kind
//! server, and when the caller's `_meta` carries a W3C `traceparent`, in the caller's trace,
//! the caller's span its parent, the agent's spans beneath it. Exported through the
//! OpenTelemetry layer to the SDK's in-memory exporter. A process of its own: the subscriber
//! is global (the server's tasks run on the runtime's threads).

use agent_contracts_mcp::AgentServer;
use agent_contracts_otel::Telemetry;
use agent_contracts_otel::opentelemetry::trace::{SpanId, SpanKind};
use agent_contracts_otel::opentelemetry_sdk::metrics::SdkMeterProvider;
use agent_contracts_otel::opentelemetry_sdk::trace::{
    InMemorySpanExporter, SdkTracerProvider, SpanData,
};
use agent_contracts_runtime::{Message, ScriptedModel};
use agent_examples::agents::DiscoveryAgent;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tracing_subscriber::layer::SubscriberExt as _;

fn text(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

#[tokio::test]
async fn each_call_has_a_span_that_joins_the_callers_trace() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let telemetry = Telemetry::with_providers(provider, SdkMeterProvider::builder().build());
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(telemetry.layer()))
        .unwrap();
    let page = r#"{"page_title": "Login", "discovered_elements": []}"#;
    let script = ScriptedModel::default().script(
        "discovery_agent",
        [Message::assistant(page), Message::assistant(page)],
    );
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(script));
    let (server_in, mut client_out) = tokio::io::duplex(1 << 16);
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve_io(server_in, server_out));
    let arguments = r#"{"task":"Scan","target_url":"https://a.example"}"#;
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"run_discovery_agent","arguments":{arguments},"_meta":{{"traceparent":"00-{TRACE}-{PARENT}-01"}}}}}}"#),
        // Not a trace context: ignored, the call still has its span.
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"run_discovery_agent","arguments":{arguments},"_meta":{{"traceparent":"00-{TRACE}-0000000000000000-01"}}}}}}"#),
    ] {
        client_out.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }
    let mut lines = BufReader::new(client_in).lines();
    let answered = async {
        let mut left = 2;
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(r#""id":2"#) || line.contains(r#""id":3"#) {
                left -= 1;
                if left == 0 {
                    break;
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), answered)
        .await
        .unwrap();
    telemetry.flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let calls: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "tools/call run_discovery_agent")
        .collect();
    assert_eq!(
        calls.len(),
        2,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let (joined, alone) = match text(calls[0], "jsonrpc.request.id").as_deref() {
        Some("2") => (calls[0], calls[1]),
        _ => (calls[1], calls[0]),
    };
    assert_eq!(joined.span_kind, SpanKind::Server);
    assert_eq!(
        text(joined, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        text(joined, "gen_ai.tool.name").as_deref(),
        Some("run_discovery_agent")
    );
    assert_eq!(text(joined, "jsonrpc.request.id").as_deref(), Some("2"));
    // The caller's trace, the caller's span as parent; the peer's text is no attribute.
    assert_eq!(joined.span_context.trace_id().to_string(), TRACE);
    assert_eq!(joined.parent_span_id.to_string(), PARENT);
    assert!(joined.parent_span_is_remote);
    assert!(
        joined
            .attributes
            .iter()
            .all(|kv| !kv.value.as_str().contains(PARENT)),
        "{:?}",
        joined.attributes
    );
    // The agent's run is beneath the call, in the same trace.
    let agent = spans
        .iter()
        .find(|s| s.parent_span_id == joined.span_context.span_id())
        .expect("the agent's span under the call");
    assert_eq!(agent.name, "invoke_agent discovery_agent");
    assert_eq!(agent.span_context.trace_id().to_string(), TRACE);
    // Not a trace context: ignored, the call is a root of its own trace.
    assert_eq!(alone.parent_span_id, SpanId::INVALID);
    assert_ne!(alone.span_context.trace_id().to_string(), TRACE);
    // Over stdio there is no HTTP session.
    assert_eq!(text(joined, "mcp.session.id"), None);
}
