//! A workflow run's spans, captured in-process: each drive of the run (up to the question,
//! then from the answer to the plan) is one trace whose one root is `invoke_workflow`, its
//! steps beneath it, every span carrying the run's ID as its conversation. And the trace
//! context hooks the MCP server and client use: a `traceparent` continues a remote trace,
//! anything else leaves a span where it was, and the current span's `traceparent` is read.

use agent_contracts_otel::Telemetry;
use agent_contracts_otel::opentelemetry::trace::{SpanId, TraceId};
use agent_contracts_otel::opentelemetry_sdk::metrics::SdkMeterProvider;
use agent_contracts_otel::opentelemetry_sdk::trace::{
    InMemorySpanExporter, SdkTracerProvider, SpanData,
};
use agent_contracts_runtime::telemetry;
use agent_contracts_runtime::workflow::WorkflowOutcome;
use agent_examples::event_planning::{self, HUMAN_ANSWER, PLAN, REQUEST};
use std::sync::Arc;
use tracing_subscriber::layer::SubscriberExt as _;

/// A telemetry whose spans land in the returned exporter.
fn in_memory() -> (Telemetry, InMemorySpanExporter) {
    let spans = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let telemetry = Telemetry::with_providers(provider, SdkMeterProvider::builder().build());
    (telemetry, spans)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

fn children<'a>(spans: &'a [SpanData], parent: &SpanData) -> Vec<&'a SpanData> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == parent.span_context.span_id())
        .collect()
}

#[test]
fn a_workflow_run_is_a_root_span_with_its_steps_beneath() {
    let (telemetry, exporter) = in_memory();
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let run_id = tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let workflow = event_planning::workflow();
            let runner = workflow.runner(Arc::new(event_planning::scripted_model()));
            let WorkflowOutcome::NeedsInput { state, .. } = runner.start(REQUEST).await.unwrap()
            else {
                panic!("the catering agent asks first");
            };
            let WorkflowOutcome::Finished { output, state } =
                runner.resume(state, HUMAN_ANSWER).await.unwrap()
            else {
                panic!("the plan");
            };
            assert_eq!(output, PLAN);
            state.run_id
        })
    });
    telemetry.flush().expect("flushed");
    let spans = exporter.get_finished_spans().expect("the spans");
    let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();

    // Two drives of one run: two roots, both `invoke_workflow`, each its own trace.
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id == SpanId::INVALID)
        .collect();
    assert_eq!(roots.len(), 2, "{names:?}");
    for root in &roots {
        assert_eq!(root.name, "invoke_workflow event_planning");
        assert_eq!(
            text(root, "gen_ai.operation.name").as_deref(),
            Some("invoke_workflow")
        );
        assert_eq!(
            text(root, "gen_ai.workflow.name").as_deref(),
            Some("event_planning")
        );
    }
    let (first, second) = match roots[0].start_time < roots[1].start_time {
        true => (roots[0], roots[1]),
        false => (roots[1], roots[0]),
    };
    let traces = [
        first.span_context.trace_id(),
        second.span_context.trace_id(),
    ];
    assert_ne!(traces[0], traces[1]);
    assert!(
        spans
            .iter()
            .all(|s| traces.contains(&s.span_context.trace_id()))
    );

    // Every span of the run, both drives, carries the run's ID as its conversation.
    for span in &spans {
        assert_eq!(
            text(span, "gen_ai.conversation.id").as_deref(),
            Some(run_id.as_str()),
            "{}",
            span.name
        );
    }

    // The steps are the root's children, in the route's order; each step's model call is its
    // child, named by the scripted model.
    let steps = |root: &SpanData| -> Vec<String> {
        let mut steps = children(&spans, root);
        steps.sort_by_key(|s| s.start_time);
        steps.iter().map(|s| s.name.to_string()).collect()
    };
    assert_eq!(
        steps(first),
        [
            "invoke_agent venue_agent",
            "invoke_agent budget_agent",
            "invoke_agent catering_agent"
        ]
    );
    // After the answer: the catering agent again, the logistics agent, and the synthesis's
    // model call, which no agent makes.
    assert_eq!(
        steps(second),
        [
            "invoke_agent catering_agent",
            "invoke_agent logistics_agent",
            "chat scripted"
        ]
    );
    for step in children(&spans, first)
        .into_iter()
        .chain(children(&spans, second))
        .filter(|s| s.name.starts_with("invoke_agent "))
    {
        let agent = text(step, "gen_ai.agent.name").expect("the step's agent");
        assert_eq!(step.name, format!("invoke_agent {agent}"));
        let chats = children(&spans, step);
        assert_eq!(chats.len(), 1, "{}", step.name);
        assert_eq!(chats[0].name, "chat scripted");
        assert_eq!(
            text(chats[0], "gen_ai.agent.name").as_deref(),
            Some(agent.as_str())
        );
    }
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

#[test]
fn a_traceparent_continues_the_callers_trace_and_the_current_one_is_read() {
    let (telemetry, exporter) = in_memory();
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let read = tracing::subscriber::with_default(subscriber, || {
        let joined = tracing::info_span!(target: "agent_contracts", "joined");
        telemetry::continue_trace(&joined, &format!("00-{TRACE}-{PARENT}-01"));
        let read = joined.in_scope(telemetry::current_traceparent);
        drop(joined);
        // Not a trace context: the span stays the child of the span it was made in.
        let outer = tracing::info_span!(target: "agent_contracts", "outer");
        outer.in_scope(|| {
            for bad in [
                format!("00-{TRACE}-0000000000000000-01"),
                "00-not-a-traceparent".to_owned(),
            ] {
                let inner = tracing::info_span!(target: "agent_contracts", "inner");
                telemetry::continue_trace(&inner, &bad);
                inner.in_scope(|| {});
            }
        });
        // A span that started keeps its parent.
        let late = tracing::info_span!(target: "agent_contracts", "late");
        late.in_scope(|| {});
        telemetry::continue_trace(&late, &format!("00-{TRACE}-{PARENT}-01"));
        read
    });
    telemetry.flush().expect("flushed");
    let spans = exporter.get_finished_spans().expect("the spans");
    let named =
        |name: &str| -> Vec<&SpanData> { spans.iter().filter(|s| s.name == name).collect() };

    let joined = named("joined")[0];
    assert_eq!(joined.span_context.trace_id().to_string(), TRACE);
    assert_eq!(joined.parent_span_id.to_string(), PARENT);
    assert!(joined.parent_span_is_remote);
    assert_eq!(
        read,
        Some(format!("00-{TRACE}-{}-01", joined.span_context.span_id()))
    );

    let outer = named("outer")[0];
    let inner = named("inner");
    assert_eq!(inner.len(), 2);
    for inner in inner {
        assert_eq!(inner.parent_span_id, outer.span_context.span_id());
        assert_eq!(inner.span_context.trace_id(), outer.span_context.trace_id());
    }
    assert_ne!(outer.span_context.trace_id().to_string(), TRACE);

    let late = named("late")[0];
    assert_eq!(late.parent_span_id, SpanId::INVALID);
    assert_ne!(
        late.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );

    // Outside any span there is no trace context to send.
    assert_eq!(telemetry::current_traceparent(), None);
}

#[test]
fn arrays_counts_and_late_names_are_exported_as_the_conventions_type_them() {
    use agent_contracts_otel::opentelemetry::{Array, StringValue, Value};
    use agent_contracts_runtime::Message;
    use agent_contracts_runtime::model::{ChatResponse, Usage};

    let (telemetry, exporter) = in_memory();
    // As the binaries add it: an optional layer (which is not told its dispatcher).
    let subscriber = tracing_subscriber::registry().with(Some(telemetry.layer()));
    tracing::subscriber::with_default(subscriber, || {
        let response = ChatResponse::from(Message::assistant("done"))
            .with_finish_reason("stop")
            .with_usage(Usage::new(12, 3));
        // Recorded before the span started (still a builder), then after.
        let early = telemetry::chat("early_agent", Some("run"));
        telemetry::record_response(&early, &response);
        early.in_scope(|| telemetry::record_model("provider", Some("model-a"), None));
        let late = telemetry::chat("late_agent", Some("run"));
        late.in_scope(|| {
            telemetry::record_model("provider", Some("model-b"), Some(("127.0.0.1", 8080)));
            telemetry::record_response(&late, &response);
        });
        // A verdict's violations on an event of a span that has not started, and of one that
        // has.
        let agent = tracing::info_span!(target: "agent_contracts", "invoke_agent");
        tracing::event!(
            target: "agent_contracts",
            parent: &agent,
            tracing::Level::INFO,
            { agent_contracts.contract.violations = r#"["/a","/b"]"# },
            "agent_contracts.contract.check"
        );
        agent.in_scope(|| {
            tracing::event!(
                target: "agent_contracts",
                tracing::Level::INFO,
                { agent_contracts.contract.violations = r#"["/c"]"# },
                "agent_contracts.contract.check"
            );
        });
    });
    telemetry.flush().expect("flushed");
    let spans = exporter.get_finished_spans().expect("the spans");
    let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();
    let value = |span: &SpanData, key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.clone())
    };
    let strings = |items: &[&'static str]| {
        Value::Array(Array::String(
            items.iter().map(|s| StringValue::from(*s)).collect(),
        ))
    };
    for (name, agent) in [
        ("chat model-a", "early_agent"),
        ("chat model-b", "late_agent"),
    ] {
        let chat = spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} in {names:?}"));
        assert_eq!(text(chat, "gen_ai.agent.name").as_deref(), Some(agent));
        assert_eq!(
            value(chat, "gen_ai.response.finish_reasons"),
            Some(strings(&["stop"]))
        );
        assert_eq!(
            value(chat, "gen_ai.usage.input_tokens"),
            Some(Value::I64(12))
        );
        assert_eq!(
            value(chat, "gen_ai.usage.output_tokens"),
            Some(Value::I64(3))
        );
        // Each attribute once: no text copy beside the array.
        assert_eq!(
            chat.attributes
                .iter()
                .filter(|kv| kv.key.as_str() == "gen_ai.response.finish_reasons")
                .count(),
            1
        );
    }
    let late = spans.iter().find(|s| s.name == "chat model-b").unwrap();
    assert_eq!(value(late, "server.port"), Some(Value::I64(8080)));

    let agent = spans.iter().find(|s| s.name == "invoke_agent").unwrap();
    let violations: Vec<_> = agent
        .events
        .iter()
        .map(|e| {
            e.attributes
                .iter()
                .find(|kv| kv.key.as_str() == "agent_contracts.contract.violations")
                .map(|kv| kv.value.clone())
        })
        .collect();
    assert_eq!(
        violations,
        [Some(strings(&["/a", "/b"])), Some(strings(&["/c"]))]
    );
}
