//! Tracing by the OpenTelemetry GenAI conventions, as plain `tracing` fields: one `chat` span
//! per model call (retries included), its request fields set up front and its response or
//! error fields recorded at the end. Message contents go in events only on opt-in.

use crate::http::Settings;
use crate::model_error::error_type;
use agent_core::{ChatRequest, ChatResponse, Message, ModelError};
use std::future::Future;
use tracing::Instrument as _;
use tracing::field::Empty;

/// Runs one model call inside its `chat` span and records the outcome on it.
pub(crate) async fn traced(
    provider: &'static str,
    settings: &Settings,
    request: &ChatRequest,
    call: impl Future<Output = Result<ChatResponse, ModelError>>,
) -> Result<ChatResponse, ModelError> {
    let (model, capture_content) = (settings.model.as_str(), settings.capture_content);
    let span = tracing::info_span!(
        "chat",
        otel.name = %format_args!("chat {model}"),
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.agent.name = %request.agent,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    );
    let options = settings.options_for(request);
    if let Some(t) = options.temperature {
        span.record("gen_ai.request.temperature", t);
    }
    if let Some(m) = options.max_tokens {
        span.record("gen_ai.request.max_tokens", m);
    }
    async move {
        if capture_content {
            tracing::info!(
                gen_ai.input.messages = %messages_json(&request.messages),
                "gen_ai.client.inference.operation.details"
            );
        }
        let result = call.await;
        let span = tracing::Span::current();
        match &result {
            Ok(response) => record_response(&span, response, capture_content),
            Err(error) => {
                span.record("error.type", error_type(error));
                tracing::warn!(error.type = error_type(error), error = %error, "model call failed");
            }
        }
        result
    }
    .instrument(span)
    .await
}

fn record_response(span: &tracing::Span, response: &ChatResponse, capture_content: bool) {
    if let Some(id) = &response.id {
        span.record("gen_ai.response.id", id.as_str());
    }
    if let Some(model) = &response.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if let Some(reason) = &response.finish_reason {
        let reasons = serde_json::Value::from(vec![reason.as_str()]).to_string();
        span.record("gen_ai.response.finish_reasons", reasons.as_str());
    }
    if let Some(usage) = &response.usage {
        span.record("gen_ai.usage.input_tokens", usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    }
    for call in &response.message.tool_calls {
        tracing::info!(
            gen_ai.tool.name = %call.name,
            gen_ai.tool.call.id = %call.id,
            "tool call requested"
        );
    }
    if capture_content {
        tracing::info!(
            gen_ai.output.messages = %messages_json(std::slice::from_ref(&response.message)),
            "gen_ai.client.inference.operation.details"
        );
    }
}

fn messages_json(messages: &[Message]) -> String {
    serde_json::to_string(messages).unwrap_or_default()
}
