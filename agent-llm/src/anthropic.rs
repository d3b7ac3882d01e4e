//! The Anthropic Messages API.
//!
//! The system prompt goes in the top-level `system`; tool results go back as `tool_result`
//! blocks, consecutive ones in one user message, with `is_error: true` for a retry error.
//! `tool_use.input` is carried as raw JSON both ways, so its number text and key order reach
//! the contract path and the next request as the model wrote them. `thinking` and
//! `redacted_thinking` blocks are kept on the message ([`Message::thinking`]) and sent back
//! unchanged, before the turn's text and tool calls, as the API requires of a thinking model
//! that calls tools.

use crate::http::{ConfigError, Http, Settings, malformed};
use crate::model_error::stopped;
use crate::sse::{EventReader, malformed_event};
use crate::strict::{StructuredOutput, output_schema, tool_is_strict};
use agent_contracts_runtime::contract::ToolDefinition;
use agent_contracts_runtime::{
    Message, model::ChatRequest, model::ChatResponse, model::Media, model::MediaData,
    model::MediaKind, model::ModelError, model::ModelOptions, model::Part, model::Role,
    model::StreamDelta, model::StreamSink, model::Thinking, model::ToolCallRequest,
    model::ToolChoice, model::Usage,
};
use agent_contracts_schema::strict::Dialect;
use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
/// The base URL when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is sent when no option sets it.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The Messages wire format and its settings.
#[derive(Debug)]
pub(crate) struct Wire {
    thinking: Option<u32>,
    structured_output: StructuredOutput,
    caching: PromptCaching,
}

/// Prompt caching: `cache_control` breakpoints after the tools and after the system prompt,
/// the prefix every call of an agent repeats, so later calls read it from the cache (billed
/// at a tenth of the input price) after one write (billed above it).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptCaching {
    /// No breakpoints.
    #[default]
    Off,
    /// Breakpoints kept for 5 minutes after each use (`{"type": "ephemeral"}`).
    FiveMinutes,
    /// Breakpoints kept for an hour (`"ttl": "1h"`; writes cost more).
    OneHour,
}

impl PromptCaching {
    fn cache_control(self) -> Option<Value> {
        match self {
            Self::Off => None,
            Self::FiveMinutes => Some(json!({"type": "ephemeral"})),
            Self::OneHour => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        }
    }
}

/// The smallest thinking budget the API takes.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The endpoint: `v1/messages` under the base URL.
pub(crate) fn url(http: &Http) -> reqwest::Url {
    http.url(&["v1", "messages"])
}

/// The key (`x-api-key`), a bearer token, and the API version.
pub(crate) fn headers(settings: &Settings) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = &settings.api_key {
        headers.insert("x-api-key", Http::secret_header(key.expose())?);
    }
    if let Some(token) = &settings.auth_token {
        let value = Http::secret_header(&format!("Bearer {}", token.expose()))?;
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    headers.insert(
        "anthropic-version",
        reqwest::header::HeaderValue::from_static(API_VERSION),
    );
    Ok(headers)
}

impl Wire {
    /// The wire format; a thinking budget below the API's minimum is refused.
    pub fn new(
        thinking: Option<u32>,
        structured_output: StructuredOutput,
        caching: PromptCaching,
    ) -> Result<Self, ConfigError> {
        if let Some(budget) = thinking.filter(|b| *b < MIN_THINKING_BUDGET) {
            return Err(ConfigError::Invalid {
                setting: "thinking",
                reason: format!(
                    "a budget of {budget} tokens is below the API's minimum of {MIN_THINKING_BUDGET}"
                ),
            });
        }
        Ok(Self {
            thinking,
            structured_output,
            caching,
        })
    }

    /// The request body, `stream: true` when streaming.
    pub fn body(
        &self,
        settings: &Settings,
        request: &ChatRequest,
        stream: bool,
    ) -> Result<Vec<u8>, ModelError> {
        let mut head = self.head(settings, request);
        if stream {
            head.insert("stream".into(), true.into());
        }
        let body = Body {
            head,
            messages: turns(&request.messages),
        };
        serde_json::to_vec(&body).map_err(|e| ModelError::Other(e.to_string()))
    }

    /// Everything but the messages: model, system, tools, options, then the extras.
    fn head(&self, settings: &Settings, request: &ChatRequest) -> Map<String, Value> {
        let options = settings.options_for(request);
        let mut head = Map::new();
        head.insert("model".into(), settings.model.clone().into());
        // The thinking budget is part of `max_tokens`: the default leaves the answer its room.
        let budget = self.thinking.unwrap_or(0);
        let max_tokens = options
            .max_tokens
            .unwrap_or(DEFAULT_MAX_TOKENS.saturating_add(budget));
        head.insert("max_tokens".into(), max_tokens.into());
        if let Some(budget) = self.thinking {
            let thinking = json!({"type": "enabled", "budget_tokens": budget});
            head.insert("thinking".into(), thinking);
        }
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let cache_control = self.caching.cache_control();
        if !system.is_empty() {
            let text = system.join("\n\n");
            let system = match &cache_control {
                None => text.into(),
                Some(cc) => json!([{"type": "text", "text": text, "cache_control": cc}]),
            };
            head.insert("system".into(), system);
        }
        if let Some(format) = self.output_format(request) {
            head.insert("output_config".into(), json!({"format": format}));
        }
        if !request.tools.is_empty() {
            let mut tools: Vec<Value> = request.tools.iter().map(|t| self.wire_tool(t)).collect();
            if let (Some(last), Some(cc)) = (tools.last_mut(), &cache_control) {
                last["cache_control"] = cc.clone();
            }
            head.insert("tools".into(), tools.into());
            if let Some(choice) = tool_choice(&options) {
                head.insert("tool_choice".into(), choice);
            }
        }
        if let Some(t) = options.temperature {
            head.insert("temperature".into(), t.into());
        }
        head.extend(options.extra);
        head.remove("messages");
        head
    }

    /// Native structured output: `{"type": "json_schema", "schema": ...}` with the output
    /// contract's strict form, when it has one.
    fn output_format(&self, request: &ChatRequest) -> Option<Value> {
        if self.structured_output != StructuredOutput::Auto {
            return None;
        }
        let schema = output_schema(request.output_schema.as_ref()?, Dialect::Anthropic)?;
        Some(json!({"type": "json_schema", "schema": schema}))
    }

    /// A tool, `strict: true` when its parameters fit the strict subset as written.
    fn wire_tool(&self, tool: &ToolDefinition) -> Value {
        let mut json = tool_json(tool);
        if self.structured_output == StructuredOutput::Auto
            && tool_is_strict(tool, Dialect::Anthropic)
        {
            json["strict"] = true.into();
        }
        json
    }
}

/// `tool_choice`, with `parallel_tool_calls: false` as `disable_parallel_tool_use`.
fn tool_choice(options: &ModelOptions) -> Option<Value> {
    let mut choice = match &options.tool_choice {
        None if options.parallel_tool_calls.is_none() => return None,
        None | Some(ToolChoice::Auto) => json!({"type": "auto"}),
        Some(ToolChoice::None) => return Some(json!({"type": "none"})),
        Some(ToolChoice::Required) => json!({"type": "any"}),
        Some(ToolChoice::Tool(name)) => json!({"type": "tool", "name": name}),
    };
    if let Some(parallel) = options.parallel_tool_calls {
        choice["disable_parallel_tool_use"] = (!parallel).into();
    }
    Some(choice)
}

/// The request body; `messages` is typed so `tool_use.input` can stay raw JSON.
#[derive(Serialize)]
struct Body {
    #[serde(flatten)]
    head: Map<String, Value>,
    messages: Vec<Turn>,
}

#[derive(Serialize)]
struct Turn {
    role: &'static str,
    content: Vec<Block>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    Image {
        source: Value,
    },
    ToolUse {
        id: String,
        name: String,
        input: Box<RawValue>,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolContent,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    Document {
        source: Value,
    },
    /// A thinking or redacted-thinking block, in its own wire format (serde wants untagged
    /// variants last).
    #[serde(untagged)]
    Thinking(Thinking),
}

/// The conversation as turns: system messages left out (they are `system`), tool results and
/// user text that follow each other in one user turn.
fn turns(messages: &[Message]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => continue,
            Role::User => ("user", user_blocks(message)),
            Role::Tool => ("user", vec![tool_result(message)]),
            Role::Assistant => ("assistant", assistant_blocks(message)),
        };
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(Turn {
                role,
                content: blocks,
            }),
        }
    }
    // The API refuses empty text blocks and empty turns; an empty answer (a model cut off at
    // its token limit) still takes its place in the conversation.
    for turn in turns.iter_mut().filter(|t| t.content.is_empty()) {
        turn.content.push(Block::Text {
            text: EMPTY_TEXT.to_owned(),
        });
    }
    turns
}

/// What stands for an empty message.
const EMPTY_TEXT: &str = "(empty)";

fn text_block(text: &str) -> Option<Block> {
    (!text.is_empty()).then(|| Block::Text {
        text: text.to_owned(),
    })
}

/// The text and media in order ([`Message::parts`]): text blocks, and image and document
/// blocks where the media stand.
fn user_blocks(message: &Message) -> Vec<Block> {
    message
        .parts()
        .into_iter()
        .filter_map(|part| match part {
            Part::Text(text) => text_block(text),
            Part::Media(media) => Some(media_block(media)),
            _ => None,
        })
        .collect()
}

/// Thinking first, then text, then tool calls: the order the API answers in.
fn assistant_blocks(message: &Message) -> Vec<Block> {
    let thinking = message.thinking.iter().cloned().map(Block::Thinking);
    let calls = message.tool_calls.iter().map(|call| Block::ToolUse {
        id: call.id.clone(),
        name: call.name.clone(),
        input: raw_input(&call.arguments),
    });
    thinking
        .chain(text_block(&message.content))
        .chain(calls)
        .collect()
}

/// The call's arguments as the model wrote them. The API only takes an object; text that is
/// not one never came from it, and goes back as `{}`.
fn raw_input(arguments: &str) -> Box<RawValue> {
    match serde_json::from_str::<Box<RawValue>>(arguments) {
        Ok(raw) if raw.get().trim_start().starts_with('{') => raw,
        _ => RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!()),
    }
}

/// A `tool_result`'s content: its text, or, when the result brings media, blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum ToolContent {
    Text(String),
    Blocks(Vec<Block>),
}

/// A tool message as a `tool_result`, the media it brings inside it after its text; a retry
/// error (JSON with `"success": false`) is marked `is_error`.
fn tool_result(message: &Message) -> Block {
    let is_error = serde_json::from_str::<Value>(&message.content)
        .ok()
        .and_then(|v| v.get("success").and_then(Value::as_bool))
        == Some(false);
    let content = match message.media.is_empty() {
        true => ToolContent::Text(message.content.clone()),
        false => ToolContent::Blocks(
            text_block(&message.content)
                .into_iter()
                .chain(message.media.iter().map(media_block))
                .collect(),
        ),
    };
    Block::ToolResult {
        tool_use_id: message.tool_call_id.clone().unwrap_or_default(),
        content,
        is_error,
    }
}

/// One medium as a block of a user turn or a tool result: an image, or a PDF or plain-text document, inline
/// or by URL; what the API has no block for (audio, other documents) is said in text.
fn media_block(media: &Media) -> Block {
    let source = match &media.data {
        MediaData::Base64(data) => {
            Some(json!({"type": "base64", "media_type": media.media_type, "data": data}))
        }
        MediaData::Url(url) => Some(json!({"type": "url", "url": url})),
        _ => None,
    };
    let document = matches!(media.media_type.as_str(), "application/pdf" | "text/plain");
    match (media.kind, source) {
        (MediaKind::Image, Some(source)) => Block::Image { source },
        (MediaKind::Document, Some(source)) if document => Block::Document { source },
        (kind, _) => {
            let what = match kind {
                MediaKind::Image => "an image",
                MediaKind::Audio => "audio",
                _ => "a document",
            };
            let at = match &media.data {
                MediaData::Url(url) => format!(" at {url}"),
                _ => String::new(),
            };
            Block::Text {
                text: format!(
                    "({what} of type {}{at}, not shown: this model takes no such block)",
                    media.media_type
                ),
            }
        }
    }
}

/// The parts of a message response this crate reads.
#[derive(Deserialize)]
struct Reply {
    id: Option<String>,
    model: Option<String>,
    content: Option<Vec<ReplyBlock>>,
    stop_reason: Option<String>,
    usage: Option<Value>,
}

/// A content block, untagged so `input` can be raw (serde cannot buffer a raw value).
#[derive(Deserialize)]
struct ReplyBlock {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Box<RawValue>>,
    thinking: Option<String>,
    signature: Option<String>,
    data: Option<String>,
}

pub(crate) fn parse_response(bytes: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: Reply = serde_json::from_slice(bytes)
        .map_err(|e| malformed(&format!("the body is not a message ({e})"), bytes))?;
    let blocks = reply
        .content
        .ok_or_else(|| malformed("the response has no `content`", bytes))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut thinking = Vec::new();
    for (i, block) in blocks.into_iter().enumerate() {
        match block.kind.as_str() {
            "text" => text.push_str(block.text.as_deref().unwrap_or_default()),
            "tool_use" => tool_calls.push(ToolCallRequest {
                id: block.id.unwrap_or_else(|| format!("toolu_{i}")),
                name: block.name.unwrap_or_default(),
                arguments: block
                    .input
                    .map_or_else(|| "{}".to_owned(), |raw| raw.get().to_owned()),
            }),
            "thinking" => thinking.push(Thinking::Thinking {
                thinking: block.thinking.unwrap_or_default(),
                signature: block.signature.unwrap_or_default(),
            }),
            "redacted_thinking" => thinking.push(Thinking::RedactedThinking {
                data: block.data.unwrap_or_default(),
            }),
            // Other blocks (server tool results, ...) are not part of the answer.
            _ => {}
        }
    }
    let usage = reply.usage.as_ref().map(usage);
    if reply.stop_reason.as_deref() == Some("max_tokens") {
        return Err(crate::model_error::cut_off(usage.as_ref()));
    }
    Ok({
        let mut response = ChatResponse::from(
            Message::assistant(text)
                .with_thinking(thinking)
                .with_tool_calls(tool_calls),
        );
        response.usage = usage;
        response.finish_reason = reply.stop_reason.filter(|r| !r.is_empty());
        response.model = reply.model;
        response.id = reply.id;
        response
    })
}

/// A streamed message: `message_start`, `content_block_start`/`_delta`/`_stop` per block,
/// `message_delta` (the stop reason and the output tokens), `message_stop`; `ping` skipped;
/// an `error` event the error it stands for. Text and thinking deltas go to `sink` as they
/// come; tool inputs (`input_json_delta`) and signatures (`signature_delta`) are put
/// together, and the blocks come out as [`parse_response`] makes them.
pub(crate) async fn read_stream(
    events: &mut EventReader,
    sink: &mut dyn StreamSink,
) -> Result<ChatResponse, ModelError> {
    let mut message = StreamedMessage::default();
    while let Some(event) = events.next().await? {
        let data = event.data.as_deref().unwrap_or_default();
        let parsed: StreamEvent = serde_json::from_str(data).map_err(|e| {
            malformed_event(&format!("an event is not a message event ({e})"), data)
        })?;
        match message.take(parsed, sink)? {
            Step::Next => {}
            Step::Stopped => return Err(stopped(message.partial())),
            Step::End => return message.finish(),
        }
    }
    Err(events.cut("`message_stop`"))
}

/// The parts of a stream event this crate reads.
#[derive(Deserialize)]
struct StreamEvent {
    #[serde(rename = "type")]
    kind: String,
    index: Option<u64>,
    message: Option<StartMessage>,
    content_block: Option<ReplyBlock>,
    delta: Option<EventDelta>,
    usage: Option<Map<String, Value>>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StartMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct EventDelta {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    stop_reason: Option<String>,
}

/// A content block as it streams in.
enum Streaming {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    /// A block that is not part of the answer (server tool results, ...).
    Other,
}

#[derive(Default)]
struct StreamedMessage {
    id: Option<String>,
    model: Option<String>,
    blocks: BTreeMap<u64, Streaming>,
    /// `message_start`'s usage, updated by each `message_delta`'s.
    usage: Option<Map<String, Value>>,
    stop_reason: Option<String>,
}

/// What an event leads to.
enum Step {
    Next,
    Stopped,
    End,
}

impl StreamedMessage {
    fn take(&mut self, event: StreamEvent, sink: &mut dyn StreamSink) -> Result<Step, ModelError> {
        match event.kind.as_str() {
            "message_start" => {
                let start = event
                    .message
                    .ok_or_else(|| missing("message_start", "message"))?;
                (self.id, self.model, self.usage) = (start.id, start.model, start.usage);
            }
            "content_block_start" => {
                let index = event
                    .index
                    .ok_or_else(|| missing("content_block_start", "index"))?;
                let block = event
                    .content_block
                    .ok_or_else(|| missing("content_block_start", "content_block"))?;
                self.blocks.insert(index, started(block, index));
            }
            "content_block_delta" => {
                let index = event
                    .index
                    .ok_or_else(|| missing("content_block_delta", "index"))?;
                let delta = event
                    .delta
                    .ok_or_else(|| missing("content_block_delta", "delta"))?;
                let block = self.blocks.get_mut(&index).ok_or_else(|| {
                    ModelError::Malformed(format!("a delta for block {index}, which never started"))
                })?;
                if apply(block, delta, sink).is_break() {
                    return Ok(Step::Stopped);
                }
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = event.usage {
                    self.usage.get_or_insert_default().extend(usage);
                }
            }
            "message_stop" => return Ok(Step::End),
            "error" => {
                let error = event.error.unwrap_or_default();
                return Err(stream_error(&error));
            }
            // `ping`, `content_block_stop`, and events added later.
            _ => {}
        }
        Ok(Step::Next)
    }

    fn usage(&self) -> Option<Usage> {
        self.usage.clone().map(|map| usage(&Value::Object(map)))
    }

    /// What was received before a stop: the text so far, the usage known.
    fn partial(self) -> ChatResponse {
        let usage = self.usage();
        let text = self
            .blocks
            .into_values()
            .filter_map(|block| match block {
                Streaming::Text(text) => Some(text),
                _ => None,
            })
            .collect::<String>();
        {
            let mut response = ChatResponse::from(Message::assistant(text));
            response.usage = usage;
            response.finish_reason = None;
            response.model = self.model;
            response.id = self.id;
            response
        }
    }

    fn finish(self) -> Result<ChatResponse, ModelError> {
        let usage = self.usage();
        if self.stop_reason.as_deref() == Some("max_tokens") {
            return Err(crate::model_error::cut_off(usage.as_ref()));
        }
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut thinking = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Streaming::Text(t) => text.push_str(&t),
                Streaming::ToolUse { id, name, input } => tool_calls.push(ToolCallRequest {
                    id,
                    name,
                    arguments: if input.is_empty() { "{}".into() } else { input },
                }),
                Streaming::Thinking {
                    thinking: t,
                    signature,
                } => thinking.push(Thinking::Thinking {
                    thinking: t,
                    signature,
                }),
                Streaming::Redacted(data) => thinking.push(Thinking::RedactedThinking { data }),
                Streaming::Other => {}
            }
        }
        Ok({
            let mut response = ChatResponse::from(
                Message::assistant(text)
                    .with_thinking(thinking)
                    .with_tool_calls(tool_calls),
            );
            response.usage = usage;
            response.finish_reason = self.stop_reason.filter(|r| !r.is_empty());
            response.model = self.model;
            response.id = self.id;
            response
        })
    }
}

/// A block as `content_block_start` opens it (its text or input comes in deltas).
fn started(block: ReplyBlock, index: u64) -> Streaming {
    match block.kind.as_str() {
        "text" => Streaming::Text(block.text.unwrap_or_default()),
        "tool_use" => Streaming::ToolUse {
            id: block.id.unwrap_or_else(|| format!("toolu_{index}")),
            name: block.name.unwrap_or_default(),
            input: String::new(),
        },
        "thinking" => Streaming::Thinking {
            thinking: block.thinking.unwrap_or_default(),
            signature: block.signature.unwrap_or_default(),
        },
        "redacted_thinking" => Streaming::Redacted(block.data.unwrap_or_default()),
        _ => Streaming::Other,
    }
}

/// One delta applied to its block; text and thinking handed to `sink`.
fn apply(block: &mut Streaming, delta: EventDelta, sink: &mut dyn StreamSink) -> ControlFlow<()> {
    match (block, delta.kind.as_deref()) {
        (Streaming::Text(text), Some("text_delta")) => {
            let piece = delta.text.unwrap_or_default();
            text.push_str(&piece);
            sink.delta(StreamDelta::Text(&piece))
        }
        (Streaming::ToolUse { input, .. }, Some("input_json_delta")) => {
            input.push_str(delta.partial_json.as_deref().unwrap_or_default());
            ControlFlow::Continue(())
        }
        (Streaming::Thinking { thinking, .. }, Some("thinking_delta")) => {
            let piece = delta.thinking.unwrap_or_default();
            thinking.push_str(&piece);
            sink.delta(StreamDelta::Thinking(&piece))
        }
        (Streaming::Thinking { signature, .. }, Some("signature_delta")) => {
            signature.push_str(delta.signature.as_deref().unwrap_or_default());
            ControlFlow::Continue(())
        }
        // A delta of another kind (citations, ...) is not part of the answer.
        _ => ControlFlow::Continue(()),
    }
}

fn missing(event: &str, field: &str) -> ModelError {
    ModelError::Malformed(format!("a `{event}` event without its `{field}`"))
}

/// An `error` event (`{"type": "overloaded_error", "message": ...}`) as the status the API
/// documents for its type.
fn stream_error(error: &Value) -> ModelError {
    let text = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or_default();
    let status = match text("type") {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    };
    let message = match text("message") {
        "" => "no message".to_owned(),
        message => message.to_owned(),
    };
    crate::model_error::stream_error(status, message)
}

/// Anthropic counts cache reads and writes apart from `input_tokens`; the input total adds
/// them back.
fn usage(usage: &Value) -> Usage {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("cache_read_input_tokens");
    let written = count("cache_creation_input_tokens");
    Usage::new(
        count("input_tokens") + cached + written,
        count("output_tokens"),
    )
    .with_cached_tokens(cached)
    .with_cache_write_tokens(written)
    // Anthropic counts thinking inside `output_tokens` without a separate figure, so
    // `reasoning_tokens` stays 0.
}

/// A tool definition in Anthropic's format: `{"name", "description", "input_schema"}`.
pub fn tool_json(tool: &ToolDefinition) -> Value {
    serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters,
    })
}
