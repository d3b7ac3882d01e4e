//! The span of each `tools/call`: its method, its tool and, when the caller's `_meta` carries a
//! W3C `traceparent`, the trace it continues. A process of its own: the subscriber is global.

use agent_contracts_mcp::AgentServer;
use agent_contracts_runtime::{Message, ScriptedModel};
use agent_examples::agents::DiscoveryAgent;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

/// The fields of every `mcp.tools_call` span, one map a span.
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

struct Visitor(BTreeMap<String, String>);

impl Visit for Visitor {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Calls {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() == "mcp.tools_call" {
            let mut visitor = Visitor(BTreeMap::new());
            attrs.record(&mut visitor);
            self.0.lock().unwrap().push(visitor.0);
        }
    }
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

#[tokio::test]
async fn each_call_has_a_span_that_joins_the_callers_trace() {
    let calls = Calls::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(calls.clone()))
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
    let calls = calls.0.lock().unwrap().clone();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0]["rpc.method"], "tools/call");
    assert_eq!(calls[0]["tool"], "run_discovery_agent");
    assert_eq!(calls[0]["trace_id"], TRACE);
    assert_eq!(calls[0]["parent_id"], PARENT);
    assert_eq!(calls[1]["tool"], "run_discovery_agent");
    assert!(!calls[1].contains_key("trace_id"), "{:?}", calls[1]);
    // Over stdio there is no HTTP session.
    assert!(!calls[0].contains_key("session.id"));
}
