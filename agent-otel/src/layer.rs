//! The `tracing` layer that turns the runtime's spans and events into OpenTelemetry spans,
//! span events and metrics.
//!
//! It keeps `tracing-opentelemetry`'s conventions (`otel.name`, `otel.kind`,
//! `otel.status_code`; an event inside a span is a span event named by its message) but
//! builds each OpenTelemetry span itself, because the runtime needs three things that crate
//! keeps private: string-array attributes (`gen_ai.response.finish_reasons`, a verdict's
//! violations; `tracing` records text), a remote parent read from a field (an MCP request's
//! `traceparent`), and the metrics fed from the same spans and events.

use crate::traceparent;
use agent_contracts_runtime::telemetry as names;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SdkTracer;
use std::borrow::Cow;
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

/// Fields whose text is a JSON array of strings, set as string-array attributes.
const ARRAY_FIELDS: [&str; 2] = ["gen_ai.response.finish_reasons", names::CONTRACT_VIOLATIONS];

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

/// The metrics fed from the spans and events.
struct Instruments {
    token_usage: Histogram<u64>,
    duration: Histogram<f64>,
    checks: Counter<u64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Self {
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
}

/// The layer: see the module's documentation. Made by [`Telemetry::layer`](crate::Telemetry::layer).
pub(crate) struct OtelLayer {
    tracer: SdkTracer,
    instruments: Instruments,
}

impl OtelLayer {
    pub(crate) fn new(tracer: SdkTracer, meter: &Meter) -> Self {
        Self {
            tracer,
            instruments: Instruments::new(meter),
        }
    }
}

/// What the layer keeps in a `tracing` span's extensions: its OpenTelemetry span (in a
/// context, the parent of its children) and, for a `chat` span, what its metrics need.
struct OtelSpan {
    cx: Context,
    chat: Option<Chat>,
}

/// The OpenTelemetry context of a span's extensions, if this layer keeps the span.
pub(crate) fn context_of(
    extensions: &tracing_subscriber::registry::Extensions<'_>,
) -> Option<Context> {
    extensions.get::<OtelSpan>().map(|otel| otel.cx.clone())
}

/// A `chat` span's metric inputs, recorded as its fields arrive.
struct Chat {
    start: Instant,
    attributes: Vec<KeyValue>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Chat {
    fn note(&mut self, key: &'static str, value: &Value) {
        match key {
            "gen_ai.usage.input_tokens" => self.input_tokens = as_u64(value),
            "gen_ai.usage.output_tokens" => self.output_tokens = as_u64(value),
            key if CHAT_METRIC_ATTRIBUTES.contains(&key) => {
                self.attributes.retain(|kv| kv.key.as_str() != key);
                self.attributes.push(KeyValue::new(key, value.clone()));
            }
            _ => {}
        }
    }
}

fn as_u64(value: &Value) -> Option<u64> {
    match value {
        Value::I64(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// A span's or event's fields, sorted into what `tracing-opentelemetry`'s conventions make
/// of them.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    kind: Option<SpanKind>,
    status: Option<Status>,
    parent: Option<String>,
    message: Option<String>,
    attributes: Vec<(&'static str, Value)>,
}

impl Fields {
    fn set(&mut self, field: &Field, value: Value) {
        let key = field.name();
        match key {
            "otel.name" => self.name = Some(value.as_str().into_owned()),
            "otel.kind" => self.kind = span_kind(&value.as_str()),
            "otel.status_code" => self.status = status(&value.as_str()),
            "message" => self.message = Some(value.as_str().into_owned()),
            key if key == names::TRACEPARENT => self.parent = Some(value.as_str().into_owned()),
            key if key.starts_with("otel.") => {}
            key if ARRAY_FIELDS.contains(&key) => {
                self.attributes.push((key, string_array(&value.as_str())))
            }
            key => self.attributes.push((key, value)),
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, Value::String(value.to_owned().into()));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, Value::Bool(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, Value::I64(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        // OTLP integers are signed 64 bits: a larger count is kept as text.
        match i64::try_from(value) {
            Ok(n) => self.set(field, Value::I64(n)),
            Err(_) => self.set(field, Value::String(value.to_string().into())),
        }
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, Value::F64(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, Value::String(format!("{value:?}").into()));
    }
}

fn span_kind(kind: &str) -> Option<SpanKind> {
    Some(match kind.to_ascii_lowercase().as_str() {
        "client" => SpanKind::Client,
        "server" => SpanKind::Server,
        "producer" => SpanKind::Producer,
        "consumer" => SpanKind::Consumer,
        "internal" => SpanKind::Internal,
        _ => return None,
    })
}

fn status(code: &str) -> Option<Status> {
    match code.to_ascii_lowercase().as_str() {
        "error" => Some(Status::error("")),
        "ok" => Some(Status::Ok),
        _ => None,
    }
}

/// A JSON array of strings in text as a string array; any other text as itself.
fn string_array(text: &str) -> Value {
    match serde_json::from_str::<Vec<String>>(text) {
        Ok(items) => Value::Array(Array::String(
            items.into_iter().map(StringValue::from).collect(),
        )),
        Err(_) => Value::String(text.to_owned().into()),
    }
}

/// Whether a span is the runtime's `chat` span of a model call.
fn is_chat(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.name() == "chat" && metadata.target() == names::TARGET
}

impl<S> tracing_subscriber::Layer<S> for OtelLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        // A remote parent (an MCP request's `traceparent`) wins; else the nearest span this
        // layer keeps; else the span is a root.
        let remote = fields.parent.as_deref().and_then(traceparent::parse);
        let parent_cx = match remote {
            Some(remote) => Context::new().with_remote_span_context(remote),
            None => span
                .scope()
                .skip(1)
                .find_map(|ancestor| {
                    ancestor
                        .extensions()
                        .get::<OtelSpan>()
                        .map(|otel| otel.cx.clone())
                })
                .unwrap_or_default(),
        };
        let metadata = attrs.metadata();
        let name: Cow<'static, str> = match fields.name.take() {
            Some(name) => name.into(),
            None => metadata.name().into(),
        };
        let mut chat = is_chat(metadata).then(|| Chat {
            start: Instant::now(),
            attributes: Vec::new(),
            input_tokens: None,
            output_tokens: None,
        });
        let mut attributes = Vec::with_capacity(fields.attributes.len());
        for (key, value) in fields.attributes {
            if let Some(chat) = chat.as_mut() {
                chat.note(key, &value);
            }
            attributes.push(KeyValue::new(key, value));
        }
        let builder = self
            .tracer
            .span_builder(name)
            .with_kind(fields.kind.unwrap_or(SpanKind::Internal))
            .with_attributes(attributes);
        let mut otel_span = self.tracer.build_with_context(builder, &parent_cx);
        if let Some(status) = fields.status {
            otel_span.set_status(status);
        }
        let cx = parent_cx.with_span(otel_span);
        span.extensions_mut().insert(OtelSpan { cx, chat });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut fields = Fields::default();
        values.record(&mut fields);
        let mut extensions = span.extensions_mut();
        let Some(otel) = extensions.get_mut::<OtelSpan>() else {
            return;
        };
        let otel_span = otel.cx.span();
        if let Some(name) = fields.name {
            otel_span.update_name(name);
        }
        if let Some(status) = fields.status {
            otel_span.set_status(status);
        }
        for (key, value) in fields.attributes {
            if let Some(chat) = otel.chat.as_mut() {
                chat.note(key, &value);
            }
            otel_span.set_attribute(KeyValue::new(key, value));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: LayerContext<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let name = fields
            .message
            .take()
            .unwrap_or_else(|| event.metadata().name().to_owned());
        if name == names::CONTRACT_CHECK {
            self.count_check(&fields.attributes);
        }
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let extensions = span.extensions();
        let Some(otel) = extensions.get::<OtelSpan>() else {
            return;
        };
        let attributes = fields
            .attributes
            .into_iter()
            .map(|(key, value)| KeyValue::new(key, value))
            .collect();
        otel.cx.span().add_event(name, attributes);
    }

    fn on_close(&self, id: Id, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(otel) = span.extensions_mut().remove::<OtelSpan>() else {
            return;
        };
        if let Some(chat) = &otel.chat {
            self.record_chat(chat);
        }
        otel.cx.span().end();
    }
}

impl OtelLayer {
    /// `agent_contracts.contract.checks`, by agent, side and verdict.
    fn count_check(&self, attributes: &[(&'static str, Value)]) {
        let wanted = [
            "gen_ai.agent.name",
            names::CONTRACT_SIDE,
            names::CONTRACT_VERDICT,
        ];
        let labels: Vec<KeyValue> = attributes
            .iter()
            .filter(|(key, _)| wanted.contains(key))
            .map(|(key, value)| KeyValue::new(*key, value.clone()))
            .collect();
        self.instruments.checks.add(1, &labels);
    }

    /// A model call's duration, and its input and output tokens when it reported them.
    fn record_chat(&self, chat: &Chat) {
        let seconds = chat.start.elapsed().as_secs_f64();
        self.instruments.duration.record(seconds, &chat.attributes);
        // `error.type` is an attribute of the duration only.
        let mut attributes: Vec<KeyValue> = chat
            .attributes
            .iter()
            .filter(|kv| kv.key.as_str() != "error.type")
            .cloned()
            .collect();
        for (kind, tokens) in [("input", chat.input_tokens), ("output", chat.output_tokens)] {
            if let Some(tokens) = tokens {
                attributes.push(KeyValue::new("gen_ai.token.type", kind));
                self.instruments.token_usage.record(tokens, &attributes);
                attributes.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_kinds_and_statuses_read_as_the_conventions_write_them() {
        let Value::Array(Array::String(items)) = string_array(r#"["/a","/b~1c"]"#) else {
            panic!("not an array");
        };
        assert_eq!(items, [StringValue::from("/a"), StringValue::from("/b~1c")]);
        assert_eq!(string_array("stop"), Value::String("stop".into()));
        assert_eq!(span_kind("client"), Some(SpanKind::Client));
        assert_eq!(span_kind("CLIENT"), Some(SpanKind::Client));
        assert_eq!(span_kind("sideways"), None);
        assert_eq!(status("error"), Some(Status::error("")));
        assert_eq!(status("unset"), None);
    }
}
