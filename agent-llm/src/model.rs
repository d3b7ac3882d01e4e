//! One HTTP model for every provider: the client, the settings and the builder are shared;
//! what differs is the wire format (OpenAI's Chat Completions, Anthropic's Messages), a value
//! the model holds.

use crate::anthropic::{self, PromptCaching};
use crate::http::{ConfigError, Http, Settings, header_value, process_env, read_body, var};
use crate::model_error::stopped;
use crate::openai::{self, ReasoningEffort};
use crate::sse::EventReader;
use crate::strict::StructuredOutput;
use agent_contracts_runtime::{
    ChatModel, model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
    model::StreamSink,
};
use std::sync::Arc;
use std::time::Duration;

/// The API a model speaks, and how its account is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provider {
    /// The OpenAI Chat Completions API, at OpenAI or any server that speaks it (vLLM,
    /// Ollama `/v1`, llama.cpp server, LM Studio, Groq, OpenRouter).
    OpenAi,
    /// Azure OpenAI: the Chat Completions API at a resource's endpoint, the model named by
    /// its deployment (`/openai/deployments/{deployment}/chat/completions`), an
    /// `api-version` query, the key in the `api-key` header.
    Azure,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    /// The provider's name, as in model specs and traces.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Azure => "azure",
            Self::Anthropic => "anthropic",
        }
    }

    /// Whether this build has the provider's wire format (the `openai` and `anthropic`
    /// features).
    fn compiled_in(self) -> bool {
        match self {
            Self::OpenAi | Self::Azure => cfg!(feature = "openai"),
            Self::Anthropic => cfg!(feature = "anthropic"),
        }
    }
}

/// A chat model behind a provider's HTTP API: OpenAI's Chat Completions (OpenAI, Azure and
/// every compatible server) or Anthropic's Messages. It makes one attempt per call: wrap it
/// in [`Retrying`](crate::Retrying) for retries and [`Traced`](crate::Traced) for traces.
///
/// ```no_run
/// use agent_contracts_llm::{HttpModel, Provider};
/// # fn main() -> Result<(), agent_contracts_llm::ConfigError> {
/// // OPENAI_API_KEY and OPENAI_BASE_URL, like the official SDKs:
/// let model = HttpModel::from_env(Provider::OpenAi, "gpt-4o-mini")?;
/// // A local server:
/// let local = HttpModel::builder(Provider::OpenAi, "llama3.2")
///     .base_url("http://127.0.0.1:11434/v1")
///     .build()?;
/// // Anthropic, thinking:
/// let claude = HttpModel::builder(Provider::Anthropic, "claude-sonnet-4-5")
///     .api_key("sk-ant-...")
///     .thinking(2048)
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HttpModel {
    http: Arc<Http>,
    wire: Arc<Wire>,
    /// `gen_ai.provider.name` by the OpenTelemetry GenAI conventions.
    provider: &'static str,
}

/// The wire format, with its own settings.
#[derive(Debug)]
enum Wire {
    OpenAi(openai::Wire),
    Anthropic(anthropic::Wire),
}

/// Builds an [`HttpModel`]. Settings that belong to one provider (`thinking`,
/// `reasoning_effort`, `organization`, ...) are refused by `build` for the others.
#[derive(Debug, Clone)]
#[must_use]
pub struct HttpModelBuilder {
    provider: Provider,
    settings: Settings,
    structured_output: StructuredOutput,
    reasoning_effort: Option<ReasoningEffort>,
    organization: Option<String>,
    project: Option<String>,
    api_version: Option<String>,
    thinking: Option<u32>,
    betas: Vec<String>,
    caching: PromptCaching,
    /// The first header [`header`](Self::header) refused, reported by `build`.
    bad_header: Option<ConfigError>,
}

impl HttpModel {
    /// A builder for `model` of `provider` at its default base URL (Azure has none: set the
    /// resource's endpoint with `base_url`), without a key.
    pub fn builder(provider: Provider, model: impl Into<String>) -> HttpModelBuilder {
        let base_url = match provider {
            Provider::OpenAi => openai::DEFAULT_BASE_URL,
            Provider::Azure => "",
            Provider::Anthropic => anthropic::DEFAULT_BASE_URL,
        };
        HttpModelBuilder {
            provider,
            settings: Settings::new(model.into(), base_url),
            structured_output: StructuredOutput::Auto,
            reasoning_effort: None,
            organization: None,
            project: None,
            api_version: None,
            thinking: None,
            betas: Vec::new(),
            caching: PromptCaching::Off,
            bad_header: None,
        }
    }

    /// A builder for an Azure OpenAI deployment: `endpoint` is the resource
    /// (`https://{resource}.openai.azure.com`).
    ///
    /// ```
    /// let model = agent_contracts_llm::HttpModel::azure("https://acme.openai.azure.com", "gpt-4o", "2024-10-21")
    ///     .api_key("azure-key")
    ///     .build();
    /// assert!(model.is_ok());
    /// ```
    pub fn azure(endpoint: &str, deployment: &str, api_version: &str) -> HttpModelBuilder {
        Self::builder(Provider::Azure, deployment)
            .base_url(endpoint)
            .api_version(api_version)
    }

    /// A builder for `model` of `provider` from the environment, like the official SDKs:
    ///
    /// - OpenAI: `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_ORG_ID` (sent as
    ///   `OpenAI-Organization`) and `OPENAI_PROJECT_ID` (`OpenAI-Project`). The key may be
    ///   missing only when the base URL is not OpenAI's (local servers need none).
    /// - Azure (`model` is the deployment): `AZURE_OPENAI_ENDPOINT`, `AZURE_OPENAI_API_KEY`
    ///   (or `AZURE_OPENAI_AD_TOKEN`, an Entra ID token sent as `Authorization: Bearer`) and
    ///   `OPENAI_API_VERSION`, all required.
    /// - Anthropic: `ANTHROPIC_API_KEY` (sent as `x-api-key`) or `ANTHROPIC_AUTH_TOKEN`
    ///   (`Authorization: Bearer`, for gateways), one of them required, and
    ///   `ANTHROPIC_BASE_URL`.
    pub fn builder_from_env(
        provider: Provider,
        model: impl Into<String>,
    ) -> Result<HttpModelBuilder, ConfigError> {
        Self::builder_from_env_with(provider, model, process_env)
    }

    /// [`builder_from_env`](Self::builder_from_env) reading the variables from `env`.
    ///
    /// ```
    /// use agent_contracts_llm::{HttpModel, Provider};
    /// let env = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:8000/v1".to_owned());
    /// assert!(HttpModel::builder_from_env_with(Provider::OpenAi, "llama3.2", env).is_ok());
    /// let error = HttpModel::builder_from_env_with(Provider::Azure, "gpt-4o", env).err();
    /// assert_eq!(error, Some(agent_contracts_llm::ConfigError::MissingEnv("AZURE_OPENAI_ENDPOINT")));
    /// ```
    pub fn builder_from_env_with(
        provider: Provider,
        model: impl Into<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<HttpModelBuilder, ConfigError> {
        let mut builder = Self::builder(provider, model);
        let required = |name: &'static str| var(&env, name).ok_or(ConfigError::MissingEnv(name));
        match provider {
            Provider::OpenAi => {
                if let Some(url) = var(&env, "OPENAI_BASE_URL") {
                    builder = builder.base_url(url);
                }
                match var(&env, "OPENAI_API_KEY") {
                    Some(key) => builder = builder.api_key(key),
                    None if builder.settings.base_url == openai::DEFAULT_BASE_URL => {
                        return Err(ConfigError::MissingEnv("OPENAI_API_KEY"));
                    }
                    None => {}
                }
                builder.organization = var(&env, "OPENAI_ORG_ID");
                builder.project = var(&env, "OPENAI_PROJECT_ID");
            }
            Provider::Azure => {
                builder = builder.base_url(required("AZURE_OPENAI_ENDPOINT")?);
                match var(&env, "AZURE_OPENAI_AD_TOKEN") {
                    Some(token) => builder.settings.auth_token = Some(token.into()),
                    None => builder = builder.api_key(required("AZURE_OPENAI_API_KEY")?),
                }
                builder = builder.api_version(required("OPENAI_API_VERSION")?);
            }
            Provider::Anthropic => {
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
            }
        }
        Ok(builder)
    }

    /// The model `model` of `provider`, configured from the environment.
    pub fn from_env(provider: Provider, model: impl Into<String>) -> Result<Self, ConfigError> {
        Self::builder_from_env(provider, model)?.build()
    }

    /// The same client (connections, key, settings) for another model (for Azure, another
    /// deployment).
    pub fn with_model(&self, model: impl Into<String>) -> Self {
        let mut http = (*self.http).clone();
        http.settings.model = model.into();
        Self {
            http: Arc::new(http),
            wire: self.wire.clone(),
            provider: self.provider,
        }
    }

    /// The endpoint, headers and body of `request`.
    fn prepare(
        &self,
        request: &ChatRequest,
        stream: bool,
    ) -> Result<(reqwest::Url, reqwest::header::HeaderMap, Vec<u8>), ModelError> {
        let settings = &self.http.settings;
        Ok(match &*self.wire {
            Wire::OpenAi(wire) => (
                wire.url(&self.http),
                wire.headers(settings)?,
                wire.body(settings, request, stream)?,
            ),
            Wire::Anthropic(wire) => (
                anthropic::url(&self.http),
                anthropic::headers(settings)?,
                wire.body(settings, request, stream)?,
            ),
        })
    }

    /// A whole (not streamed) response body, parsed.
    fn parse(&self, bytes: &[u8]) -> Result<ChatResponse, ModelError> {
        match &*self.wire {
            Wire::OpenAi(wire) => wire.parse(bytes),
            Wire::Anthropic(_) => anthropic::parse_response(bytes),
        }
    }

    async fn call(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let (url, headers, body) = self.prepare(request, false)?;
        let bytes = self.http.post(url, headers, body).await?;
        self.parse(&bytes)
    }

    async fn call_streaming(
        &self,
        request: &ChatRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ChatResponse, ModelError> {
        let (url, headers, body) = self.prepare(request, true)?;
        let shown = self.http.shown(&url);
        let response = self.http.send(url, headers, body).await?;
        // A compatible server that does not stream answers JSON: one delta.
        if is_json(&response) {
            let bytes = read_body(response, &shown).await?;
            return deliver_whole(self.parse(&bytes)?, sink);
        }
        let mut events = EventReader::new(response, shown);
        match &*self.wire {
            Wire::OpenAi(wire) => wire.read_stream(&mut events, sink).await,
            Wire::Anthropic(_) => anthropic::read_stream(&mut events, sink).await,
        }
    }
}

/// Whether the response is JSON rather than an event stream.
fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// `response` handed to `sink` as one delta.
fn deliver_whole(
    response: ChatResponse,
    sink: &mut dyn StreamSink,
) -> Result<ChatResponse, ModelError> {
    let text = response.message.content.as_str();
    if !text.is_empty()
        && sink
            .delta(agent_contracts_runtime::model::StreamDelta::Text(text))
            .is_break()
    {
        return Err(stopped(response));
    }
    Ok(response)
}

impl HttpModel {
    /// Names this model and its server on the current span (the call's `chat` span).
    fn record_on_span(&self) {
        let base = &self.http.base;
        let server = base
            .host_str()
            .map(|host| (host, base.port_or_known_default().unwrap_or(0)));
        agent_contracts_runtime::telemetry::record_model(
            self.provider,
            Some(&self.http.settings.model),
            server,
        );
    }
}

impl ChatModel for HttpModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.record_on_span();
        Box::pin(self.call(request))
    }

    /// Streams with server-sent events (`stream: true`): the text as it arrives, tool calls
    /// reassembled, the usage of the last event; stopping drops the connection.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.record_on_span();
        Box::pin(self.call_streaming(request, sink))
    }
}

impl HttpModelBuilder {
    /// The API key (default: from the environment, with `builder_from_env`).
    pub fn api_key(mut self, key: impl Into<crate::ApiKey>) -> Self {
        self.settings.api_key = Some(key.into());
        self
    }

    /// A bearer token sent as `Authorization: Bearer` (an Anthropic gateway's, an Azure
    /// Entra ID token), with or in place of the key; kept out of `Debug`, logs and errors
    /// like the key. Anthropic and Azure only.
    pub fn auth_token(mut self, token: impl Into<crate::ApiKey>) -> Self {
        self.settings.auth_token = Some(token.into());
        self
    }

    /// The base URL of the API (for Azure, the resource's endpoint). Parsed as a URL: its
    /// query stays on every request.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.settings.base_url = url.into();
        self
    }

    /// A header sent with every request (a gateway's, a tenant's); its value never shows in
    /// `Debug` output or errors. The provider's own headers (key, version) win over it. A name
    /// or value HTTP does not allow makes `build` fail with [`ConfigError::Invalid`].
    ///
    /// ```
    /// use agent_contracts_llm::{ConfigError, HttpModel, Provider};
    /// let built = HttpModel::builder(Provider::OpenAi, "gpt-4o")
    ///     .api_key("sk-test")
    ///     .header("x-gateway-tenant", "crawlers")
    ///     .build();
    /// assert!(built.is_ok());
    /// let refused = HttpModel::builder(Provider::OpenAi, "gpt-4o")
    ///     .api_key("sk-test")
    ///     .header("x-tenant", "line\nbreak")
    ///     .build();
    /// assert!(matches!(refused, Err(ConfigError::Invalid { setting: "header", .. })));
    /// ```
    pub fn header(mut self, name: &str, value: &str) -> Self {
        use reqwest::header::{HeaderName, HeaderValue};
        let shown: String = name.chars().take(64).collect();
        let parsed = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`{shown}` is not a header name"))
            .and_then(|name| match HeaderValue::from_str(value) {
                Ok(value) => Ok((name, value)),
                // The value may be a secret: the error names the header only.
                Err(_) => Err(format!("the value of `{shown}` is not a header value")),
            });
        match parsed {
            Ok((name, mut value)) => {
                value.set_sensitive(true);
                self.settings.headers.append(name, value);
            }
            Err(reason) => {
                self.bad_header.get_or_insert(ConfigError::Invalid {
                    setting: "header",
                    reason,
                });
            }
        }
        self
    }

    /// The longest one attempt may take, a streamed answer included (default 10 minutes;
    /// the CLIs read [`REQUEST_TIMEOUT_ENV`](crate::REQUEST_TIMEOUT_ENV)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// The longest a connection may take to open (default 10 seconds).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.settings.connect_timeout = timeout;
        self
    }

    /// Options for every request; a request's own options win field by field.
    pub fn options(mut self, options: agent_contracts_runtime::model::ModelOptions) -> Self {
        self.settings.options = options;
        self
    }

    /// Whether requests with an output schema ask for native structured output, and strict
    /// tools are marked (default [`StructuredOutput::Auto`]). Claude models before the 4.5
    /// family, and servers without the feature, refuse them: [`StructuredOutput::Off`].
    pub fn structured_output(mut self, mode: StructuredOutput) -> Self {
        self.structured_output = mode;
        self
    }

    /// Asks a reasoning model (o-series, GPT-5) for this effort; the token limit is then
    /// sent as `max_completion_tokens`, which those models require. OpenAI and Azure only.
    pub fn reasoning_effort(mut self, effort: ReasoningEffort) -> Self {
        self.reasoning_effort = Some(effort);
        self
    }

    /// The organization requests are billed to (`OpenAI-Organization`). OpenAI only.
    pub fn organization(mut self, id: impl Into<String>) -> Self {
        self.organization = Some(id.into());
        self
    }

    /// The project requests belong to (`OpenAI-Project`). OpenAI only.
    pub fn project(mut self, id: impl Into<String>) -> Self {
        self.project = Some(id.into());
        self
    }

    /// The `api-version` query every request carries. Azure only, and required there.
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = Some(version.into());
        self
    }

    /// Extended thinking with a budget of `budget_tokens` (at least 1024): the request
    /// carries `thinking: {"type": "enabled", "budget_tokens": ...}`, and `max_tokens`, when
    /// no option sets it, grows by the budget. The thinking blocks come back on each message
    /// and are replayed unchanged. Anthropic only.
    pub fn thinking(mut self, budget_tokens: u32) -> Self {
        self.thinking = Some(budget_tokens);
        self
    }

    /// `cache_control` breakpoints on the tools and the system prompt (default
    /// [`PromptCaching::Off`]); cache reads and writes are counted in each call's `Usage`.
    /// Anthropic only.
    pub fn prompt_caching(mut self, caching: PromptCaching) -> Self {
        self.caching = caching;
        self
    }

    /// Turns on a beta feature (`anthropic-beta`, e.g. `interleaved-thinking-2025-05-14`);
    /// betas add up, sent comma-separated. Anthropic only.
    pub fn beta(mut self, name: impl Into<String>) -> Self {
        self.betas.push(name.into());
        self
    }

    /// The model.
    ///
    /// ```
    /// use agent_contracts_llm::{ConfigError, HttpModel, Provider};
    /// let error = HttpModel::builder(Provider::OpenAi, "gpt-4o").thinking(2048).build().err();
    /// let expected = "the setting `thinking` is invalid: the openai provider does not take it";
    /// assert_eq!(error.map(|e| e.to_string()).as_deref(), Some(expected));
    /// ```
    pub fn build(mut self) -> Result<HttpModel, ConfigError> {
        let provider = self.provider;
        if !provider.compiled_in() {
            let feature = if provider == Provider::Anthropic {
                "anthropic"
            } else {
                "openai"
            };
            return Err(ConfigError::Disabled(feature.into()));
        }
        if let Some(error) = self.bad_header.take() {
            return Err(error);
        }
        self.check_provider_settings()?;
        let wire = match provider {
            Provider::OpenAi | Provider::Azure => self.openai_wire()?,
            Provider::Anthropic => self.anthropic_wire()?,
        };
        Ok(HttpModel {
            http: Arc::new(Http::new(self.settings)?),
            wire: Arc::new(wire),
            provider: match provider {
                Provider::OpenAi => "openai",
                Provider::Azure => "azure.ai.openai",
                Provider::Anthropic => "anthropic",
            },
        })
    }

    /// Refuses a setting the provider does not take: it would be silently ignored.
    fn check_provider_settings(&self) -> Result<(), ConfigError> {
        use Provider::{Anthropic, Azure, OpenAi};
        let set: [(&'static str, bool, &[Provider]); 8] = [
            (
                "reasoning_effort",
                self.reasoning_effort.is_some(),
                &[OpenAi, Azure],
            ),
            ("organization", self.organization.is_some(), &[OpenAi]),
            ("project", self.project.is_some(), &[OpenAi]),
            ("api_version", self.api_version.is_some(), &[Azure]),
            (
                "auth_token",
                self.settings.auth_token.is_some(),
                &[Anthropic, Azure],
            ),
            ("thinking", self.thinking.is_some(), &[Anthropic]),
            (
                "prompt_caching",
                self.caching != PromptCaching::Off,
                &[Anthropic],
            ),
            ("beta", !self.betas.is_empty(), &[Anthropic]),
        ];
        match set
            .into_iter()
            .find(|(_, is_set, takers)| *is_set && !takers.contains(&self.provider))
        {
            Some((setting, ..)) => Err(ConfigError::Invalid {
                setting,
                reason: format!("the {} provider does not take it", self.provider.name()),
            }),
            None => Ok(()),
        }
    }

    fn openai_wire(&mut self) -> Result<Wire, ConfigError> {
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
        let azure = self.provider == Provider::Azure;
        if azure {
            self.settings.base_url = azure_base(&self.settings.base_url, &self.api_version)?;
        }
        Ok(Wire::OpenAi(openai::Wire::new(
            self.structured_output,
            self.reasoning_effort,
            azure,
        )))
    }

    fn anthropic_wire(&mut self) -> Result<Wire, ConfigError> {
        if !self.betas.is_empty() {
            let value = header_value("beta", &self.betas.join(","))?;
            self.settings.headers.insert("anthropic-beta", value);
        }
        let wire = anthropic::Wire::new(self.thinking, self.structured_output, self.caching)?;
        Ok(Wire::Anthropic(wire))
    }
}

/// An Azure endpoint with its `api-version` query.
fn azure_base(endpoint: &str, api_version: &Option<String>) -> Result<String, ConfigError> {
    let Some(version) = api_version else {
        return Err(ConfigError::Invalid {
            setting: "api_version",
            reason: "Azure OpenAI needs one (e.g. `2024-10-21`)".into(),
        });
    };
    if endpoint.trim().is_empty() {
        return Err(ConfigError::Invalid {
            setting: "base_url",
            reason:
                "Azure OpenAI needs its resource's endpoint (`https://{resource}.openai.azure.com`)"
                    .into(),
        });
    }
    let mut url = reqwest::Url::parse(endpoint.trim()).map_err(|e| ConfigError::Invalid {
        setting: "base_url",
        reason: e.to_string(),
    })?;
    url.query_pairs_mut().append_pair("api-version", version);
    Ok(url.to_string())
}
