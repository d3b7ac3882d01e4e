//! `provider:model` specs, for command-line flags such as the examples' `--model`.

use crate::fallback::Fallback;
use crate::http::{ConfigError, process_env, var};
use crate::model::{HttpModel, Provider};
use crate::retry::{RetryPolicy, Retrying};
use agent_contracts_runtime::ChatModel;
use std::sync::Arc;
use std::time::Duration;

/// The model named by `spec`, configured from the environment as
/// [`HttpModel::builder_from_env`] says: `openai:<model>`, `azure:<deployment>` (the endpoint,
/// key and API version from `AZURE_OPENAI_ENDPOINT`, `AZURE_OPENAI_API_KEY` and
/// `OPENAI_API_VERSION`) or `anthropic:<model>`, retried with the default
/// [`RetryPolicy`](crate::RetryPolicy); or a comma-separated list of them
/// (`openai:gpt-4o,anthropic:claude-sonnet-4-5`), a [`Fallback`] that moves to the next when
/// one fails after its retries.
///
/// ```
/// let error = agent_contracts_llm::from_spec("gpt-4o").err();
/// assert_eq!(error, Some(agent_contracts_llm::ConfigError::BadSpec("gpt-4o".into())));
/// ```
///
/// The request timeout of each attempt is [`REQUEST_TIMEOUT_ENV`] (seconds) when set.
pub fn from_spec(spec: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    from_spec_with(spec, process_env)
}

/// The variable the CLIs read the request timeout from, in seconds (default 600).
pub const REQUEST_TIMEOUT_ENV: &str = "AGENT_CONTRACT_REQUEST_TIMEOUT";

/// [`from_spec`] reading the environment from `env`.
///
/// ```
/// let env = |name: &str| match name {
///     "OPENAI_API_KEY" => Some("sk-test".to_owned()),
///     "AGENT_CONTRACT_REQUEST_TIMEOUT" => Some("soon".to_owned()),
///     _ => None,
/// };
/// let error = agent_contracts_llm::from_spec_with("openai:gpt-4o", env).err().map(|e| e.to_string());
/// assert_eq!(
///     error.as_deref(),
///     Some("the setting `AGENT_CONTRACT_REQUEST_TIMEOUT` is invalid: `soon` is not a number of seconds above 0")
/// );
/// ```
pub fn from_spec_with(
    spec: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>, ConfigError> {
    let timeout = timeout(&env)?;
    let mut parts = spec.split(',').map(str::trim);
    let first = parts.next().unwrap_or_default();
    let mut fallback = match parts.clone().next() {
        None => return one(first, &env, timeout),
        Some(_) => Fallback::new(first, one(first, &env, timeout)?),
    };
    for part in parts {
        fallback = fallback.or(part, one(part, &env, timeout)?);
    }
    Ok(Arc::new(fallback))
}

/// The request timeout the environment sets, if any.
fn timeout(env: &impl Fn(&str) -> Option<String>) -> Result<Option<Duration>, ConfigError> {
    let Some(text) = var(env, REQUEST_TIMEOUT_ENV) else {
        return Ok(None);
    };
    let seconds = text.trim().parse::<f64>().ok().filter(|s| *s > 0.0);
    match seconds.and_then(|s| Duration::try_from_secs_f64(s).ok()) {
        Some(timeout) => Ok(Some(timeout)),
        None => Err(ConfigError::Invalid {
            setting: REQUEST_TIMEOUT_ENV,
            reason: format!("`{}` is not a number of seconds above 0", text.trim()),
        }),
    }
}

/// One `provider:model`, retried with the default policy.
fn one(
    spec: &str,
    env: &impl Fn(&str) -> Option<String>,
    timeout: Option<Duration>,
) -> Result<Arc<dyn ChatModel>, ConfigError> {
    let (provider, model) = spec
        .split_once(':')
        .filter(|(_, model)| !model.is_empty())
        .ok_or_else(|| ConfigError::BadSpec(spec.to_owned()))?;
    let provider = match provider {
        "openai" => Provider::OpenAi,
        "azure" => Provider::Azure,
        "anthropic" => Provider::Anthropic,
        _ => return Err(ConfigError::BadSpec(spec.to_owned())),
    };
    let mut builder = HttpModel::builder_from_env_with(provider, model, env)?;
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    Ok(Arc::new(Retrying::new(
        builder.build()?,
        RetryPolicy::default(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_needs_a_known_provider_and_a_model() {
        for spec in ["gpt-4o", "openai:", "mistral:large", ":m", ""] {
            assert_eq!(
                from_spec(spec).err(),
                Some(ConfigError::BadSpec(spec.into())),
                "{spec}"
            );
        }
        // A list names its bad part.
        let list = from_spec("mistral:large,openai:a").err();
        assert_eq!(list, Some(ConfigError::BadSpec("mistral:large".into())));
    }
}
