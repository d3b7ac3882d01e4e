//! The `tracing` layer beside `tracing-opentelemetry`'s: the GenAI metrics, and a span name
//! recorded after the span started.
//!
//! - Metrics. `tracing-opentelemetry`'s `MetricsLayer` makes an instrument of an event's
//!   `histogram.*` or `counter.*` field, every other field of the event an attribute, with no
//!   unit, description or bucket boundaries. The conventions' histograms come from a `chat`
//!   span instead (its token counts, its duration), with their units and boundaries, and the
//!   verdict counter takes three of a check's fields (not its violations or fingerprint, which
//!   would make a series per call). So this layer feeds the meter directly.
//! - Names. `tracing-opentelemetry` 0.34 takes `otel.name` when a span is made, but drops it
//!   when recorded after the span started (tokio-rs/tracing-opentelemetry#240), and a model
//!   names its `chat` span (`chat {model}`) when it is called, inside the span. This layer
//!   renames the OpenTelemetry span itself, as that issue advises.

use agent_contracts_runtime::telemetry as names;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::{KeyValue, Value};
use std::time::Instant;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context as LayerContext;
use tracing_subscriber::registry::LookupSpan;

/// The bucket boundaries the GenAI conventions advise for `gen_ai.client.token.usage`.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The bucket boundaries the GenAI conventions advise for `gen_ai.client.operation.duration`
/// (seconds).
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The attributes of a `chat` span that its metrics carry, by the GenAI conventions.
const CHAT_METRIC_ATTRIBUTES: [&str; 7] = [
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "server.address",
    "server.port",
    "error.type",
];

/// The attributes of `agent_contracts.contract.checks`.
const CHECK_METRIC_ATTRIBUTES: [&str; 3] = [
    "gen_ai.agent.name",
    names::CONTRACT_SIDE,
    names::CONTRACT_VERDICT,
];

/// The layer: see the module's documentation. Made by [`Telemetry::layer`](crate::Telemetry::layer).
pub(crate) struct MetricsAndNames {
    token_usage: Histogram<u64>,
    duration: Histogram<f64>,
    checks: Counter<u64>,
}

impl MetricsAndNames {
    pub(crate) fn new(meter: &Meter) -> Self {
        Self {
            token_usage: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Number of input and output tokens used.")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
            duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("GenAI operation duration.")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            checks: meter
                .u64_counter("agent_contracts.contract.checks")
                .with_description("Contract checks of agents' inputs and outputs, by verdict.")
                .build(),
        }
    }

    /// Renames `id`'s OpenTelemetry span, through the subscriber that holds this layer (the
    /// thread's, checked: a layer wrapped in an `Option` is not told its dispatcher).
    fn rename(&self, id: &Id, name: String) {
        let cx = tracing::dispatcher::get_default(|dispatch| {
            let ours = dispatch
                .downcast_ref::<Self>()
                .is_some_and(|layer| std::ptr::eq(layer, self));
            ours.then(|| tracing_opentelemetry::get_otel_context(id, dispatch))
                .flatten()
        });
        if let Some(cx) = cx {
            cx.span().update_name(name);
        }
    }

    /// A model call's duration, and its input and output tokens when it reported them.
    fn record_chat(&self, chat: Chat) {
        let seconds = chat.start.elapsed().as_secs_f64();
        self.duration.record(seconds, &chat.attributes);
        // `error.type` is an attribute of the duration only.
        let mut attributes = chat.attributes;
        attributes.retain(|kv| kv.key.as_str() != "error.type");
        for (kind, tokens) in [("input", chat.input_tokens), ("output", chat.output_tokens)] {
            if let Some(tokens) = tokens {
                attributes.push(KeyValue::new("gen_ai.token.type", kind));
                self.token_usage.record(tokens, &attributes);
                attributes.pop();
            }
        }
    }
}

/// A `chat` span's metric inputs, kept in its extensions as its fields arrive.
struct Chat {
    start: Instant,
    attributes: Vec<KeyValue>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Chat {
    fn note(&mut self, key: &'static str, value: Value) {
        match (key, value) {
            ("gen_ai.usage.input_tokens", Value::I64(n)) => self.input_tokens = n.try_into().ok(),
            ("gen_ai.usage.output_tokens", Value::I64(n)) => self.output_tokens = n.try_into().ok(),
            (key, value) if CHAT_METRIC_ATTRIBUTES.contains(&key) => {
                self.attributes.retain(|kv| kv.key.as_str() != key);
                self.attributes.push(KeyValue::new(key, value));
            }
            _ => {}
        }
    }
}

/// The fields of a span or event that `keep` names, as OpenTelemetry values, and the
/// `otel.name` among them.
struct Fields<F> {
    keep: F,
    name: Option<String>,
    values: Vec<(&'static str, Value)>,
}

impl<F: Fn(&str) -> bool> Fields<F> {
    fn new(keep: F) -> Self {
        Self {
            keep,
            name: None,
            values: Vec::new(),
        }
    }

    fn set(&mut self, field: &Field, value: impl FnOnce() -> Value) {
        match field.name() {
            "otel.name" => self.name = Some(value().as_str().into_owned()),
            key if (self.keep)(key) => self.values.push((key, value())),
            _ => {}
        }
    }
}

impl<F: Fn(&str) -> bool> Visit for Fields<F> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, || Value::from(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, || Value::I64(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, || Value::from(format!("{value:?}")));
    }
}

fn chat_field(key: &str) -> bool {
    CHAT_METRIC_ATTRIBUTES.contains(&key) || key.starts_with("gen_ai.usage.")
}

/// Whether a span is the runtime's `chat` span of a model call.
fn is_chat(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.name() == "chat" && metadata.target() == names::TARGET
}

impl<S> tracing_subscriber::Layer<S> for MetricsAndNames
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        if !is_chat(attrs.metadata()) {
            return;
        }
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut chat = Chat {
            start: Instant::now(),
            attributes: Vec::new(),
            input_tokens: None,
            output_tokens: None,
        };
        let mut fields = Fields::new(chat_field);
        attrs.record(&mut fields);
        for (key, value) in fields.values {
            chat.note(key, value);
        }
        span.extensions_mut().insert(chat);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let chat = is_chat(span.metadata());
        let mut fields = Fields::new(|key: &str| chat && chat_field(key));
        values.record(&mut fields);
        if let Some(name) = fields.name {
            self.rename(id, name);
        }
        if let Some(chat) = span.extensions_mut().get_mut::<Chat>() {
            for (key, value) in fields.values {
                chat.note(key, value);
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: LayerContext<'_, S>) {
        // A contract check is the runtime's event with a verdict.
        let metadata = event.metadata();
        if metadata.target() != names::TARGET
            || metadata.fields().field(names::CONTRACT_VERDICT).is_none()
        {
            return;
        }
        let mut fields = Fields::new(|key: &str| CHECK_METRIC_ATTRIBUTES.contains(&key));
        event.record(&mut fields);
        let attributes: Vec<KeyValue> = fields
            .values
            .into_iter()
            .map(|(key, value)| KeyValue::new(key, value))
            .collect();
        self.checks.add(1, &attributes);
    }

    fn on_close(&self, id: Id, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let chat = span.extensions_mut().remove::<Chat>();
        if let Some(chat) = chat {
            self.record_chat(chat);
        }
    }
}
