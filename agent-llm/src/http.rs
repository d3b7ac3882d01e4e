//! What the providers share: their settings, one POST (retries are a layer above, see
//! [`Retrying`](crate::Retrying)), and the mapping of transport failures (naming the URL
//! without its credentials), HTTP statuses and the server's retry headers to [`ModelError`].

use crate::retry::retry_after;
use crate::secret::ApiKey;
use agent_contracts_runtime::{model::ModelError, model::ModelOptions};
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
        "`{0}` is not a model spec: expected `openai:<model>`, `azure:<deployment>` or `anthropic:<model>`, or a comma-separated list of them"
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

/// Settings common to the providers; the builder sets them.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// A bearer token in place of the key (Anthropic's gateways, Azure's Entra ID).
    pub auth_token: Option<ApiKey>,
    /// Sent with every request: account ids, betas, the user's own; values marked
    /// sensitive, so `Debug` never shows them.
    pub headers: HeaderMap,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub options: ModelOptions,
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
        }
    }

    /// The request's options over the model's defaults.
    pub fn options_for(
        &self,
        request: &agent_contracts_runtime::model::ChatRequest,
    ) -> ModelOptions {
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

/// Installs ring as the process's rustls crypto provider unless one is installed: reqwest's
/// rustls (without aws-lc-rs, which this workspace leaves out for its C build) needs one to
/// build any client. Its verifier trusts the platform's roots, or `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` when they are set.
pub(crate) fn install_crypto_provider() {
    #[cfg(feature = "rustls")]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one first: either way one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// An HTTP client bound to one provider's settings.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    /// The base URL, parsed: endpoints join it as path segments, and its query (Azure's
    /// `api-version`) stays on every request.
    pub base: reqwest::Url,
    pub settings: Settings,
}

impl Http {
    pub fn new(settings: Settings) -> Result<Self, ConfigError> {
        let base = base_url(&settings.base_url)?;
        install_crypto_provider();
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

    /// The endpoint under the base URL, its path `segments` appended (each escaped as one
    /// segment), its query kept.
    pub fn url(&self, segments: &[&str]) -> reqwest::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
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
        let shown = self.shown(&url);
        let response = self.send(url, headers, body).await?;
        read_body(response, &shown).await
    }

    /// POSTs `body` to `url` once: the response of a success status, whose body is still to
    /// read (a stream); an error status read and mapped to its [`ModelError`].
    pub async fn send(
        &self,
        url: reqwest::Url,
        headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<reqwest::Response, ModelError> {
        let shown = self.shown(&url);
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
            .map_err(|e| transport_error(e, &shown))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let wait = retry_after(response.headers(), std::time::SystemTime::now());
        let should_retry = should_retry(response.headers());
        let bytes = read_body(response, &shown).await?;
        let text = self.scrub(&String::from_utf8_lossy(&bytes));
        Err(match (status.as_u16(), should_retry) {
            // A 429 the server says not to retry (an exhausted quota) is final, not a wait.
            (429, None | Some(true)) => ModelError::RateLimited {
                retry_after: wait,
                message: Some(crate::model_error::provider_message(&text)),
            },
            (code, should_retry) => {
                crate::model_error::told_status_error(code, &text, wait, should_retry)
            }
        })
    }

    /// `text` with the key and the token replaced.
    pub fn scrub(&self, text: &str) -> String {
        let secrets = [&self.settings.api_key, &self.settings.auth_token];
        secrets
            .into_iter()
            .flatten()
            .fold(text.to_owned(), |text, secret| secret.scrub(&text))
    }

    /// `url` as errors show it: no user name or password, the values of query parameters
    /// that look secret (`key`, `token`, `sig`, ...) masked, the key and token scrubbed.
    pub fn shown(&self, url: &reqwest::Url) -> String {
        self.scrub(&shown_url(url))
    }

    /// An authorization header value, marked sensitive so no log shows it.
    pub fn secret_header(value: &str) -> Result<reqwest::header::HeaderValue, ModelError> {
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| ModelError::Other("the API key is not a valid header value".into()))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// `url` without its credentials: see [`Http::shown`].
pub(crate) fn shown_url(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_fragment(None);
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(name, value)| {
                let value = if looks_secret(&name) {
                    "****".to_owned()
                } else {
                    value.into_owned()
                };
                (name.into_owned(), value)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

/// Whether a query parameter's name says it carries a credential.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const WORDS: [&str; 8] = [
        "key",
        "token",
        "secret",
        "password",
        "sig",
        "auth",
        "credential",
        "code",
    ];
    WORDS.iter().any(|word| name.contains(word))
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
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    shown: &str,
) -> Result<Vec<u8>, ModelError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(e, shown))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ModelError::Malformed(format!(
                "the response body is larger than {MAX_BODY_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A reqwest failure as a model error, naming the URL as [`Http::shown`] shows it (reqwest's
/// own URL is left out: it may carry credentials).
pub(crate) fn transport_error(error: reqwest::Error, shown: &str) -> ModelError {
    let error = error.without_url();
    if error.is_timeout() {
        ModelError::Timeout
    } else if error.is_builder() {
        ModelError::Other(chain(&error))
    } else {
        ModelError::Transport(format!("POST {shown}: {}", chain(&error)))
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
        agent_contracts_runtime::__private::truncate(&text, 200)
    ))
}
