//! What both providers share: their settings, one POST (retries are a layer above, see
//! [`Retrying`](crate::Retrying)), and the mapping of transport failures, HTTP statuses and
//! the server's retry headers to [`ModelError`].

use crate::retry::retry_after;
use crate::secret::ApiKey;
use agent_core::{ModelError, ModelOptions};
use reqwest::header::HeaderMap;
use std::time::Duration;

/// A provider could not be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required environment variable is not set.
    #[error("the environment variable `{0}` is not set")]
    MissingEnv(&'static str),
    /// A model spec that is not `provider:model`.
    #[error(
        "`{0}` is not a model spec: expected `openai:<model>` or `anthropic:<model>`, or a comma-separated list of them"
    )]
    BadSpec(String),
    /// A provider this build does not have.
    #[error("the provider `{0}` is not compiled in: enable the `{0}` feature of agent-llm")]
    Disabled(String),
    /// A setting out of its range.
    #[error("the setting `{setting}` is invalid: {reason}")]
    Invalid {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// Settings common to both providers; each provider's builder sets them.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// A bearer token in place of the key (Anthropic's gateways).
    pub auth_token: Option<ApiKey>,
    /// Sent with every request: account ids, betas, the user's own; values marked
    /// sensitive, so `Debug` never shows them.
    pub headers: HeaderMap,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub options: ModelOptions,
    pub capture_content: bool,
}

impl Settings {
    pub fn new(model: String, base_url: &str) -> Self {
        Self {
            model,
            base_url: base_url.to_owned(),
            api_key: None,
            auth_token: None,
            headers: HeaderMap::new(),
            timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            options: ModelOptions::default(),
            capture_content: false,
        }
    }

    /// The request's options over the model's defaults.
    pub fn options_for(&self, request: &agent_core::ChatRequest) -> ModelOptions {
        request.options.or(&self.options)
    }
}

/// The process environment, for `from_env`.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A variable of `env` that is set and not empty.
pub(crate) fn var(env: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name).filter(|v| !v.trim().is_empty())
}

/// A header value from configuration, marked sensitive; `setting` names it in the error.
pub(crate) fn header_value(
    setting: &'static str,
    value: &str,
) -> Result<reqwest::header::HeaderValue, ConfigError> {
    let mut value =
        reqwest::header::HeaderValue::from_str(value).map_err(|_| ConfigError::Invalid {
            setting,
            reason: "not a valid HTTP header value".into(),
        })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The generated builder methods shared by the providers' builders, whose `settings` field is
/// a [`Settings`].
macro_rules! settings_methods {
    () => {
        /// The API key (default: from the environment, with `from_env`).
        pub fn api_key(mut self, key: impl Into<$crate::ApiKey>) -> Self {
            self.settings.api_key = Some(key.into());
            self
        }
        /// The base URL of the API.
        pub fn base_url(mut self, url: impl Into<String>) -> Self {
            self.settings.base_url = url.into();
            self
        }
        /// A header sent with every request (a gateway's, a tenant's); its value never
        /// shows in `Debug` output. The provider's own headers (key, version) win over it.
        pub fn header(
            mut self,
            name: ::reqwest::header::HeaderName,
            mut value: ::reqwest::header::HeaderValue,
        ) -> Self {
            value.set_sensitive(true);
            self.settings.headers.append(name, value);
            self
        }
        /// The longest one attempt may take (default 10 minutes; the CLIs read
        /// [`REQUEST_TIMEOUT_ENV`](crate::REQUEST_TIMEOUT_ENV)).
        pub fn timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.settings.timeout = timeout;
            self
        }
        /// The longest a connection may take to open (default 10 seconds).
        pub fn connect_timeout(mut self, timeout: ::std::time::Duration) -> Self {
            self.settings.connect_timeout = timeout;
            self
        }
        /// Options for every request; a request's own options win field by field.
        pub fn options(mut self, options: ::agent_core::ModelOptions) -> Self {
            self.settings.options = options;
            self
        }
        /// Records message contents in the tracing events (off by default: prompts may
        /// hold personal data).
        pub fn capture_content(mut self, capture: bool) -> Self {
            self.settings.capture_content = capture;
            self
        }
    };
}
pub(crate) use settings_methods;

/// An HTTP client bound to one provider's settings.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    /// The base URL, parsed: endpoints join it as path segments, and its query (Azure's
    /// `api-version`) stays on every request.
    base: reqwest::Url,
    pub settings: Settings,
}

impl Http {
    pub fn new(settings: Settings) -> Result<Self, ConfigError> {
        let base = base_url(&settings.base_url)?;
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|e| ConfigError::Client(chain(&e)))?;
        Ok(Self {
            client,
            base,
            settings,
        })
    }

    /// The endpoint `path` (segments joined by `/`) under the base URL, its query kept.
    pub fn url(&self, path: &str) -> reqwest::Url {
        let mut url = self.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(path.split('/'));
        }
        url
    }

    /// POSTs `body` to `url` once, with the default headers and then `headers` (which win);
    /// the successful response's body.
    pub async fn post(
        &self,
        url: reqwest::Url,
        headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<Vec<u8>, ModelError> {
        let response = self
            .client
            .post(url)
            .headers(self.settings.headers.clone())
            .headers(headers)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .timeout(self.settings.timeout)
            .body(body)
            .send()
            .await
            .map_err(transport_error)?;
        let status = response.status();
        let wait = retry_after(response.headers(), std::time::SystemTime::now());
        let should_retry = should_retry(response.headers());
        let bytes = read_body(response).await?;
        if status.is_success() {
            return Ok(bytes);
        }
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        let secrets = [&self.settings.api_key, &self.settings.auth_token];
        for secret in secrets.into_iter().flatten() {
            text = secret.scrub(&text);
        }
        Err(match (status.as_u16(), should_retry) {
            // A 429 the server says not to retry (an exhausted quota) is final, not a wait.
            (429, None | Some(true)) => ModelError::RateLimited { retry_after: wait },
            (code, should_retry) => {
                crate::model_error::told_status_error(code, &text, wait, should_retry)
            }
        })
    }

    /// An authorization header value, marked sensitive so no log shows it.
    pub fn secret_header(value: &str) -> Result<reqwest::header::HeaderValue, ModelError> {
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| ModelError::Other("the API key is not a valid header value".into()))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// A base URL parsed; the error names no part of it (it may carry credentials).
fn base_url(text: &str) -> Result<reqwest::Url, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid {
        setting: "base_url",
        reason,
    };
    let url = reqwest::Url::parse(text.trim()).map_err(|e| invalid(e.to_string()))?;
    if url.cannot_be_a_base() || !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("expected an http or https URL".into()));
    }
    Ok(url)
}

/// The server's `x-should-retry: true|false`, which the official SDKs obey over the status.
fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Most bytes of a response body read: a server that sends more is not answering a chat
/// request.
pub(crate) const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The body, read chunk by chunk up to [`MAX_BODY_BYTES`].
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, ModelError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ModelError::Malformed(format!(
                "the response body is larger than {MAX_BODY_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A reqwest failure as a model error; the URL is left out (a base URL may carry
/// credentials).
fn transport_error(error: reqwest::Error) -> ModelError {
    let error = error.without_url();
    if error.is_timeout() {
        ModelError::Timeout
    } else if error.is_builder() {
        ModelError::Other(chain(&error))
    } else {
        ModelError::Transport(chain(&error))
    }
}

/// An error and its sources, one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A 2xx body that is not the provider's response: what the parser expected, and the start of
/// the body.
pub(crate) fn malformed(what: &str, body: &[u8]) -> ModelError {
    let text = String::from_utf8_lossy(body);
    ModelError::Malformed(format!(
        "{what}; body starts: {}",
        agent_core::__private::truncate(&text, 200)
    ))
}
