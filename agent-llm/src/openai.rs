//! The OpenAI Chat Completions API, for OpenAI and every server that speaks it (vLLM, Ollama
//! `/v1`, llama.cpp server, LM Studio, Groq, OpenRouter).
//!
//! Tool-call arguments travel as the text the model wrote, both ways: the contract path
//! decides what to do with text that is not JSON. Compatible servers' quirks are tolerated:
//! `finish_reason: ""`, arguments given as an object, tool calls without ids.

use crate::http::{Http, Settings, malformed};
use crate::model_error::stopped;
use crate::sse::{EventReader, malformed_event};
use crate::strict::{StructuredOutput, output_schema, tool_is_strict};
use agent_contracts_runtime::contract::ToolDefinition;
use agent_contracts_runtime::{
    Message, model::ChatRequest, model::ChatResponse, model::Media, model::MediaData,
    model::MediaKind, model::ModelError, model::ModelOptions, model::Part, model::Role,
    model::StreamDelta, model::StreamSink, model::ToolCallRequest, model::ToolChoice, model::Usage,
};
use agent_contracts_schema::strict::Dialect;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// The base URL when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How hard a reasoning model thinks before it answers (`reasoning_effort`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningEffort {
    /// The fewest reasoning tokens (GPT-5).
    Minimal,
    /// Fast and cheap.
    Low,
    /// The API's default.
    Medium,
    /// The most thorough.
    High,
}

impl ReasoningEffort {
    fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// The Chat Completions wire format and its settings.
#[derive(Debug)]
pub(crate) struct Wire {
    structured_output: StructuredOutput,
    reasoning_effort: Option<ReasoningEffort>,
    key_header: KeyHeader,
    /// Numbers the calls a server left without an id.
    call_ids: AtomicU64,
}

/// How the key travels, and where the endpoint is: OpenAI's bearer token and
/// `chat/completions`, or Azure's `api-key` header and deployment path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyHeader {
    Bearer,
    AzureApiKey,
}

impl Wire {
    pub fn new(
        structured_output: StructuredOutput,
        reasoning_effort: Option<ReasoningEffort>,
        azure: bool,
    ) -> Self {
        Self {
            structured_output,
            reasoning_effort,
            key_header: if azure {
                KeyHeader::AzureApiKey
            } else {
                KeyHeader::Bearer
            },
            call_ids: AtomicU64::new(0),
        }
    }

    /// The endpoint: `chat/completions` under the base URL, or Azure's deployment path.
    pub fn url(&self, http: &Http) -> reqwest::Url {
        match self.key_header {
            KeyHeader::Bearer => http.url(&["chat", "completions"]),
            KeyHeader::AzureApiKey => {
                let deployment = http.settings.model.as_str();
                http.url(&["openai", "deployments", deployment, "chat", "completions"])
            }
        }
    }

    /// The key (a bearer token, or Azure's `api-key`), and a token in its place.
    pub fn headers(&self, settings: &Settings) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &settings.api_key {
            match self.key_header {
                KeyHeader::Bearer => {
                    let value = Http::secret_header(&format!("Bearer {}", key.expose()))?;
                    headers.insert(reqwest::header::AUTHORIZATION, value);
                }
                KeyHeader::AzureApiKey => {
                    headers.insert("api-key", Http::secret_header(key.expose())?);
                }
            }
        }
        if let Some(token) = &settings.auth_token {
            let value = Http::secret_header(&format!("Bearer {}", token.expose()))?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        Ok(headers)
    }

    /// The request body: model, messages, tools, options, the response format, the stream
    /// flags, then the provider extras (which win).
    pub fn body(
        &self,
        settings: &Settings,
        request: &ChatRequest,
        stream: bool,
    ) -> Result<Vec<u8>, ModelError> {
        let options = settings.options_for(request);
        let mut body = Map::new();
        body.insert("model".into(), settings.model.clone().into());
        let messages = wire_messages(&request.messages);
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools = request.tools.iter().map(|tool| self.wire_tool(tool));
            body.insert("tools".into(), tools.collect());
            if let Some(choice) = &options.tool_choice {
                body.insert("tool_choice".into(), tool_choice(choice));
            }
            if let Some(parallel) = options.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), parallel.into());
            }
        }
        insert_sampling(&mut body, &options, self.reasoning_effort);
        if let Some(format) = self.response_format(request) {
            body.insert("response_format".into(), format);
        }
        if stream {
            body.insert("stream".into(), true.into());
            // The usage comes in a last chunk only when asked for.
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body.extend(options.extra);
        serde_json::to_vec(&body).map_err(|e| ModelError::Other(e.to_string()))
    }

    /// The output contract's strict form with `strict: true` when it has one; otherwise the
    /// schema as written, `strict: false`.
    fn response_format(&self, request: &ChatRequest) -> Option<Value> {
        let output = request.output_schema.as_ref()?;
        let (schema, strict) = match self.structured_output {
            StructuredOutput::Off => return None,
            StructuredOutput::NonStrict => (&output.schema, false),
            StructuredOutput::Auto => match output_schema(output, Dialect::OpenAi) {
                Some(schema) => (schema, true),
                None => (&output.schema, false),
            },
        };
        Some(json!({
            "type": "json_schema",
            "json_schema": {"name": output.name, "schema": schema, "strict": strict},
        }))
    }

    /// A tool, `strict: true` when its parameters fit the strict subset as written.
    fn wire_tool(&self, tool: &ToolDefinition) -> Value {
        let mut json = tool_json(tool);
        if self.structured_output == StructuredOutput::Auto && tool_is_strict(tool, Dialect::OpenAi)
        {
            json["function"]["strict"] = true.into();
        }
        json
    }

    /// A whole completion, parsed.
    pub fn parse(&self, bytes: &[u8]) -> Result<ChatResponse, ModelError> {
        parse_response(bytes, &self.call_ids)
    }

    /// A streamed completion: `chat.completion.chunk` events until `[DONE]`, the text handed
    /// to `sink` as it comes, tool calls put together by their index, the usage from the
    /// last chunk. A stream that ends without `[DONE]` is complete if it said why it
    /// finished (some compatible servers leave `[DONE]` out), and cut otherwise.
    pub async fn read_stream(
        &self,
        events: &mut EventReader,
        sink: &mut dyn StreamSink,
    ) -> Result<ChatResponse, ModelError> {
        let mut answer = Streamed::default();
        let mut done = false;
        while let Some(event) = events.next().await? {
            let data = event.data.as_deref().unwrap_or_default();
            if data.trim() == "[DONE]" {
                done = true;
                break;
            }
            if answer.take(data, sink)?.is_break() {
                return Err(stopped(answer.partial()));
            }
        }
        if !done && answer.finish_reason.is_none() {
            return Err(events.cut("`data: [DONE]`"));
        }
        answer.finish(&self.call_ids)
    }
}

/// A streamed completion as it is put together.
#[derive(Default)]
struct Streamed {
    id: Option<String>,
    model: Option<String>,
    text: String,
    refusal: String,
    /// By index: the id, the name, the argument text.
    calls: std::collections::BTreeMap<u64, (Option<String>, String, Option<String>)>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

/// The parts of a `chat.completion.chunk` this crate reads.
#[derive(Deserialize)]
struct Chunk {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<Value>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u64,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: u64,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

impl Streamed {
    /// Takes one chunk's data; `Break` when the sink stopped.
    fn take(
        &mut self,
        data: &str,
        sink: &mut dyn StreamSink,
    ) -> Result<ControlFlow<()>, ModelError> {
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            malformed_event(&format!("an event is not a completion chunk ({e})"), data)
        })?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        if self.id.is_none() {
            self.id = chunk.id;
        }
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(value) = chunk.usage.filter(|u| u.is_object()) {
            self.usage = Some(usage(&value));
        }
        // One answer is asked for (`n` is never sent): choice 0.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            self.refusal
                .push_str(delta.refusal.as_deref().unwrap_or_default());
            for call in delta.tool_calls.unwrap_or_default() {
                let entry = self.calls.entry(call.index).or_default();
                if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                    entry.0 = Some(id);
                }
                let function = call.function.unwrap_or(FunctionDelta {
                    name: None,
                    arguments: None,
                });
                entry
                    .1
                    .push_str(function.name.as_deref().unwrap_or_default());
                if let Some(arguments) = function.arguments {
                    entry.2.get_or_insert_default().push_str(&arguments);
                }
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&text);
                if sink.delta(StreamDelta::Text(&text)).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// What was received before a stop.
    fn partial(self) -> ChatResponse {
        {
            let mut response = ChatResponse::from(Message::assistant(self.text));
            response.usage = self.usage;
            response.finish_reason = None;
            response.model = self.model;
            response.id = self.id;
            response
        }
    }

    /// The whole answer, as [`parse_response`] makes it.
    fn finish(self, call_ids: &AtomicU64) -> Result<ChatResponse, ModelError> {
        if self.finish_reason.as_deref() == Some("length") {
            return Err(crate::model_error::cut_off(self.usage.as_ref()));
        }
        let tool_calls = self
            .calls
            .into_values()
            .map(|(id, name, arguments)| ToolCallRequest {
                id: id.unwrap_or_else(|| {
                    format!("call_{}", call_ids.fetch_add(1, Ordering::Relaxed))
                }),
                name,
                arguments: arguments.unwrap_or_else(|| "{}".to_owned()),
            })
            .collect();
        let content = if self.text.is_empty() {
            self.refusal
        } else {
            self.text
        };
        Ok({
            let mut response =
                ChatResponse::from(Message::assistant(content).with_tool_calls(tool_calls));
            response.usage = self.usage;
            response.finish_reason = self.finish_reason.filter(|r| !r.is_empty());
            response.model = self.model;
            response.id = self.id;
            response
        })
    }
}

/// An error the server sent inside the stream (`{"error": {"message", "type", "code"}}`),
/// as the status it would have answered with.
fn stream_error(error: &Value) -> ModelError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_owned();
    let kind = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or_default();
    let status = match (kind("type"), kind("code")) {
        (_, "rate_limit_exceeded") | ("rate_limit_exceeded" | "requests" | "tokens", _) => 429,
        ("invalid_request_error", _) => 400,
        _ => 500,
    };
    crate::model_error::stream_error(status, message)
}

/// Temperature and the token limit; reasoning models refuse `max_tokens` and take
/// `max_completion_tokens` (reasoning included) instead.
fn insert_sampling(
    body: &mut Map<String, Value>,
    options: &ModelOptions,
    effort: Option<ReasoningEffort>,
) {
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), t.into());
    }
    let limit = match effort {
        Some(effort) => {
            body.insert("reasoning_effort".into(), effort.as_str().into());
            "max_completion_tokens"
        }
        None => "max_tokens",
    };
    if let Some(m) = options.max_tokens {
        body.insert(limit.into(), m.into());
    }
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// The conversation on the wire. Tool messages take text only, so the media tool results
/// bring go in a user message right after the tool messages of their turn, each after a line
/// naming its call.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut wire = Vec::with_capacity(messages.len());
    let mut media: Vec<Value> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        wire.push(wire_message(message));
        if message.role == Role::Tool && !message.media.is_empty() {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            media.push(json!({"type": "text", "text": format!("{MEDIA_OF_CALL} {id}:")}));
            media.extend(message.media.iter().map(media_part));
        }
        let turn_ends = messages
            .get(at + 1)
            .is_none_or(|next| next.role != Role::Tool);
        if turn_ends && !media.is_empty() {
            wire.push(json!({"role": "user", "content": std::mem::take(&mut media)}));
        }
    }
    wire
}

/// What the user message of tool results' media says before each call's media.
const MEDIA_OF_CALL: &str = "Media returned by the tool call";

/// One medium as a content part of a user message: an image by URL (a data URL when inline),
/// WAV or MP3 audio inline, a document inline as a file; what the format has no part for
/// (audio by URL or of another type, a document by URL) is said in text.
fn media_part(media: &Media) -> Value {
    let data_url = |data: &str| format!("data:{};base64,{data}", media.media_type);
    let unsent = || {
        let at = match &media.data {
            MediaData::Url(url) => format!(" at {url}"),
            _ => String::new(),
        };
        json!({"type": "text", "text": format!("({} of type {}{at}, not shown: this model takes no such part)", kind_name(media.kind), media.media_type)})
    };
    match (media.kind, &media.data) {
        (MediaKind::Image, MediaData::Url(url)) => {
            json!({"type": "image_url", "image_url": {"url": url}})
        }
        (MediaKind::Image, MediaData::Base64(data)) => {
            json!({"type": "image_url", "image_url": {"url": data_url(data)}})
        }
        (MediaKind::Audio, MediaData::Base64(data)) => match media.media_type.as_str() {
            "audio/wav" | "audio/x-wav" | "audio/wave" => {
                json!({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
            }
            "audio/mpeg" | "audio/mp3" => {
                json!({"type": "input_audio", "input_audio": {"data": data, "format": "mp3"}})
            }
            _ => unsent(),
        },
        (MediaKind::Document, MediaData::Base64(data)) => {
            let name = media
                .uri
                .as_deref()
                .and_then(|uri| uri.rsplit('/').next())
                .filter(|name| !name.is_empty())
                .unwrap_or("document");
            json!({"type": "file", "file": {"filename": name, "file_data": data_url(data)}})
        }
        _ => unsent(),
    }
}

/// How the text of a part the format lacks names its kind.
fn kind_name(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => "an image",
        MediaKind::Audio => "audio",
        _ => "a document",
    }
}

/// A message on the wire. Argument text goes back exactly as the model wrote it.
fn wire_message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User if message.media.is_empty() => {
            json!({"role": "user", "content": message.content})
        }
        // Text and media in order: text parts, and each medium's part where it stands.
        Role::User => {
            let parts: Vec<Value> = message
                .parts()
                .into_iter()
                .filter_map(|part| match part {
                    Part::Text(text) => Some(json!({"type": "text", "text": text})),
                    Part::Media(media) => Some(media_part(media)),
                    _ => None,
                })
                .collect();
            json!({"role": "user", "content": parts})
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.clone().unwrap_or_default(),
            "content": message.content,
        }),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({"role": "assistant", "content": message.content})
        }
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            let content = (!message.content.is_empty()).then(|| message.content.clone());
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
    }
}

/// The parts of a completion this crate reads. Argument values are kept raw, so an object
/// given in place of a string keeps its text.
#[derive(Deserialize)]
struct Completion {
    id: Option<String>,
    model: Option<String>,
    choices: Option<Vec<Choice>>,
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<WireReply>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireReply {
    content: Option<Value>,
    tool_calls: Option<Vec<WireToolCall>>,
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    arguments: Option<Box<RawValue>>,
}

fn parse_response(bytes: &[u8], call_ids: &AtomicU64) -> Result<ChatResponse, ModelError> {
    let completion: Completion = serde_json::from_slice(bytes)
        .map_err(|e| malformed(&format!("the body is not a chat completion ({e})"), bytes))?;
    let choice = completion
        .choices
        .ok_or_else(|| malformed("the response has no `choices`", bytes))?
        .into_iter()
        .next()
        .ok_or_else(|| malformed("the response's `choices` is empty", bytes))?;
    let reply = choice
        .message
        .ok_or_else(|| malformed("the first choice has no `message`", bytes))?;
    let tool_calls = reply
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|call| tool_call(call, call_ids))
        .collect();
    let content = match reply.content {
        Some(content) => text_of(content),
        None => reply.refusal.unwrap_or_default(),
    };
    let usage = completion.usage.as_ref().map(usage);
    if choice.finish_reason.as_deref() == Some("length") {
        return Err(crate::model_error::cut_off(usage.as_ref()));
    }
    Ok({
        let mut response =
            ChatResponse::from(Message::assistant(content).with_tool_calls(tool_calls));
        response.usage = usage;
        response.finish_reason = choice.finish_reason.filter(|r| !r.is_empty());
        response.model = completion.model;
        response.id = completion.id;
        response
    })
}

fn tool_call(call: WireToolCall, call_ids: &AtomicU64) -> ToolCallRequest {
    let arguments = match call.function.arguments {
        // A JSON string holds the text the model wrote; anything else is the text itself.
        Some(raw) => {
            serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| raw.get().to_owned())
        }
        None => "{}".to_owned(),
    };
    let id = call
        .id
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| format!("call_{}", call_ids.fetch_add(1, Ordering::Relaxed)));
    ToolCallRequest {
        id,
        name: call.function.name,
        arguments,
    }
}

/// Content is a string, or (on some servers) a list of text parts.
fn text_of(content: Value) -> String {
    match content {
        Value::String(text) => text,
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn usage(usage: &Value) -> Usage {
    let count = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    // OpenAI caches without a write charge, so it reports no writes.
    Usage::new(
        count(usage.get("prompt_tokens")),
        count(usage.get("completion_tokens")),
    )
    .with_cached_tokens(count(usage.pointer("/prompt_tokens_details/cached_tokens")))
    .with_reasoning_tokens(count(
        usage.pointer("/completion_tokens_details/reasoning_tokens"),
    ))
}

/// A tool definition in OpenAI's format:
/// `{"type": "function", "function": {"name", "description", "parameters"}}`.
pub fn tool_json(tool: &ToolDefinition) -> Value {
    serde_json::json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
    })
}
