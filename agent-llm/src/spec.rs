//! `provider:model` specs, for command-line flags such as the examples' `--model`.

use crate::fallback::Fallback;
use crate::http::ConfigError;
#[cfg(any(feature = "openai", feature = "anthropic"))]
use crate::retry::{RetryPolicy, Retrying};
use agent_core::ChatModel;
use std::sync::Arc;

/// The model named by `spec`, configured from the environment: `openai:<model>` or
/// `anthropic:<model>`, retried with the default [`RetryPolicy`](crate::RetryPolicy); or a
/// comma-separated list of them (`openai:gpt-4o,anthropic:claude-sonnet-4-5`), a
/// [`Fallback`] that moves to the next when one fails after its retries.
///
/// ```
/// let error = agent_llm::from_spec("gpt-4o").err();
/// assert_eq!(error, Some(agent_llm::ConfigError::BadSpec("gpt-4o".into())));
/// ```
pub fn from_spec(spec: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    let mut parts = spec.split(',').map(str::trim);
    let first = parts.next().unwrap_or_default();
    let mut fallback = match parts.clone().next() {
        None => return one(first),
        Some(_) => Fallback::new(first, one(first)?),
    };
    for part in parts {
        fallback = fallback.or(part, one(part)?);
    }
    Ok(Arc::new(fallback))
}

/// One `provider:model`.
fn one(spec: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    let (provider, model) = spec
        .split_once(':')
        .filter(|(_, model)| !model.is_empty())
        .ok_or_else(|| ConfigError::BadSpec(spec.to_owned()))?;
    match provider {
        "openai" => openai(model),
        "anthropic" => anthropic(model),
        _ => Err(ConfigError::BadSpec(spec.to_owned())),
    }
}

#[cfg(feature = "openai")]
fn openai(model: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    let model = crate::OpenAiModel::from_env(model)?;
    Ok(Arc::new(Retrying::new(model, RetryPolicy::default())))
}

#[cfg(not(feature = "openai"))]
fn openai(_: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    Err(ConfigError::Disabled("openai".into()))
}

#[cfg(feature = "anthropic")]
fn anthropic(model: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    let model = crate::AnthropicModel::from_env(model)?;
    Ok(Arc::new(Retrying::new(model, RetryPolicy::default())))
}

#[cfg(not(feature = "anthropic"))]
fn anthropic(_: &str) -> Result<Arc<dyn ChatModel>, ConfigError> {
    Err(ConfigError::Disabled("anthropic".into()))
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
