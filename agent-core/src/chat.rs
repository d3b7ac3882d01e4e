//! Chat models: the `ChatModel` trait, the messages it exchanges, and `ScriptedModel`, a
//! deterministic model that replays a script so everything runs offline and in tests.

use agent_contracts_contract::ToolDefinition;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

/// A boxed future, so `ChatModel` stays object safe without an extra crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The user, or a parent agent speaking as one.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// A tool call the model asked for. `arguments` is the raw JSON text: untrusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The model's id for the call, echoed in the tool result.
    pub id: String,
    /// The tool's name (`run_<agent>`).
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

/// A reasoning block of an assistant message, kept so the next request can hand it back
/// unchanged: Anthropic refuses a tool-calling turn whose thinking blocks went missing or were
/// altered, and checks them by their signature. Serialized in Anthropic's block format.
///
/// ```
/// use agent_contracts::model::Thinking;
/// let block = Thinking::Thinking { thinking: "Look first.".into(), signature: "EqQB".into() };
/// let json = serde_json::to_string(&block).unwrap();
/// assert_eq!(json, r#"{"type":"thinking","thinking":"Look first.","signature":"EqQB"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Thinking {
    /// The model's reasoning, as text, with the provider's signature of it.
    Thinking {
        /// The reasoning text (Claude 4 models give a summary).
        thinking: String,
        /// The provider's signature, checked when the block comes back.
        signature: String,
    },
    /// Reasoning the provider's safety systems encrypted: opaque, replayed as is.
    RedactedThinking {
        /// The encrypted reasoning.
        data: String,
    },
}

/// Media a message carries: defined with the contracts, so a contract's media field and a
/// message share one type.
pub use agent_contracts_contract::{Media, MediaData, MediaKind};

/// One part of a message, in order: text, or media ([`Message::parts`]).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// A piece of the message's text.
    Text(&'a str),
    /// Media at its place.
    Media(&'a Media),
}

/// One message of a conversation.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredMessage")]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The reasoning an assistant message came with, in the model's order; it precedes the
    /// text and the tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Thinking>,
    /// Its text.
    pub content: String,
    /// Tool calls an assistant message asks for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Media beside its text: on a user message, images, documents and audio each at its
    /// place in the text ([`Media::at`]; a contract's media fields where the prompt put
    /// them) or after it; on a tool message, what the tool's result brought.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<Media>,
}

/// A message as it is read back: today's fields, and the `images` a message was stored with
/// before images, documents and audio shared one list, read into `media` after the text, so a
/// conversation stored by an earlier build keeps its images.
#[derive(Deserialize)]
struct StoredMessage {
    role: Role,
    #[serde(default)]
    thinking: Vec<Thinking>,
    content: String,
    #[serde(default)]
    tool_calls: Vec<ToolCallRequest>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    media: Vec<Media>,
    #[serde(default)]
    images: Vec<StoredImage>,
}

/// An image as messages stored it before `media`.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StoredImage {
    Url(String),
    Base64 { media_type: String, data: String },
}

impl From<StoredMessage> for Message {
    fn from(stored: StoredMessage) -> Self {
        let mut media = stored.media;
        media.extend(stored.images.into_iter().map(|image| match image {
            // The old form kept no type for an image at a URL: the provider reads it from
            // the response, and `image/*` says only that it is an image.
            StoredImage::Url(url) => Media::new(MediaKind::Image, "image/*", MediaData::Url(url)),
            StoredImage::Base64 { media_type, data } => {
                Media::new(MediaKind::Image, media_type, MediaData::Base64(data))
            }
        }));
        Self {
            role: stored.role,
            thinking: stored.thinking,
            content: stored.content,
            tool_calls: stored.tool_calls,
            tool_call_id: stored.tool_call_id,
            media,
        }
    }
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            thinking: Vec::new(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            media: Vec::new(),
        }
    }
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
    /// A tool result for the call `id`.
    pub fn tool(id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(id.into()),
            ..Self::new(Role::Tool, content)
        }
    }

    /// This message with its [`thinking`](Self::thinking) blocks.
    pub fn with_thinking(mut self, thinking: Vec<Thinking>) -> Self {
        self.thinking = thinking;
        self
    }

    /// This message with the [`media`](Self::media) it carries.
    ///
    /// ```
    /// use agent_contracts::{model::{Media, MediaData, Part}, Message};
    /// let plan = Media::of_type("image/png", MediaData::Url("https://example.com/plan.png".into()));
    /// let message = Message::user("Here: . Does it fit 80 guests?").with_media(vec![plan.at(6)]);
    /// let parts = message.parts();
    /// assert_eq!(parts[0], Part::Text("Here: "));
    /// assert!(matches!(parts[1], Part::Media(_)));
    /// assert_eq!(parts[2], Part::Text(". Does it fit 80 guests?"));
    /// ```
    pub fn with_media(mut self, media: Vec<Media>) -> Self {
        self.media = media;
        self
    }

    /// Its text and media in order: each media at its place ([`Media::at`], a byte offset
    /// of the text; one past the text or off a `char` boundary counts as the end), the rest
    /// after the text, in their order. Empty pieces of text are left out.
    pub fn parts(&self) -> Vec<Part<'_>> {
        let text = self.content.as_str();
        let place = |m: &Media| {
            m.at.filter(|&at| at <= text.len() && text.is_char_boundary(at))
                .unwrap_or(text.len())
        };
        let mut order: Vec<&Media> = self.media.iter().collect();
        // Stable: media at one place keep their order.
        order.sort_by_key(|m| place(m));
        let mut parts = Vec::with_capacity(order.len() * 2 + 1);
        let mut from = 0;
        for media in order {
            let at = place(media);
            if at > from {
                parts.push(Part::Text(&text[from..at]));
                from = at;
            }
            parts.push(Part::Media(media));
        }
        if from < text.len() {
            parts.push(Part::Text(&text[from..]));
        }
        parts
    }

    /// This message with the [`tool_calls`](Self::tool_calls) it asks for.
    pub fn with_tool_calls(mut self, tool_calls: Vec<ToolCallRequest>) -> Self {
        self.tool_calls = tool_calls;
        self
    }
}

/// What a model is asked.
///
/// Build one with [`ChatRequest::new`] and the `with_` setters, so that fields added
/// later break no caller.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatRequest {
    /// The agent asking (for routing scripted replies and for tracing).
    pub agent: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// Sampling and tool-use settings; a provider leaves out what is unset.
    #[serde(skip_serializing_if = "ModelOptions::is_empty")]
    pub options: ModelOptions,
    /// The schema the answer must meet, for providers with native structured output. The
    /// output contract still checks every answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<OutputSchema>,
}

impl ChatRequest {
    /// A request of `agent` with default options and no output schema.
    pub fn new(
        agent: impl Into<String>,
        messages: Vec<Message>,
        tools: Vec<ToolDefinition>,
    ) -> Self {
        Self {
            agent: agent.into(),
            messages,
            tools,
            ..Self::default()
        }
    }

    /// This request with its [`options`](Self::options).
    pub fn with_options(mut self, options: ModelOptions) -> Self {
        self.options = options;
        self
    }

    /// This request with an [`output_schema`](Self::output_schema).
    pub fn with_output_schema(mut self, output_schema: OutputSchema) -> Self {
        self.output_schema = Some(output_schema);
        self
    }
}

/// Settings of one model call. Unset fields are left to the provider's defaults.
///
/// ```
/// use agent_contracts::{model::ModelOptions, model::ToolChoice};
/// let options = ModelOptions::default()
///     .with_temperature(0.2)
///     .with_tool_choice(ToolChoice::Required);
/// let fallback = ModelOptions::default().with_max_tokens(512);
/// assert_eq!(options.or(&fallback).max_tokens, Some(512));
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelOptions {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens the answer may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Whether and which tool the model must call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may call several tools in one reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Provider-specific fields, merged into the request body last (they win).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ModelOptions {
    /// These options with a [`temperature`](Self::temperature).
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// These options with [`max_tokens`](Self::max_tokens).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// These options with a [`tool_choice`](Self::tool_choice).
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = Some(tool_choice);
        self
    }

    /// These options with [`parallel_tool_calls`](Self::parallel_tool_calls) set.
    pub fn with_parallel_tool_calls(mut self, parallel_tool_calls: bool) -> Self {
        self.parallel_tool_calls = Some(parallel_tool_calls);
        self
    }

    /// These options with the provider-specific [`extra`](Self::extra) fields.
    pub fn with_extra(mut self, extra: serde_json::Map<String, serde_json::Value>) -> Self {
        self.extra = extra;
        self
    }
    /// True when nothing is set.
    #[doc(hidden)]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// These options, with each unset field taken from `fallback`; extras are merged, these
    /// winning.
    #[doc(hidden)]
    pub fn or(&self, fallback: &ModelOptions) -> ModelOptions {
        let mut extra = fallback.extra.clone();
        extra.extend(self.extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        ModelOptions {
            temperature: self.temperature.or(fallback.temperature),
            max_tokens: self.max_tokens.or(fallback.max_tokens),
            tool_choice: self.tool_choice.clone().or(fallback.tool_choice.clone()),
            parallel_tool_calls: self.parallel_tool_calls.or(fallback.parallel_tool_calls),
            extra,
        }
    }
}

/// Whether the model must call a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// A call of the named tool.
    Tool(String),
}

/// A JSON Schema the answer must meet, named for the provider.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A name of letters, digits, `_` and `-` (OpenAI's rule).
    pub name: String,
    /// The schema.
    pub schema: serde_json::Value,
    /// The schema a provider's strict mode takes, per dialect, as the build decided it (the
    /// contract as written, or its lossless rewrite); empty for a contract built at run time.
    /// The runtime removes the `null`s a rewrite lets in before the contract check.
    #[serde(skip)]
    pub strict: Vec<(agent_contracts_contract::Dialect, serde_json::Value)>,
}

impl OutputSchema {
    /// A schema named `name`, without strict forms (the runtime computes those of a
    /// contract's output schema).
    pub fn new(name: impl Into<String>, schema: serde_json::Value) -> Self {
        Self {
            name: name.into(),
            schema,
            strict: Vec::new(),
        }
    }

    /// The schema of an output contract, named after it with the characters OpenAI refuses
    /// replaced by `_` (at most 64).
    pub(crate) fn from_contract(contract: &agent_contracts_contract::Contract) -> Self {
        let name: String = contract
            .name()
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
                _ => '_',
            })
            .take(64)
            .collect();
        let strict = agent_contracts_contract::Dialect::ALL
            .into_iter()
            .filter_map(|dialect| {
                let schema = contract.strict_schema(dialect)?;
                Some((dialect, schema.clone()))
            });
        Self {
            name,
            schema: contract.schema().clone(),
            strict: strict.collect(),
        }
    }
}

/// A model's answer to one request.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message.
    pub message: Message,
    /// Tokens the call used, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the model stopped (`stop`, `tool_calls`, `end_turn`, ...), as the provider says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's id of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl ChatResponse {
    /// This response with the [`usage`](Self::usage) the provider reported.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// This response with the provider's [`finish_reason`](Self::finish_reason).
    pub fn with_finish_reason(mut self, finish_reason: impl Into<String>) -> Self {
        self.finish_reason = Some(finish_reason.into());
        self
    }

    /// This response with the [`model`](Self::model) that answered.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// This response with the provider's [`id`](Self::id) of it.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// A response with only a message.
impl From<Message> for ChatResponse {
    fn from(message: Message) -> Self {
        Self {
            message,
            usage: None,
            finish_reason: None,
            model: None,
            id: None,
        }
    }
}

/// An assistant's answer with this text: what a script of [`ScriptedModel`] is made of.
impl From<&str> for ChatResponse {
    fn from(text: &str) -> Self {
        Self::from(Message::assistant(text))
    }
}

/// Tokens of one or more model calls; responses add up with `+` and `sum`.
///
/// ```
/// use agent_contracts::model::Usage;
/// let a = Usage::new(10, 2).with_cached_tokens(4);
/// let total: Usage = [a, a].into_iter().sum();
/// assert_eq!(total.input_tokens, 20);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic bills them above the input
    /// price); part of `input_tokens`.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Answer tokens the model spent reasoning; part of `output_tokens`.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// `input_tokens` prompt tokens and `output_tokens` answer tokens, none cached.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// This usage with [`cached_tokens`](Self::cached_tokens) set.
    pub fn with_cached_tokens(mut self, cached_tokens: u64) -> Self {
        self.cached_tokens = cached_tokens;
        self
    }

    /// This usage with [`cache_write_tokens`](Self::cache_write_tokens) set.
    pub fn with_cache_write_tokens(mut self, cache_write_tokens: u64) -> Self {
        self.cache_write_tokens = cache_write_tokens;
        self
    }

    /// This usage with [`reasoning_tokens`](Self::reasoning_tokens) set.
    pub fn with_reasoning_tokens(mut self, reasoning_tokens: u64) -> Self {
        self.reasoning_tokens = reasoning_tokens;
        self
    }
    /// Input and output tokens.
    pub(crate) fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_tokens: self.cached_tokens.saturating_add(other.cached_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(other.cache_write_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_add(other.reasoning_tokens),
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |a, b| a + b)
    }
}

impl<'a> std::iter::Sum<&'a Usage> for Usage {
    fn sum<I: Iterator<Item = &'a Usage>>(iter: I) -> Usage {
        iter.copied().sum()
    }
}

/// A model that failed to answer. [`ModelError::is_retryable`] says whether asking again can
/// help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A scripted model ran out of replies for an agent.
    #[error("the script has no reply left for agent `{agent}` (request {request})")]
    ScriptExhausted {
        /// The agent that asked.
        agent: String,
        /// How many requests that agent had made, counting this one.
        request: usize,
    },
    /// The provider refused the request for its rate limit (HTTP 429).
    #[error("the provider rate-limited the request{}{}", retry_after_text(.retry_after), message_text(.message))]
    RateLimited {
        /// How long the provider asked to wait, if it said.
        retry_after: Option<Duration>,
        /// What the provider said (its error body's `error.message`, or the start of the body).
        message: Option<String>,
    },
    /// The provider answered with an error status.
    #[error("the provider answered HTTP {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the body (the HTTP models keep at most 1 KiB of it).
        body: String,
        /// How long the provider asked to wait (`Retry-After`), if it said.
        retry_after: Option<Duration>,
        /// Whether the provider said a retry can help (`x-should-retry`); it overrides
        /// what the status alone says.
        should_retry: Option<bool>,
    },
    /// No answer in time.
    #[error("the model did not answer in time")]
    Timeout,
    /// The request did not reach the provider or the connection broke.
    #[error("transport error: {0}")]
    Transport(String),
    /// The answer hit its token limit and is cut off (OpenAI's `finish_reason: length`,
    /// Anthropic's `stop_reason: max_tokens`). Not retryable: the same request is cut at the
    /// same place; raise `max_tokens` or shorten the task.
    #[error("the answer was cut off at its token limit{}; raise `max_tokens`", output_tokens_text(.output_tokens))]
    MaxTokens {
        /// The answer's tokens, when the provider reported them.
        output_tokens: Option<u64>,
    },
    /// The provider answered something that is not a response of its API.
    #[error("malformed response: {0}")]
    Malformed(String),
    /// Any other failure.
    #[error("model failed: {0}")]
    Other(String),
    /// A retrying layer gave up: `last` is the error of the last of `attempts` attempts.
    /// Retryable when `last` is, so a fallback moves on to its next model.
    #[error("{last} (after {attempts} attempts)")]
    GaveUp {
        /// The attempts made, the first included.
        attempts: u32,
        /// The last attempt's error.
        last: Box<ModelError>,
    },
    /// The reader of a stream ([`StreamSink`]) stopped it: the answer could no longer pass.
    /// `partial` holds the text received so far and the usage the provider had reported by
    /// then (input tokens for Anthropic; none for OpenAI, which reports usage at the end).
    ///
    /// An error, not a response: a caller that does not handle it fails loudly instead of
    /// taking a cut-off answer for an answer; and no layer retries it or falls back (the
    /// same request would be stopped again: the caller retries with a new prompt).
    #[error("the stream was stopped by its reader after {} bytes of text", .partial.message.content.len())]
    Stopped {
        /// What was received before the stop.
        partial: Box<ChatResponse>,
    },
}

fn message_text(message: &Option<String>) -> String {
    message
        .as_deref()
        .map(|m| format!(": {m}"))
        .unwrap_or_default()
}

fn output_tokens_text(output_tokens: &Option<u64>) -> String {
    output_tokens
        .map(|n| format!(" ({n} output tokens)"))
        .unwrap_or_default()
}

fn retry_after_text(retry_after: &Option<Duration>) -> String {
    retry_after
        .map(|d| format!(" (retry after {} ms)", d.as_millis()))
        .unwrap_or_default()
}

impl ModelError {
    /// Whether the same request may succeed later: rate limits, timeouts, broken connections,
    /// and statuses 408, 409, 429, 5xx (Anthropic's 529 included). A request the provider
    /// judged wrong (400, 401, 403, 404, 422) fails the same way every time. A provider's
    /// `x-should-retry` wins over the status.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. } | Self::Timeout | Self::Transport(_) => true,
            Self::Status {
                status,
                should_retry,
                ..
            } => should_retry.unwrap_or(matches!(status, 408 | 409 | 429 | 500..=599)),
            Self::GaveUp { last, .. } => last.is_retryable(),
            Self::ScriptExhausted { .. }
            | Self::MaxTokens { .. }
            | Self::Malformed(_)
            | Self::Other(_)
            | Self::Stopped { .. } => false,
        }
    }
}

/// A chat model: messages and tool definitions in, an assistant message (with usage and
/// metadata) out.
///
/// Implement it to reach a provider; the runtime and workflows only ever call `complete`.
///
/// ```
/// use agent_contracts::{model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError};
/// use agent_contracts::{ChatModel, Message};
///
/// /// Answers every request with the same JSON.
/// struct Constant(&'static str);
///
/// impl ChatModel for Constant {
///     fn complete<'a>(
///         &'a self,
///         _request: &'a ChatRequest,
///     ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
///         Box::pin(async move { Ok(Message::assistant(self.0).into()) })
///     }
/// }
/// ```
pub trait ChatModel: Send + Sync {
    /// Answers one request.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;

    /// Answers one request, handing `sink` the answer's text as it arrives, and ends with the
    /// whole response, as [`complete`](Self::complete) would. When the sink answers
    /// [`ControlFlow::Break`], the model stops at once (a provider closes the connection) and
    /// returns [`ModelError::Stopped`] with what it had received.
    ///
    /// The default answers with `complete` and hands the whole text over as one delta: every
    /// model streams, the providers in the provider's own chunks. A layer (retries, fallback,
    /// tracing) forwards it to the model it wraps.
    ///
    /// ```
    /// use agent_contracts::{ChatModel, model::ChatRequest, model::ModelError, ScriptedModel, model::StreamDelta};
    /// use std::ops::ControlFlow;
    /// let model = ScriptedModel::default().chunk_size(4).script("a", [r#"{"n": 12345}"#]);
    /// let request = ChatRequest::new("a", vec![], vec![]);
    /// let mut seen = Vec::new();
    /// let mut sink = |delta: StreamDelta<'_>| {
    ///     if let StreamDelta::Text(text) = delta {
    ///         seen.push(text.to_owned());
    ///     }
    ///     // Stops once the answer can no longer pass (here: after its second chunk).
    ///     if seen.len() == 2 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    /// };
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let stopped = model.stream(&request, &mut sink).await;
    /// let Err(ModelError::Stopped { partial }) = stopped else { panic!("{stopped:?}") };
    /// assert_eq!(partial.message.content, r#"{"n": 12"#);
    /// # });
    /// assert_eq!(seen, [r#"{"n""#, ": 12"]);
    /// ```
    ///
    /// [`ControlFlow::Break`]: std::ops::ControlFlow::Break
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let response = self.complete(request).await?;
            deliver_whole(response, sink)
        })
    }
}

/// `response` handed to `sink` as one delta: the response, or [`ModelError::Stopped`] with it
/// when the sink stops.
fn deliver_whole(
    response: ChatResponse,
    sink: &mut dyn StreamSink,
) -> Result<ChatResponse, ModelError> {
    let content = response.message.content.as_str();
    if !content.is_empty() && sink.delta(StreamDelta::Text(content)).is_break() {
        return Err(ModelError::Stopped {
            partial: Box::new(response),
        });
    }
    Ok(response)
}

/// A piece of an answer as it streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamDelta<'a> {
    /// Text of the answer, to append to what came before.
    Text(&'a str),
    /// Reasoning text (Anthropic's `thinking_delta`): shown, never part of the answer.
    Thinking(&'a str),
}

/// The reader of a streamed answer ([`ChatModel::stream`]). Tool calls are not handed over:
/// the model reassembles them and returns them whole in its response.
///
/// Any `FnMut(StreamDelta<'_>) -> ControlFlow<()>` closure is a sink.
pub trait StreamSink: Send {
    /// Receives the next delta; [`ControlFlow::Break`] stops the stream: the answer can no
    /// longer pass.
    ///
    /// [`ControlFlow::Break`]: std::ops::ControlFlow::Break
    fn delta(&mut self, delta: StreamDelta<'_>) -> ControlFlow<()>;

    /// The stream broke after some deltas (a cut connection, a body that ended before the
    /// provider's last event) and a retrying layer will ask again from the start: forget
    /// everything received (a prefix check starts over, a watcher drops the partial answer),
    /// and say `true`. The default says `false`: such a sink cannot take a second beginning,
    /// so the error ends the call.
    fn restart(&mut self) -> bool {
        false
    }
}

impl<F: FnMut(StreamDelta<'_>) -> ControlFlow<()> + Send> StreamSink for F {
    fn delta(&mut self, delta: StreamDelta<'_>) -> ControlFlow<()> {
        self(delta)
    }
}

/// A shared model is a model: a runtime takes `Arc<dyn ChatModel>` as well as a model itself.
impl<M: ChatModel + ?Sized> ChatModel for std::sync::Arc<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        (**self).complete(request)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        (**self).stream(request, sink)
    }
}

/// A deterministic model: per agent, a queue of replies given in order. It records every
/// request it receives so tests can assert on prompts.
///
/// ```
/// use agent_contracts::{model::ChatRequest, model::tool_calls};
/// use agent_contracts::{ChatModel, Message, ScriptedModel};
///
/// let model = ScriptedModel::default()
///     .script("main", [tool_calls([("run_search_agent", r#"{"task": "Find it"}"#)])])
///     .script("search_agent", [Message::assistant(r#"{"found": true}"#)]);
/// let request = ChatRequest::new("search_agent", vec![], vec![]);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let reply = model.complete(&request).await.unwrap();
/// assert_eq!(reply.message.content, r#"{"found": true}"#);
/// // The script for `search_agent` is used up: the next request is an error, not a hang.
/// assert!(model.complete(&request).await.is_err());
/// assert_eq!(model.requests_of("search_agent").len(), 2);
/// # });
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    scripts: Mutex<BTreeMap<String, VecDeque<ChatResponse>>>,
    requests: Mutex<Vec<ChatRequest>>,
    chunk_size: usize,
    /// Reports an estimated usage for a reply scripted without one.
    estimate_usage: bool,
}

impl Default for ScriptedModel {
    fn default() -> Self {
        Self {
            scripts: Mutex::default(),
            requests: Mutex::default(),
            chunk_size: DEFAULT_CHUNK_CHARS,
            estimate_usage: false,
        }
    }
}

/// The bytes of text per token of an estimated usage: about what providers' tokenizers give
/// for English and JSON.
const BYTES_PER_TOKEN: usize = 4;

/// The characters of a scripted answer per streamed delta, unless set: a few tokens' worth,
/// as providers send them.
const DEFAULT_CHUNK_CHARS: usize = 16;

impl ScriptedModel {
    /// Streams each answer in deltas of `chars` characters (default 16; at least 1), through
    /// the same sink path as the providers ([`ChatModel::stream`]).
    #[must_use]
    pub fn chunk_size(mut self, chars: usize) -> Self {
        self.chunk_size = chars.max(1);
        self
    }

    /// Reports a usage for each reply scripted without one, estimated at one token per four
    /// bytes: of the request's messages (input) and of the reply's text and tool calls
    /// (output). An offline run then shows token counts (and exports token metrics) of the
    /// right order, without a provider to count them.
    ///
    /// ```
    /// use agent_contracts::{ChatModel, Message, ScriptedModel, model::ChatRequest};
    /// let model = ScriptedModel::default().with_estimated_usage().script("a", ["12345678"]);
    /// let request = ChatRequest::new("a", vec![Message::user("1234")], Vec::new());
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let usage = model.complete(&request).await.unwrap().usage.unwrap();
    /// assert_eq!((usage.input_tokens, usage.output_tokens), (1, 2));
    /// # });
    /// ```
    #[must_use]
    pub fn with_estimated_usage(mut self) -> Self {
        self.estimate_usage = true;
        self
    }

    /// Appends replies for `agent`: an answer's text (`&str`), a [`Message`] (tool calls), or a
    /// whole [`ChatResponse`] with usage, finish reason and ids as given.
    pub fn script<R: Into<ChatResponse>>(
        self,
        agent: &str,
        replies: impl IntoIterator<Item = R>,
    ) -> Self {
        lock(&self.scripts)
            .entry(agent.to_owned())
            .or_default()
            .extend(replies.into_iter().map(Into::into));
        self
    }

    /// Requests made by one agent.
    pub fn requests_of(&self, agent: &str) -> Vec<ChatRequest> {
        lock(&self.requests)
            .iter()
            .filter(|r| r.agent == agent)
            .cloned()
            .collect()
    }
}

/// A reply that calls tools: `(name, arguments JSON text)` pairs, ids `call_<n>`.
pub fn tool_calls<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str)>) -> Message {
    let tool_calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCallRequest {
            id: format!("call_{}_{i}", name),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        })
        .collect();
    Message {
        tool_calls,
        ..Message::assistant("")
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it: the script and the
/// log stay readable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ScriptedModel {
    /// The next reply for `request`'s agent, the request recorded.
    fn reply(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        // Named on the call's `chat` span as what it is: no provider's model (the fields of
        // `telemetry::record_model`, recorded here: that module imports this one).
        let span = tracing::Span::current();
        if !span.is_disabled() {
            span.record("gen_ai.provider.name", SCRIPTED_PROVIDER);
            span.record("gen_ai.request.model", "scripted");
            span.record("otel.name", "chat scripted");
        }
        let mut requests = lock(&self.requests);
        requests.push(request.clone());
        let count = requests.iter().filter(|r| r.agent == request.agent).count();
        let mut reply = lock(&self.scripts)
            .get_mut(&request.agent)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| ModelError::ScriptExhausted {
                agent: request.agent.clone(),
                request: count,
            })?;
        if self.estimate_usage && reply.usage.is_none() {
            let tokens = |bytes: usize| bytes.div_ceil(BYTES_PER_TOKEN) as u64;
            let input: usize = request.messages.iter().map(|m| m.content.len()).sum();
            let calls: usize = reply
                .message
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum();
            let output = reply.message.content.len() + calls;
            reply.usage = Some(Usage::new(tokens(input), tokens(output)));
        }
        Ok(reply)
    }
}

/// The `gen_ai.provider.name` of a scripted model's calls.
const SCRIPTED_PROVIDER: &str = "agent_contracts.scripted";

impl ChatModel for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = self.reply(request);
        Box::pin(async move { reply })
    }

    /// The reply's text in deltas of [`chunk_size`](Self::chunk_size) characters. A stopped
    /// reply keeps the text sent so far and no usage (a script knows no partial count).
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = self.reply(request);
        Box::pin(async move {
            let response = reply?;
            let text = response.message.content.as_str();
            let mut sent = 0;
            for (end, _) in text
                .char_indices()
                .skip(self.chunk_size)
                .step_by(self.chunk_size)
                .chain([(text.len(), ' ')])
            {
                if end == sent {
                    continue;
                }
                // Each delta after the first in a later poll, as a provider's would come.
                if sent > 0 {
                    tokio::task::yield_now().await;
                }
                if sink.delta(StreamDelta::Text(&text[sent..end])).is_break() {
                    let partial = ChatResponse {
                        message: Message::assistant(&text[..end]),
                        usage: None,
                        ..response.clone()
                    };
                    return Err(ModelError::Stopped {
                        partial: Box::new(partial),
                    });
                }
                sent = end;
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_error(status: u16) -> ModelError {
        ModelError::Status {
            status,
            body: String::new(),
            retry_after: None,
            should_retry: None,
        }
    }

    #[test]
    fn a_message_stored_with_images_reads_them_into_media_after_its_media() {
        let stored = serde_json::json!({
            "role": "user",
            "content": "Does the hall fit 80 guests?",
            "media": [{"kind": "document", "media_type": "application/pdf",
                       "data": {"base64": "JVBERi0="}}],
            "images": [
                {"url": "https://example.com/floor-plan.png"},
                {"base64": {"media_type": "image/png", "data": "iVBORw0KGgo="}}
            ]
        });
        let message: Message = serde_json::from_value(stored).unwrap();
        let media: Vec<_> = message
            .media
            .iter()
            .map(|m| (m.kind, m.media_type.as_str(), &m.data))
            .collect();
        assert_eq!(
            media,
            [
                (
                    MediaKind::Document,
                    "application/pdf",
                    &MediaData::Base64("JVBERi0=".into())
                ),
                (
                    MediaKind::Image,
                    "image/*",
                    &MediaData::Url("https://example.com/floor-plan.png".into())
                ),
                (
                    MediaKind::Image,
                    "image/png",
                    &MediaData::Base64("iVBORw0KGgo=".into())
                ),
            ]
        );
        // Written back, the message has one list.
        let written = serde_json::to_value(&message).unwrap();
        assert!(written.get("images").is_none());
        assert_eq!(serde_json::from_value::<Message>(written).unwrap(), message);
    }

    #[test]
    fn only_errors_a_later_try_can_fix_are_retryable() {
        let retryable = [408, 409, 429, 500, 502, 503, 529];
        let final_ = [400, 401, 403, 404, 422];
        for status in retryable {
            assert!(status_error(status).is_retryable(), "{status}");
        }
        for status in final_ {
            assert!(!status_error(status).is_retryable(), "{status}");
        }
        assert!(ModelError::Timeout.is_retryable());
        assert!(
            ModelError::RateLimited {
                retry_after: None,
                message: None
            }
            .is_retryable()
        );
        assert!(!ModelError::Malformed("x".into()).is_retryable());
        let told = |status, should_retry| ModelError::Status {
            status,
            body: String::new(),
            retry_after: None,
            should_retry: Some(should_retry),
        };
        assert!(!told(503, false).is_retryable(), "the server's word wins");
        assert!(told(400, true).is_retryable());
    }

    #[test]
    fn options_fall_back_field_by_field() {
        let agent = ModelOptions {
            temperature: Some(0.0),
            extra: [("seed".to_owned(), 1.into())].into_iter().collect(),
            ..ModelOptions::default()
        };
        let base = ModelOptions {
            temperature: Some(1.0),
            max_tokens: Some(100),
            extra: [
                ("seed".to_owned(), 2.into()),
                ("top_p".to_owned(), 1.into()),
            ]
            .into_iter()
            .collect(),
            ..ModelOptions::default()
        };
        let merged = agent.or(&base);
        assert_eq!(merged.temperature, Some(0.0));
        assert_eq!(merged.max_tokens, Some(100));
        assert_eq!(merged.extra["seed"], 1);
        assert_eq!(merged.extra["top_p"], 1);
    }

    #[test]
    fn an_output_schema_is_named_after_its_contract() {
        let schema = serde_json::json!({"type": "object"});
        let contract = agent_contracts_contract::Contract::new(
            "plan generator.v2",
            agent_contracts_contract::ContractKind::Output,
            schema.clone(),
        );
        let output = contract.map(|c| OutputSchema::from_contract(&c)).ok();
        let expected = OutputSchema {
            name: "plan_generator_v2".into(),
            schema,
            strict: Vec::new(),
        };
        assert_eq!(output, Some(expected));
    }

    /// A model with only `complete`: it streams through the default.
    struct Whole;

    impl ChatModel for Whole {
        fn complete<'a>(
            &'a self,
            _: &'a ChatRequest,
        ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
            Box::pin(async { Ok(ChatResponse::from("all of it")) })
        }
    }

    fn block_on<T>(future: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .map(|rt| rt.block_on(future))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_default_stream_hands_over_the_whole_text_once() {
        let request = ChatRequest::new("a", Vec::new(), Vec::new());
        let mut seen = Vec::new();
        let mut sink = |delta: StreamDelta<'_>| {
            seen.push(format!("{delta:?}"));
            ControlFlow::Continue(())
        };
        let reply = block_on(Whole.stream(&request, &mut sink));
        assert_eq!(
            reply.map(|r| r.message.content).ok().as_deref(),
            Some("all of it")
        );
        assert_eq!(seen, [r#"Text("all of it")"#]);
        let mut stop = |_: StreamDelta<'_>| ControlFlow::Break(());
        let stopped = block_on(std::sync::Arc::new(Whole).stream(&request, &mut stop));
        let Err(ModelError::Stopped { partial }) = stopped else {
            panic!("{stopped:?}")
        };
        assert_eq!(partial.message.content, "all of it");
    }

    #[test]
    fn scripted_chunks_are_whole_characters() {
        let model = ScriptedModel::default()
            .chunk_size(2)
            .script("a", ["héllo", ""]);
        let request = ChatRequest::new("a", Vec::new(), Vec::new());
        let mut seen = Vec::new();
        let mut sink = |delta: StreamDelta<'_>| {
            if let StreamDelta::Text(text) = delta {
                seen.push(text.to_owned());
            }
            ControlFlow::Continue(())
        };
        let reply = block_on(model.stream(&request, &mut sink));
        assert_eq!(
            reply.map(|r| r.message.content).ok().as_deref(),
            Some("héllo")
        );
        let empty = block_on(model.stream(&request, &mut sink));
        assert!(empty.is_ok());
        assert_eq!(seen, ["hé", "ll", "o"], "an empty answer sends no delta");
    }

    #[test]
    fn scripted_responses_carry_usage() {
        let usage = Usage {
            input_tokens: 3,
            output_tokens: 1,
            ..Usage::default()
        };
        let model = ScriptedModel::default().script(
            "a",
            [ChatResponse {
                usage: Some(usage),
                ..ChatResponse::from(Message::assistant("hi"))
            }],
        );
        let request = ChatRequest::new("a", vec![Message::user("hello")], Vec::new());
        let reply = tokio::runtime::Builder::new_current_thread()
            .build()
            .map(|rt| rt.block_on(model.complete(&request)));
        assert_eq!(
            reply.ok().and_then(Result::ok).and_then(|r| r.usage),
            Some(usage)
        );
    }
}
