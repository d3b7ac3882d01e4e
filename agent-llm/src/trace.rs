//! Tracing as a layer over any model, by the OpenTelemetry GenAI conventions as plain
//! `tracing` fields: one `chat` span per call of the model it wraps (a [`Retrying`]'s
//! retries, and their warnings, inside it), its request fields set up front and its response
//! or error fields recorded at the end. Message contents go in events only on opt-in.
//!
//! [`Retrying`]: crate::Retrying

use crate::model_error::error_type;
use agent_contracts_runtime::{
    ChatModel, Message, model::BoxFuture, model::ChatRequest, model::ChatResponse,
    model::ModelError, model::StreamDelta, model::StreamSink,
};
use std::future::Future;
use std::ops::ControlFlow;
use tracing::Instrument as _;
use tracing::field::Empty;

/// Any [`ChatModel`] with its calls traced: a `chat` span per call with the GenAI fields
/// (`gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.agent.name`,
/// `gen_ai.usage.input_tokens`, `gen_ai.response.finish_reasons`, `error.type`, ...), an
/// event per tool call asked for, a warning per failed call, and for a stream the number of
/// deltas (`gen_ai.response.chunks`). Wrap a [`Retrying`](crate::Retrying) in it, so a
/// call's retries show inside its span.
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

    /// The `chat` span of one call, its request fields set.
    fn span(&self, request: &ChatRequest) -> tracing::Span {
        let name = match &self.request_model {
            Some(model) => format!("chat {model}"),
            None => "chat".to_owned(),
        };
        let span = tracing::info_span!(
            "chat",
            otel.name = %name,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = Empty,
            gen_ai.request.model = Empty,
            gen_ai.agent.name = %request.agent,
            gen_ai.request.temperature = Empty,
            gen_ai.request.max_tokens = Empty,
            gen_ai.response.id = Empty,
            gen_ai.response.model = Empty,
            gen_ai.response.finish_reasons = Empty,
            gen_ai.response.chunks = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            error.type = Empty,
        );
        if let Some(provider) = &self.provider {
            span.record("gen_ai.provider.name", provider.as_str());
        }
        if let Some(model) = &self.request_model {
            span.record("gen_ai.request.model", model.as_str());
        }
        if let Some(t) = request.options.temperature {
            span.record("gen_ai.request.temperature", t);
        }
        if let Some(m) = request.options.max_tokens {
            span.record("gen_ai.request.max_tokens", m);
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
                        span.record("gen_ai.usage.input_tokens", usage.input_tokens);
                        span.record("gen_ai.usage.output_tokens", usage.output_tokens);
                    }
                    // The reader's decision, not a failure of the model.
                    tracing::info!(
                        text_bytes = partial.message.content.len(),
                        "the stream was stopped by its reader"
                    );
                }
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
}

impl<M: ChatModel> ChatModel for Traced<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(self.traced(self.span(request), request, self.model.complete(request)))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let span = self.span(request);
            let mut counting = Counting { sink, deltas: 0 };
            let call = self.model.stream(request, &mut counting);
            let result = self.traced(span.clone(), request, call).await;
            span.record("gen_ai.response.chunks", counting.deltas);
            result
        })
    }
}

/// A sink that counts the deltas it forwards.
struct Counting<'s> {
    sink: &'s mut dyn StreamSink,
    deltas: u64,
}

impl StreamSink for Counting<'_> {
    fn delta(&mut self, delta: StreamDelta<'_>) -> ControlFlow<()> {
        self.deltas += 1;
        if self.deltas == 1 {
            tracing::debug!("first stream delta");
        }
        self.sink.delta(delta)
    }
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
