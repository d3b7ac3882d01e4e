//! Tracing as a layer over any model, by the OpenTelemetry GenAI conventions as plain
//! `tracing` fields: one `chat` span per call of the model it wraps (a [`Retrying`]'s
//! retries, and their warnings, inside it), its request fields set up front and its response
//! or error fields recorded at the end. Message contents go in events only on opt-in.
//!
//! The runtime makes a `chat` span for every model call itself
//! (`agent_contracts_runtime::telemetry`); inside it this layer makes none of its own but
//! records on the runtime's, so a trace shows one span per model call.
//!
//! [`Retrying`]: crate::Retrying

use crate::model_error::error_type;
use agent_contracts_runtime::{
    ChatModel, Message, model::BoxFuture, model::ChatRequest, model::ChatResponse,
    model::ModelError, model::StreamSink, telemetry,
};
use std::future::Future;
use tracing::Instrument as _;

/// Any [`ChatModel`] with its calls traced: a `chat` span per call with the GenAI fields
/// (`gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.agent.name`,
/// `gen_ai.usage.input_tokens`, `gen_ai.response.finish_reasons`, `error.type`, ...), an
/// event per tool call asked for and a warning per failed call. Called by the runtime, the
/// span is the runtime's own `chat` span of the call. Wrap a [`Retrying`](crate::Retrying) in
/// it, so a call's retries show inside its span.
///
/// ```
/// use agent_contracts_runtime::ScriptedModel;
/// use agent_contracts_llm::{RetryPolicy, Retrying, Traced};
/// let model = Traced::new(Retrying::new(ScriptedModel::default(), RetryPolicy::default()))
///     .provider("openai")
///     .request_model("gpt-4o");
/// ```
#[derive(Debug, Clone)]
pub struct Traced<M> {
    model: M,
    provider: Option<String>,
    request_model: Option<String>,
    capture_content: bool,
}

impl<M> Traced<M> {
    /// `model`, traced; no provider or model name, no contents.
    pub fn new(model: M) -> Self {
        Self {
            model,
            provider: None,
            request_model: None,
            capture_content: false,
        }
    }

    /// The provider's name (`gen_ai.provider.name`).
    #[must_use]
    pub fn provider(mut self, name: impl Into<String>) -> Self {
        self.provider = Some(name.into());
        self
    }

    /// The model asked for (`gen_ai.request.model`; the span is named `chat {model}`).
    #[must_use]
    pub fn request_model(mut self, name: impl Into<String>) -> Self {
        self.request_model = Some(name.into());
        self
    }

    /// Records message contents in events (off by default: prompts may hold personal
    /// data).
    #[must_use]
    pub fn capture_content(mut self, capture: bool) -> Self {
        self.capture_content = capture;
        self
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.model
    }

    /// The `chat` span of one call, its request fields set: the runtime's span of the call,
    /// or a new one for a call made outside the runtime.
    fn span(&self, request: &ChatRequest) -> tracing::Span {
        let span = match telemetry::in_chat_span() {
            true => tracing::Span::current(),
            false => telemetry::chat(&request.agent, None),
        };
        if span.is_disabled() {
            return span;
        }
        if let Some(provider) = &self.provider {
            span.record("gen_ai.provider.name", provider.as_str());
        }
        if let Some(model) = &self.request_model {
            span.record("gen_ai.request.model", model.as_str());
            span.record("otel.name", format_args!("chat {model}"));
        }
        if let Some(t) = request.options.temperature {
            span.record("gen_ai.request.temperature", t);
        }
        if let Some(m) = request.options.max_tokens {
            // Signed: `tracing-opentelemetry` exports an unsigned field as text.
            span.record("gen_ai.request.max_tokens", i64::from(m));
        }
        span
    }

    /// Runs one call inside `span` and records the outcome on it.
    async fn traced(
        &self,
        span: tracing::Span,
        request: &ChatRequest,
        call: impl Future<Output = Result<ChatResponse, ModelError>>,
    ) -> Result<ChatResponse, ModelError> {
        let capture_content = self.capture_content;
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
                Err(error @ ModelError::Stopped { partial }) => {
                    span.record("error.type", error_type(error));
                    if let Some(usage) = &partial.usage {
                        telemetry::record_usage(&span, usage);
                    }
                    // The reader's decision, not a failure of the model.
                    tracing::info!(
                        text_bytes = partial.message.content.len(),
                        "the stream was stopped by its reader"
                    );
                }
                Err(error) => {
                    span.record("error.type", error_type(error));
                    span.record("otel.status_code", "error");
                    tracing::warn!(error.type = error_type(error), error = %error, "model call failed");
                }
            }
            result
        }
        .instrument(span)
        .await
    }
}

impl<M: ChatModel> ChatModel for Traced<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let span = self.span(request);
        let call = span.in_scope(|| self.model.complete(request));
        Box::pin(self.traced(span, request, call))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let span = self.span(request);
        let call = span.in_scope(|| self.model.stream(request, sink));
        Box::pin(self.traced(span, request, call))
    }
}

fn record_response(span: &tracing::Span, response: &ChatResponse, capture_content: bool) {
    telemetry::record_response(span, response);
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
