//! The main job run with `OTEL_EXPORTER_OTLP_ENDPOINT` set to an OTLP/HTTP receiver on
//! loopback (protobuf bodies, decoded with the OTLP messages): one trace arrives, the main
//! agent's `invoke_agent` over its `chat` and `execute_tool` spans, each sub-agent's
//! `invoke_agent` under the `execute_tool` that called it, the plan generator's refused call as
//! a violated input verdict naming `/collected_information`, one `gen_ai.conversation.id` on
//! every span; and the token and verdict metrics.

use axum::body::Bytes;
use axum::extract::State;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use std::sync::{Arc, Mutex};

/// The bodies the receiver got, by path.
type Received = Arc<Mutex<Vec<(String, Bytes)>>>;

async fn receive(State(received): State<Received>, uri: axum::http::Uri, body: Bytes) -> Bytes {
    received.lock().unwrap().push((uri.path().to_owned(), body));
    // An empty protobuf message: the export response with nothing rejected.
    Bytes::new()
}

fn value(attributes: &[KeyValue], key: &str) -> Option<any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.clone())
}

fn string(attributes: &[KeyValue], key: &str) -> Option<String> {
    match value(attributes, key) {
        Some(any_value::Value::StringValue(s)) => Some(s),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_main_job_delivers_one_trace_and_its_metrics_by_otlp() {
    let received = Received::default();
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(receive))
        .route("/v1/metrics", axum::routing::post(receive))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_plan-pipeline"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
        .env_remove("OTEL_SDK_DISABLED")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");

    let received = received.lock().unwrap().clone();
    let mut spans: Vec<Span> = Vec::new();
    let mut services = Vec::new();
    let mut metric_names = Vec::new();
    for (path, body) in &received {
        match path.as_str() {
            "/v1/traces" => {
                let request = ExportTraceServiceRequest::decode(body.clone()).unwrap();
                for resource in request.resource_spans {
                    if let Some(r) = &resource.resource {
                        services.extend(string(&r.attributes, "service.name"));
                    }
                    for scope in resource.scope_spans {
                        spans.extend(scope.spans);
                    }
                }
            }
            "/v1/metrics" => {
                let request = ExportMetricsServiceRequest::decode(body.clone()).unwrap();
                for resource in request.resource_metrics {
                    for scope in resource.scope_metrics {
                        metric_names.extend(scope.metrics.into_iter().map(|m| m.name));
                    }
                }
            }
            other => panic!("an export to {other}"),
        }
    }
    assert!(!services.is_empty() && services.iter().all(|s| s == "plan-pipeline"));

    // One trace; its one root is the main agent's call.
    let trace = &spans.first().expect("spans arrived").trace_id;
    assert!(spans.iter().all(|s| &s.trace_id == trace));
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1);
    let main = roots[0];
    assert_eq!(main.name, "invoke_agent main_agent");
    let conversation = string(&main.attributes, "gen_ai.conversation.id").unwrap();
    assert!(
        spans.iter().all(
            |s| string(&s.attributes, "gen_ai.conversation.id").as_ref() == Some(&conversation)
        )
    );
    let children = |parent: &Span| -> Vec<&Span> {
        spans
            .iter()
            .filter(|s| s.parent_span_id == parent.span_id)
            .collect()
    };
    let under_main = children(main);
    assert_eq!(
        under_main
            .iter()
            .filter(|s| s.name == "chat scripted")
            .count(),
        6
    );
    let executes: Vec<_> = under_main
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(executes.len(), 5);
    for execute in &executes {
        let agent = execute.name.trim_start_matches("execute_tool run_");
        let sub = children(execute);
        assert_eq!(sub.len(), 1, "{}", execute.name);
        assert_eq!(sub[0].name, format!("invoke_agent {agent}"));
    }

    // The plan generator's refused call: a violated input verdict naming the missing field.
    let refused = spans
        .iter()
        .find(|s| {
            s.name == "invoke_agent plan_generator_agent"
                && string(&s.attributes, "error.type").as_deref() == Some("contract_violation")
        })
        .expect("the refused call");
    let check = refused
        .events
        .iter()
        .find(|e| e.name == "agent_contracts.contract.check")
        .expect("its verdict");
    assert_eq!(
        string(&check.attributes, "agent_contracts.contract.side").as_deref(),
        Some("input")
    );
    assert_eq!(
        string(&check.attributes, "agent_contracts.contract.verdict").as_deref(),
        Some("violated")
    );
    let Some(any_value::Value::ArrayValue(violations)) =
        value(&check.attributes, "agent_contracts.contract.violations")
    else {
        panic!("the violations are an array: {check:?}");
    };
    let violations: Vec<_> = violations
        .values
        .iter()
        .filter_map(|v| match &v.value {
            Some(any_value::Value::StringValue(s)) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        violations.contains(&"/collected_information"),
        "{violations:?}"
    );

    for name in [
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "agent_contracts.contract.checks",
    ] {
        assert!(
            metric_names.iter().any(|n| n == name),
            "{name}: {metric_names:?}"
        );
    }
}
