//! The main job's spans, verdicts and metrics, captured in-process by the SDK's in-memory
//! exporters: the span tree, the GenAI attributes, the contract verdicts and the metrics.

use agent_contracts_otel::Telemetry;
use agent_contracts_otel::opentelemetry::trace::{SpanId, SpanKind, Status};
use agent_contracts_otel::opentelemetry::{Array, Value};
use agent_contracts_otel::opentelemetry_sdk::metrics::data::{
    AggregatedMetrics, MetricData, ResourceMetrics,
};
use agent_contracts_otel::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use agent_contracts_otel::opentelemetry_sdk::trace::{
    InMemorySpanExporter, SdkTracerProvider, SpanData,
};
use agent_examples::pipeline;
use std::sync::Arc;
use tracing_subscriber::layer::SubscriberExt as _;

/// What one run of the main job exported.
struct Captured {
    spans: Vec<SpanData>,
    metrics: Vec<ResourceMetrics>,
    run_id: String,
}

fn run_main_job() -> Captured {
    let spans = InMemorySpanExporter::default();
    let metrics = InMemoryMetricExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let telemetry = Telemetry::with_providers(tracer_provider, meter_provider);
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let outcome = tracing::subscriber::with_default(subscriber, || {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(pipeline::run(Arc::new(pipeline::scripted_model())))
    });
    let (_runtime, outcome) = outcome;
    let outcome = outcome.expect("the main job succeeds");
    // Flushed, not shut down: the in-memory exporters forget what they hold at shutdown.
    telemetry.flush().expect("the telemetry is flushed");
    Captured {
        spans: spans.get_finished_spans().expect("the spans"),
        metrics: metrics.get_finished_metrics().expect("the metrics"),
        run_id: outcome.context_id.run_id().to_owned(),
    }
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> String {
    attribute(span, key)
        .map(Value::to_string)
        .unwrap_or_default()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn parent_of<'a>(spans: &'a [SpanData], span: &SpanData) -> Option<&'a SpanData> {
    spans
        .iter()
        .find(|s| s.span_context.span_id() == span.parent_span_id)
}

#[test]
fn the_main_job_is_one_trace_with_its_verdicts_and_metrics() {
    let Captured {
        spans,
        metrics,
        run_id,
    } = run_main_job();

    // One trace, one root: the main agent's `invoke_agent`.
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id == SpanId::INVALID)
        .collect();
    assert_eq!(
        roots.len(),
        1,
        "{:?}",
        roots.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let main = roots[0];
    assert_eq!(main.name, "invoke_agent main_agent");
    assert_eq!(text(main, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(main, "gen_ai.agent.name"), "main_agent");
    let trace = main.span_context.trace_id();
    assert!(spans.iter().all(|s| s.span_context.trace_id() == trace));

    // Every span carries the run's ID as its conversation.
    for span in &spans {
        assert_eq!(
            text(span, "gen_ai.conversation.id"),
            run_id,
            "span {} has another conversation",
            span.name
        );
    }

    // The main agent's model calls and tool calls are its children.
    let main_id = main.span_context.span_id();
    let chats_of_main: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id == main_id && s.name.starts_with("chat"))
        .collect();
    assert_eq!(chats_of_main.len(), 6, "the script's six turns");
    for chat in &chats_of_main {
        assert_eq!(chat.name, "chat scripted");
        assert_eq!(chat.span_kind, SpanKind::Client);
        assert_eq!(
            text(chat, "gen_ai.provider.name"),
            "agent_contracts.scripted"
        );
        assert!(attribute(chat, "gen_ai.usage.input_tokens").is_some());
        assert!(attribute(chat, "gen_ai.usage.output_tokens").is_some());
    }
    let tools = named(&spans, "execute_tool run_plan_generator_agent");
    assert_eq!(tools.len(), 2, "called twice: refused, then answered");
    let executes: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(executes.len(), 5);
    for execute in &executes {
        assert_eq!(execute.parent_span_id, main_id);
        assert_eq!(text(execute, "gen_ai.tool.type"), "function");
        assert!(!text(execute, "gen_ai.tool.call.id").is_empty());
    }

    // Each sub-agent's `invoke_agent` sits under the `execute_tool` that called it.
    let sub_agents: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("invoke_agent ") && s.parent_span_id != SpanId::INVALID)
        .collect();
    assert_eq!(sub_agents.len(), 5);
    for sub in &sub_agents {
        let parent = parent_of(&spans, sub).expect("a parent span");
        let agent = text(sub, "gen_ai.agent.name");
        assert_eq!(parent.name, format!("execute_tool run_{agent}"));
        assert_eq!(text(parent, "gen_ai.tool.name"), format!("run_{agent}"));
        assert!(text(sub, "agent_contracts.context_id").contains(&agent));
    }

    // The plan generator's first call broke its input contract: a violated input verdict
    // naming `/collected_information`, the call failed as a contract violation, no model call.
    let plans: Vec<_> = sub_agents
        .iter()
        .filter(|s| text(s, "gen_ai.agent.name") == "plan_generator_agent")
        .collect();
    assert_eq!(plans.len(), 2);
    let (refused, answered) = (plans[0], plans[1]);
    let verdict = |span: &SpanData| {
        let checks: Vec<_> = span
            .events
            .iter()
            .filter(|e| e.name == "agent_contracts.contract.check")
            .cloned()
            .collect();
        checks
    };
    let refused_checks = verdict(refused);
    assert_eq!(refused_checks.len(), 1, "the input check only");
    let check = &refused_checks[0];
    let field = |key: &str| {
        check
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.clone())
    };
    assert_eq!(field("agent_contracts.contract.side"), Some("input".into()));
    assert_eq!(
        field("agent_contracts.contract.verdict"),
        Some("violated".into())
    );
    assert_eq!(
        field("agent_contracts.contract.attempt"),
        Some(Value::I64(1))
    );
    assert_eq!(field("error.type"), Some("contract_violation".into()));
    let Some(Value::Array(Array::String(violations))) =
        field("agent_contracts.contract.violations")
    else {
        panic!("the violations are a string array: {check:?}");
    };
    assert!(
        violations
            .iter()
            .any(|v| v.as_str() == "/collected_information"),
        "{violations:?}"
    );
    let fingerprint = field("agent_contracts.contract.fingerprint").expect("a fingerprint");
    assert_eq!(fingerprint.to_string().len(), 16);
    assert_eq!(text(refused, "error.type"), "contract_violation");
    assert!(matches!(refused.status, Status::Error { .. }));
    assert!(
        !spans
            .iter()
            .any(|s| s.parent_span_id == refused.span_context.span_id()),
        "a refused call reaches no model"
    );
    let refused_tool = parent_of(&spans, refused).expect("its execute_tool");
    assert_eq!(text(refused_tool, "error.type"), "contract_violation");

    // The second call passed both checks, and its model call is its child.
    let answered_checks = verdict(answered);
    let sides: Vec<_> = answered_checks
        .iter()
        .map(|e| {
            let get = |key: &str| {
                e.attributes
                    .iter()
                    .find(|kv| kv.key.as_str() == key)
                    .map(|kv| kv.value.to_string())
                    .unwrap_or_default()
            };
            (
                get("agent_contracts.contract.side"),
                get("agent_contracts.contract.verdict"),
            )
        })
        .collect();
    assert_eq!(
        sides,
        [
            ("input".into(), "ok".into()),
            ("output".into(), "ok".into())
        ]
    );
    assert_eq!(attribute(answered, "error.type"), None);
    assert!(
        spans
            .iter()
            .any(|s| s.parent_span_id == answered.span_context.span_id()
                && s.name == "chat scripted")
    );

    // The metrics: tokens by type, durations, and the verdicts by agent, side and verdict.
    let mut names = Vec::new();
    let mut violated_inputs = 0;
    let mut token_points = 0;
    for resource in &metrics {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                names.push(metric.name().to_owned());
                match (metric.name(), metric.data()) {
                    (
                        "agent_contracts.contract.checks",
                        AggregatedMetrics::U64(MetricData::Sum(sum)),
                    ) => {
                        for point in sum.data_points() {
                            let labels: Vec<_> = point
                                .attributes()
                                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                                .collect();
                            let has = |k: &str, v: &str| labels.contains(&(k.into(), v.into()));
                            if has("gen_ai.agent.name", "plan_generator_agent")
                                && has("agent_contracts.contract.side", "input")
                                && has("agent_contracts.contract.verdict", "violated")
                            {
                                violated_inputs += point.value();
                            }
                        }
                    }
                    (
                        "gen_ai.client.token.usage",
                        AggregatedMetrics::U64(MetricData::Histogram(h)),
                    ) => {
                        for point in h.data_points() {
                            assert!(point.sum() > 0);
                            token_points += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    assert_eq!(violated_inputs, 1, "{names:?}");
    assert!(token_points >= 2, "input and output tokens: {names:?}");
    assert!(
        names
            .iter()
            .any(|n| n == "gen_ai.client.operation.duration")
    );
}
