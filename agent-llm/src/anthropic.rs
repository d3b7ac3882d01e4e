//! The Anthropic Messages API.
//!
//! The system prompt goes in the top-level `system`; tool results go back as `tool_result`
//! blocks, consecutive ones in one user message, with `is_error: true` for a retry error.
//! `tool_use.input` is carried as raw JSON both ways, so its number text and key order reach
//! the contract path and the next request as the model wrote them. `thinking` and
//! `redacted_thinking` blocks are kept on the message ([`Message::thinking`]) and sent back
//! unchanged, before the turn's text and tool calls, as the API requires of a thinking model
//! that calls tools.

use crate::http::{
    ConfigError, Http, Settings, header_value, malformed, process_env, settings_methods, var,
};
use crate::strict::{StructuredOutput, output_schema, tool_is_strict};
use agent_core::BoxFuture;
use agent_core::ToolDefinition;
use agent_core::{
    ChatModel, ChatRequest, ChatResponse, Image, Message, ModelError, ModelOptions, Role, Thinking,
    ToolCallRequest, ToolChoice, Usage,
};
use agent_schema::strict::Dialect;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The provider's name in traces.
const PROVIDER: &str = "anthropic";
/// The base URL when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is sent when no option sets it.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A chat model behind the Anthropic Messages API.
///
/// ```no_run
/// use agent_llm::AnthropicModel;
/// # fn main() -> Result<(), agent_llm::ConfigError> {
/// // ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, like the official SDKs:
/// let model = AnthropicModel::from_env("claude-sonnet-4-5")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    http: Arc<Http>,
    thinking: Option<u32>,
    structured_output: StructuredOutput,
    caching: PromptCaching,
}

/// Builds an [`AnthropicModel`].
#[derive(Debug, Clone)]
#[must_use]
pub struct AnthropicBuilder {
    settings: Settings,
    thinking: Option<u32>,
    betas: Vec<String>,
    structured_output: StructuredOutput,
    caching: PromptCaching,
}

/// Prompt caching: `cache_control` breakpoints after the tools and after the system prompt,
/// the prefix every call of an agent repeats, so later calls read it from the cache (billed
/// at a tenth of the input price) after one write (billed above it).
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

impl AnthropicModel {
    /// A builder for `model` at [`DEFAULT_BASE_URL`], without a key.
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            settings: Settings::new(model.into(), DEFAULT_BASE_URL),
            thinking: None,
            betas: Vec::new(),
            structured_output: StructuredOutput::Auto,
            caching: PromptCaching::Off,
        }
    }

    /// A builder for `model` from the environment, like the official SDK:
    /// `ANTHROPIC_API_KEY` (sent as `x-api-key`) or `ANTHROPIC_AUTH_TOKEN` (sent as
    /// `Authorization: Bearer`, for gateways), one of them required, and
    /// `ANTHROPIC_BASE_URL`.
    pub fn builder_from_env(model: impl Into<String>) -> Result<AnthropicBuilder, ConfigError> {
        Self::builder_from_env_with(model, process_env)
    }

    /// [`builder_from_env`](Self::builder_from_env) reading the variables from `env`.
    ///
    /// ```
    /// let env = |name: &str| (name == "ANTHROPIC_AUTH_TOKEN").then(|| "gateway-token".to_owned());
    /// assert!(agent_llm::AnthropicModel::builder_from_env_with("claude-sonnet-4-5", env).is_ok());
    /// ```
    pub fn builder_from_env_with(
        model: impl Into<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AnthropicBuilder, ConfigError> {
        let mut builder = Self::builder(model);
        let key = var(&env, "ANTHROPIC_API_KEY");
        let token = var(&env, "ANTHROPIC_AUTH_TOKEN");
        if key.is_none() && token.is_none() {
            return Err(ConfigError::MissingEnv("ANTHROPIC_API_KEY"));
        }
        builder.settings.api_key = key.map(Into::into);
        builder.settings.auth_token = token.map(Into::into);
        if let Some(url) = var(&env, "ANTHROPIC_BASE_URL") {
            builder = builder.base_url(url);
        }
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
        let body = Body {
            head: self.head(request),
            messages: turns(&request.messages),
        };
        let body = serde_json::to_vec(&body).map_err(|e| ModelError::Other(e.to_string()))?;
        let mut headers = reqwest::header::HeaderMap::new();
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
        let bytes = self
            .http
            .post(self.http.url("v1/messages"), headers, body)
            .await?;
        parse_response(&bytes)
    }

    /// Everything but the messages: model, system, tools, options, then the extras.
    fn head(&self, request: &ChatRequest) -> Map<String, Value> {
        let options = self.http.settings.options_for(request);
        let mut head = Map::new();
        head.insert("model".into(), self.http.settings.model.clone().into());
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
}

impl AnthropicModel {
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

impl AnthropicBuilder {
    settings_methods!();

    /// Whether requests ask for native structured output (`output_config.format` from the
    /// output contract's strict form) and mark strict tools (default
    /// [`StructuredOutput::Auto`]). Models before the Claude 4.5 family and gateways
    /// without the feature refuse both: [`StructuredOutput::Off`] leaves them out.
    pub fn structured_output(mut self, mode: StructuredOutput) -> Self {
        self.structured_output = mode;
        self
    }

    /// Extended thinking with a budget of `budget_tokens` (at least 1024): the request
    /// carries `thinking: {"type": "enabled", "budget_tokens": ...}`, and `max_tokens`, when
    /// no option sets it, grows by the budget. The thinking blocks come back on each message
    /// and are replayed unchanged.
    pub fn thinking(mut self, budget_tokens: u32) -> Self {
        self.thinking = Some(budget_tokens);
        self
    }

    /// A bearer token sent as `Authorization: Bearer` (a gateway's), with or in place of
    /// the key; kept out of `Debug`, logs and errors like the key.
    pub fn auth_token(mut self, token: impl Into<crate::ApiKey>) -> Self {
        self.settings.auth_token = Some(token.into());
        self
    }

    /// `cache_control` breakpoints on the tools and the system prompt (default
    /// [`PromptCaching::Off`]); cache reads and writes are counted in each call's `Usage`.
    pub fn prompt_caching(mut self, caching: PromptCaching) -> Self {
        self.caching = caching;
        self
    }

    /// Turns on a beta feature (`anthropic-beta`, e.g. `interleaved-thinking-2025-05-14`);
    /// betas add up, sent comma-separated.
    pub fn beta(mut self, name: impl Into<String>) -> Self {
        self.betas.push(name.into());
        self
    }

    /// The model.
    pub fn build(mut self) -> Result<AnthropicModel, ConfigError> {
        if !self.betas.is_empty() {
            let value = header_value("beta", &self.betas.join(","))?;
            self.settings.headers.insert("anthropic-beta", value);
        }
        if let Some(budget) = self.thinking.filter(|b| *b < MIN_THINKING_BUDGET) {
            return Err(ConfigError::Invalid {
                setting: "thinking",
                reason: format!(
                    "a budget of {budget} tokens is below the API's minimum of {MIN_THINKING_BUDGET}"
                ),
            });
        }
        Ok(AnthropicModel {
            http: Arc::new(Http::new(self.settings)?),
            thinking: self.thinking,
            structured_output: self.structured_output,
            caching: self.caching,
        })
    }
}

impl ChatModel for AnthropicModel {
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
        content: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
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

/// The text, then the images.
fn user_blocks(message: &Message) -> Vec<Block> {
    let images = message.images.iter().map(|image| Block::Image {
        source: match image {
            Image::Url(url) => json!({"type": "url", "url": url}),
            Image::Base64 { media_type, data } => {
                json!({"type": "base64", "media_type": media_type, "data": data})
            }
        },
    });
    text_block(&message.content)
        .into_iter()
        .chain(images)
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

/// A tool message as a `tool_result`; a retry error (JSON with `"success": false`) is marked
/// `is_error`.
fn tool_result(message: &Message) -> Block {
    let is_error = serde_json::from_str::<Value>(&message.content)
        .ok()
        .and_then(|v| v.get("success").and_then(Value::as_bool))
        == Some(false);
    Block::ToolResult {
        tool_use_id: message.tool_call_id.clone().unwrap_or_default(),
        content: message.content.clone(),
        is_error,
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

fn parse_response(bytes: &[u8]) -> Result<ChatResponse, ModelError> {
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
    Ok(ChatResponse {
        message: Message {
            thinking,
            tool_calls,
            ..Message::assistant(text)
        },
        usage,
        finish_reason: reply.stop_reason.filter(|r| !r.is_empty()),
        model: reply.model,
        id: reply.id,
    })
}

/// Anthropic counts cache reads and writes apart from `input_tokens`; the input total adds
/// them back.
fn usage(usage: &Value) -> Usage {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("cache_read_input_tokens");
    let written = count("cache_creation_input_tokens");
    Usage {
        input_tokens: count("input_tokens") + cached + written,
        output_tokens: count("output_tokens"),
        cached_tokens: cached,
        cache_write_tokens: written,
        // Anthropic counts thinking inside `output_tokens` without a separate figure.
        reasoning_tokens: 0,
    }
}

/// A tool definition in Anthropic's format: `{"name", "description", "input_schema"}`.
pub fn tool_json(tool: &ToolDefinition) -> Value {
    serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters,
    })
}
