//! The GenAI tracing fields, seen by a subscriber: request and response fields on the `chat`
//! span, tool calls and errors as fields, message contents only on opt-in.
//!
//! A test binary of its own, apart from `tests/all/`: the subscriber is the test thread's
//! (`set_default`), but tracing caches each callsite's interest for the whole process. With
//! one scoped subscriber alive, a callsite first reached on another thread (another test's
//! model call) is cached as "never", and this test would miss its spans; a process of its own
//! has no other thread reaching them.

#[path = "all/common/mod.rs"]
mod common;

use agent_contracts_llm::{ManualClock, Traced};
use agent_contracts_runtime::{ChatModel, Message, model::ChatRequest, model::ModelError};
use common::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

/// Every field value recorded, by span or event name then field name.
#[derive(Clone, Default)]
struct Fields(Arc<Mutex<Vec<(String, String, String)>>>);

struct Visitor<'a>(&'a Fields, &'a str);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.push(field, format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, value.to_owned());
    }
}

impl Visitor<'_> {
    fn push(&self, field: &Field, value: String) {
        let mut all = self
            .0
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.push((self.1.to_owned(), field.name().to_owned(), value));
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S>
    for Fields
{
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        attrs.record(&mut Visitor(self, attrs.metadata().name()));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let name = ctx.span(id).map_or("?", |s| s.name());
        values.record(&mut Visitor(self, name));
    }
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        event.record(&mut Visitor(self, "event"));
    }
}

impl Fields {
    /// The fields of `scope` (a span name, or `event`), the last value winning.
    fn of(&self, scope: &str) -> BTreeMap<String, String> {
        let all = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.iter()
            .filter(|(s, ..)| s == scope)
            .map(|(_, k, v)| (k.clone(), v.clone()))
            .collect()
    }
    fn any_value_contains(&self, text: &str) -> bool {
        let all = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.iter().any(|(_, _, v)| v.contains(text))
    }
}

const SECRET_PROMPT: &str = "my card number is 4111";

fn request() -> ChatRequest {
    ChatRequest::new("main_agent", vec![Message::user(SECRET_PROMPT)], Vec::new())
}

fn tool_reply() -> wiremock::ResponseTemplate {
    let reply = json!({"role": "assistant", "tool_calls": [{"id": "call_7", "type": "function",
        "function": {"name": "run_discovery_agent", "arguments": "{}"}}]});
    ok(completion(reply, "tool_calls"))
}

#[tokio::test]
async fn a_model_call_records_the_gen_ai_fields() {
    let fields = Fields::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(fields.clone()));
    let server = serve(OPENAI_PATH, vec![tool_reply(), tool_reply(), status(401)]).await;
    let clock = Arc::new(ManualClock::new());

    let traced = |model| {
        Traced::new(model)
            .provider("openai")
            .request_model("gpt-test")
    };
    traced(openai(&server, &clock))
        .complete(&request())
        .await
        .expect("a reply");
    let mut chat = fields.of("chat");
    // The server is where the model was asked: the test server's loopback address and port.
    assert_eq!(chat.remove("server.address").as_deref(), Some("127.0.0.1"));
    assert!(chat.remove("server.port").is_some_and(|port| port != "0"));
    let expected: BTreeMap<String, String> = [
        ("otel.name", "chat gpt-test"),
        ("otel.kind", "client"),
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "gpt-test"),
        ("gen_ai.agent.name", "main_agent"),
        ("gen_ai.response.id", "chatcmpl-1"),
        ("gen_ai.response.model", "gpt-test-2026"),
        ("gen_ai.response.finish_reasons", r#"["tool_calls"]"#),
        ("gen_ai.usage.input_tokens", "12"),
        ("gen_ai.usage.output_tokens", "5"),
        ("gen_ai.usage.cache_read.input_tokens", "4"),
        ("gen_ai.usage.cache_creation.input_tokens", "0"),
        ("gen_ai.usage.reasoning.output_tokens", "3"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(chat, expected);
    let event = fields.of("event");
    assert_eq!(
        event.get("gen_ai.tool.name").map(String::as_str),
        Some("run_discovery_agent")
    );
    assert_eq!(
        event.get("gen_ai.tool.call.id").map(String::as_str),
        Some("call_7")
    );
    assert!(
        !fields.any_value_contains(SECRET_PROMPT),
        "content is off by default"
    );

    let options = agent_contracts_runtime::model::ModelOptions::default().with_temperature(0.5);
    let capturing = traced(openai(&server, &clock)).capture_content(true);
    let asking = request().with_options(options);
    capturing.complete(&asking).await.expect("a reply");
    let event = fields.of("event");
    let input = event
        .get("gen_ai.input.messages")
        .cloned()
        .unwrap_or_default();
    assert!(input.contains(SECRET_PROMPT), "{input}");
    assert!(event.contains_key("gen_ai.output.messages"));
    let temperature = fields.of("chat").get("gen_ai.request.temperature").cloned();
    assert_eq!(
        temperature.as_deref(),
        Some("0.5"),
        "the request's options are traced"
    );

    let error = traced(openai(&server, &clock))
        .complete(&request())
        .await
        .expect_err("a 401");
    assert!(
        matches!(error, ModelError::Status { status: 401, .. }),
        "{error}"
    );
    assert_eq!(
        fields.of("chat").get("error.type").map(String::as_str),
        Some("http_status")
    );
    assert!(!fields.any_value_contains(KEY), "the key is never traced");

    // A stream stopped by its reader: recorded, not warned; the scripted model names itself.
    let scripted = agent_contracts_runtime::ScriptedModel::default()
        .chunk_size(2)
        .script("main_agent", ["abcdef"]);
    let mut seen = 0;
    let mut sink = |_: agent_contracts_runtime::model::StreamDelta<'_>| {
        seen += 1;
        if seen == 2 {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let stopped = Traced::new(scripted).stream(&request(), &mut sink).await;
    assert!(
        matches!(stopped, Err(ModelError::Stopped { .. })),
        "{stopped:?}"
    );
    let chat = fields.of("chat");
    assert_eq!(
        chat.get("gen_ai.provider.name").map(String::as_str),
        Some("agent_contracts.scripted")
    );
    assert!(
        !chat.contains_key("gen_ai.response.chunks"),
        "not a GenAI name"
    );
    assert_eq!(chat.get("error.type").map(String::as_str), Some("stopped"));
}

#[tokio::test]
async fn inside_the_runtime_the_layer_records_on_the_runtimes_chat_span() {
    let fields = Fields::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(fields.clone()));
    let page = r#"{"page_title": "Login", "discovered_elements": []}"#;
    let scripted =
        agent_contracts_runtime::ScriptedModel::default().script("discovery_agent", [page]);
    let runtime =
        agent_contracts_runtime::Runtime::new(Traced::new(scripted).request_model("gpt-test"));
    runtime
        .call::<agent_examples::agents::DiscoveryAgent>(
            r#"{"task": "Scan", "target_url": "https://a.example"}"#,
        )
        .await
        .expect("a page");
    // Each new span records its operation once: one `chat` span for the one model call.
    let chats = fields
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(scope, key, _)| scope == "chat" && key == "gen_ai.operation.name")
        .count();
    assert_eq!(chats, 1, "one span per model call, the runtime's");
    assert_eq!(
        fields.of("chat").get("otel.kind").map(String::as_str),
        Some("client")
    );
}
