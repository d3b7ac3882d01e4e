//! String-array attributes, which `tracing` cannot carry: the runtime records
//! `gen_ai.response.finish_reasons` and a verdict's `agent_contracts.contract.violations` as a
//! JSON array in text, and `tracing-opentelemetry` passes text on as text. This tracer hands
//! every span to the SDK's, those two attributes made string arrays on the way, whether they
//! come with the span, are recorded later, or ride on a span event. It wraps the tracer
//! rather than the exporter so that it works with any provider, an in-memory one included.

use agent_contracts_runtime::telemetry::CONTRACT_VIOLATIONS;
use opentelemetry::trace::{Span, SpanBuilder, SpanContext, Status, Tracer};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SdkTracer;
use std::borrow::Cow;
use std::time::SystemTime;

/// The attributes the conventions (or this crate) define as string arrays.
const ARRAY_FIELDS: [&str; 2] = ["gen_ai.response.finish_reasons", CONTRACT_VIOLATIONS];

/// The SDK's tracer, its spans' string-array attributes set as arrays.
#[derive(Debug)]
pub(crate) struct ArrayTracer(pub(crate) SdkTracer);

impl Tracer for ArrayTracer {
    type Span = ArraySpan;

    fn build_with_context(&self, mut builder: SpanBuilder, parent_cx: &Context) -> ArraySpan {
        // What was recorded before the span started is still in its builder.
        builder.attributes.iter_mut().flatten().for_each(as_array);
        for event in builder.events.iter_mut().flatten() {
            event.attributes.iter_mut().for_each(as_array);
        }
        ArraySpan(self.0.build_with_context(builder, parent_cx))
    }
}

/// An SDK span whose string-array attributes are set as arrays.
#[derive(Debug)]
pub(crate) struct ArraySpan(opentelemetry_sdk::trace::Span);

impl Span for ArraySpan {
    fn add_event_with_timestamp<T>(
        &mut self,
        name: T,
        timestamp: SystemTime,
        mut attributes: Vec<KeyValue>,
    ) where
        T: Into<Cow<'static, str>>,
    {
        attributes.iter_mut().for_each(as_array);
        self.0.add_event_with_timestamp(name, timestamp, attributes);
    }

    fn span_context(&self) -> &SpanContext {
        self.0.span_context()
    }

    fn is_recording(&self) -> bool {
        self.0.is_recording()
    }

    fn set_attribute(&mut self, mut attribute: KeyValue) {
        as_array(&mut attribute);
        self.0.set_attribute(attribute);
    }

    fn set_status(&mut self, status: Status) {
        self.0.set_status(status);
    }

    fn update_name<T>(&mut self, new_name: T)
    where
        T: Into<Cow<'static, str>>,
    {
        self.0.update_name(new_name);
    }

    fn add_link(&mut self, span_context: SpanContext, attributes: Vec<KeyValue>) {
        self.0.add_link(span_context, attributes);
    }

    fn end_with_timestamp(&mut self, timestamp: SystemTime) {
        self.0.end_with_timestamp(timestamp);
    }
}

/// One of [`ARRAY_FIELDS`] holding a JSON array of strings in text, as a string array; any
/// other attribute, or other text, as it is.
fn as_array(attribute: &mut KeyValue) {
    if !ARRAY_FIELDS.contains(&attribute.key.as_str()) {
        return;
    }
    let Value::String(text) = &attribute.value else {
        return;
    };
    if let Ok(items) = serde_json::from_str::<Vec<String>>(text.as_str()) {
        attribute.value = Value::Array(Array::String(
            items.into_iter().map(StringValue::from).collect(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converted(key: &'static str, text: &'static str) -> Value {
        let mut attribute = KeyValue::new(key, text);
        as_array(&mut attribute);
        attribute.value
    }

    #[test]
    fn only_the_array_fields_json_arrays_become_arrays() {
        let Value::Array(Array::String(items)) =
            converted(CONTRACT_VIOLATIONS, r#"["/a","/b~1c"]"#)
        else {
            panic!("not an array");
        };
        assert_eq!(items, [StringValue::from("/a"), StringValue::from("/b~1c")]);
        let Value::Array(Array::String(reasons)) =
            converted("gen_ai.response.finish_reasons", r#"["stop"]"#)
        else {
            panic!("not an array");
        };
        assert_eq!(reasons, [StringValue::from("stop")]);
        // Other text, and other attributes, stay as they are.
        assert_eq!(
            converted("gen_ai.response.finish_reasons", "stop"),
            Value::from("stop")
        );
        assert_eq!(
            converted(CONTRACT_VIOLATIONS, "[1, 2]"),
            Value::from("[1, 2]")
        );
        assert_eq!(
            converted("gen_ai.agent.name", r#"["a"]"#),
            Value::from(r#"["a"]"#)
        );
    }
}
