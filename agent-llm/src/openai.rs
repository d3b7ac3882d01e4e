//! The OpenAI Chat Completions API, for OpenAI and every server that speaks it (vLLM, Ollama
//! `/v1`, llama.cpp server, LM Studio, Groq, OpenRouter).
//!
//! Tool-call arguments travel as the text the model wrote, both ways: the contract path
//! decides what to do with text that is not JSON. Compatible servers' quirks are tolerated:
//! `finish_reason: ""`, arguments given as an object, tool calls without ids.

use crate::http::{
    ConfigError, Http, Settings, header_value, malformed, process_env, settings_methods, var,
};
use crate::strict::{StructuredOutput, output_schema, tool_is_strict};
use agent_core::BoxFuture;
use agent_core::ToolDefinition;
use agent_core::{
    ChatModel, ChatRequest, ChatResponse, Image, Message, ModelError, ModelOptions, Role,
    ToolCallRequest, ToolChoice, Usage,
};
use agent_schema::strict::Dialect;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The provider's name in traces.
const PROVIDER: &str = "openai";
/// The base URL when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How hard a reasoning model thinks before it answers (`reasoning_effort`).
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

/// A chat model behind the Chat Completions API.
///
/// ```no_run
/// use agent_llm::OpenAiModel;
/// # fn main() -> Result<(), agent_llm::ConfigError> {
/// // OPENAI_API_KEY and OPENAI_BASE_URL, like the official SDKs:
/// let model = OpenAiModel::from_env("gpt-4o-mini")?;
/// // A local server:
/// let local = OpenAiModel::builder("llama3.2")
///     .base_url("http://127.0.0.1:11434/v1")
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    http: Arc<Http>,
    structured_output: StructuredOutput,
    reasoning_effort: Option<ReasoningEffort>,
    key_header: KeyHeader,
    call_ids: Arc<AtomicU64>,
}

/// How the key travels: OpenAI's bearer token, or Azure's `api-key` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyHeader {
    Bearer,
    AzureApiKey,
}

/// Builds an [`OpenAiModel`].
#[derive(Debug, Clone)]
#[must_use]
pub struct OpenAiBuilder {
    settings: Settings,
    structured_output: StructuredOutput,
    reasoning_effort: Option<ReasoningEffort>,
    key_header: KeyHeader,
    organization: Option<String>,
    project: Option<String>,
}

impl OpenAiModel {
    /// A builder for `model` at [`DEFAULT_BASE_URL`], without a key.
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder {
            settings: Settings::new(model.into(), DEFAULT_BASE_URL),
            structured_output: StructuredOutput::Auto,
            reasoning_effort: None,
            key_header: KeyHeader::Bearer,
            organization: None,
            project: None,
        }
    }

    /// A builder for an Azure OpenAI deployment: `endpoint` is the resource
    /// (`https://{resource}.openai.azure.com`), requests go to
    /// `/openai/deployments/{deployment}/chat/completions?api-version={api_version}`, and the
    /// key travels in the `api-key` header.
    ///
    /// ```
    /// let model = agent_llm::OpenAiModel::azure("https://acme.openai.azure.com", "gpt-4o", "2024-10-21")
    ///     .api_key("azure-key")
    ///     .build();
    /// assert!(model.is_ok());
    /// ```
    pub fn azure(endpoint: &str, deployment: &str, api_version: &str) -> OpenAiBuilder {
        let base_url = reqwest::Url::parse(endpoint.trim())
            .ok()
            .filter(|url| !url.cannot_be_a_base())
            .map(|mut url| {
                if let Ok(mut segments) = url.path_segments_mut() {
                    segments
                        .pop_if_empty()
                        .extend(["openai", "deployments", deployment]);
                }
                url.query_pairs_mut()
                    .append_pair("api-version", api_version);
                url.to_string()
            })
            // Left as given, the build reports it as an invalid base URL.
            .unwrap_or_else(|| endpoint.to_owned());
        OpenAiBuilder {
            key_header: KeyHeader::AzureApiKey,
            ..Self::builder(deployment).base_url(base_url)
        }
    }

    /// A builder for `model` from the environment, like the official SDK: `OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `OPENAI_ORG_ID` (sent as `OpenAI-Organization`) and
    /// `OPENAI_PROJECT_ID` (`OpenAI-Project`). The key may be missing only when the base URL
    /// is not OpenAI's (local servers need none).
    pub fn builder_from_env(model: impl Into<String>) -> Result<OpenAiBuilder, ConfigError> {
        Self::builder_from_env_with(model, process_env)
    }

    /// [`builder_from_env`](Self::builder_from_env) reading the variables from `env`.
    ///
    /// ```
    /// let env = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:8000/v1".to_owned());
    /// assert!(agent_llm::OpenAiModel::builder_from_env_with("llama3.2", env).is_ok());
    /// ```
    pub fn builder_from_env_with(
        model: impl Into<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiBuilder, ConfigError> {
        let mut builder = Self::builder(model);
        if let Some(url) = var(&env, "OPENAI_BASE_URL") {
            builder = builder.base_url(url);
        }
        match var(&env, "OPENAI_API_KEY") {
            Some(key) => builder = builder.api_key(key),
            None if builder.settings.base_url == DEFAULT_BASE_URL => {
                return Err(ConfigError::MissingEnv("OPENAI_API_KEY"));
            }
            None => {}
        }
        builder.organization = var(&env, "OPENAI_ORG_ID");
        builder.project = var(&env, "OPENAI_PROJECT_ID");
        Ok(builder)
    }

    /// The model `model`, configured from the environment.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ConfigError> {
        Self::builder_from_env(model)?.build()
    }

    /// The same client (connections, key, retries) for another model.
    pub fn with_model(&self, model: impl Into<String>) -> Self {
        let mut http = (*self.http).clone();
        http.settings.model = model.into();
        Self {
            http: Arc::new(http),
            ..self.clone()
        }
    }

    async fn call(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let settings = &self.http.settings;
        let body = self.body(request);
        let body = serde_json::to_vec(&body).map_err(|e| ModelError::Other(e.to_string()))?;
        let mut headers = reqwest::header::HeaderMap::new();
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
        let url = self.http.url("chat/completions");
        let bytes = self.http.post(url, headers, body).await?;
        parse_response(&bytes, &self.call_ids)
    }

    /// The request body: model, messages, tools, options, the response format, then the
    /// provider extras (which win).
    fn body(&self, request: &ChatRequest) -> Map<String, Value> {
        let options = self.http.settings.options_for(request);
        let mut body = Map::new();
        body.insert("model".into(), self.http.settings.model.clone().into());
        let messages = request.messages.iter().map(wire_message).collect();
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
        body.extend(options.extra);
        body
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
}

impl OpenAiBuilder {
    settings_methods!();

    /// Whether requests with an output schema ask for native structured output (default
    /// [`StructuredOutput::Auto`]).
    pub fn structured_output(mut self, mode: StructuredOutput) -> Self {
        self.structured_output = mode;
        self
    }

    /// Asks a reasoning model (o-series, GPT-5) for this effort; the token limit is then
    /// sent as `max_completion_tokens`, which those models require.
    pub fn reasoning_effort(mut self, effort: ReasoningEffort) -> Self {
        self.reasoning_effort = Some(effort);
        self
    }

    /// The organization requests are billed to (`OpenAI-Organization`).
    pub fn organization(mut self, id: impl Into<String>) -> Self {
        self.organization = Some(id.into());
        self
    }

    /// The project requests belong to (`OpenAI-Project`).
    pub fn project(mut self, id: impl Into<String>) -> Self {
        self.project = Some(id.into());
        self
    }

    /// The model.
    pub fn build(mut self) -> Result<OpenAiModel, ConfigError> {
        let account = [
            ("OpenAI-Organization", "organization", &self.organization),
            ("OpenAI-Project", "project", &self.project),
        ];
        for (name, setting, value) in account {
            if let Some(value) = value {
                let value = header_value(setting, value)?;
                self.settings.headers.insert(name, value);
            }
        }
        Ok(OpenAiModel {
            http: Arc::new(Http::new(self.settings)?),
            structured_output: self.structured_output,
            reasoning_effort: self.reasoning_effort,
            key_header: self.key_header,
            call_ids: Arc::new(AtomicU64::new(0)),
        })
    }
}

impl ChatModel for OpenAiModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(crate::trace::traced(
            PROVIDER,
            &self.http.settings,
            request,
            self.call(request),
        ))
    }
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

/// A message on the wire. Argument text goes back exactly as the model wrote it.
fn wire_message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User if message.images.is_empty() => {
            json!({"role": "user", "content": message.content})
        }
        Role::User => {
            let text = json!({"type": "text", "text": message.content});
            let images = message.images.iter().map(|image| {
                let url = match image {
                    Image::Url(url) => url.clone(),
                    Image::Base64 { media_type, data } => {
                        format!("data:{media_type};base64,{data}")
                    }
                };
                json!({"type": "image_url", "image_url": {"url": url}})
            });
            let parts: Vec<Value> = std::iter::once(text).chain(images).collect();
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
    Ok(ChatResponse {
        message: Message {
            tool_calls,
            ..Message::assistant(content)
        },
        usage,
        finish_reason: choice.finish_reason.filter(|r| !r.is_empty()),
        model: completion.model,
        id: completion.id,
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
    Usage {
        input_tokens: count(usage.get("prompt_tokens")),
        output_tokens: count(usage.get("completion_tokens")),
        cached_tokens: count(usage.pointer("/prompt_tokens_details/cached_tokens")),
        // OpenAI caches without a write charge, so it reports no writes.
        cache_write_tokens: 0,
        reasoning_tokens: count(usage.pointer("/completion_tokens_details/reasoning_tokens")),
    }
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
