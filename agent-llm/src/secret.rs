//! API keys: kept out of `Debug`, logs and errors.

use std::fmt;

/// An API key. Its `Debug` shows only that a key is set; error bodies that echo it are
/// scrubbed before they reach a [`agent_contracts_runtime::model::ModelError`].
///
/// ```
/// let key = agent_contracts_llm::ApiKey::new("sk-secret");
/// assert_eq!(format!("{key:?}"), "ApiKey(****)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for a request header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_owned();
        }
        text.replace(&self.0, "****")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        Self(key.to_owned())
    }
}
