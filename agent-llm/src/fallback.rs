//! A list of models tried in order: when one fails with an error a later try could fix
//! (after its own retries, when it is a [`Retrying`](crate::Retrying)), the next one answers.

use crate::retry::Watched;
use agent_contracts_runtime::model::BoxFuture;
use agent_contracts_runtime::{
    ChatModel, model::ChatRequest, model::ChatResponse, model::ModelError, model::StreamSink,
};
use std::fmt;
use std::sync::Arc;

/// Models tried in order: a request goes to the first, and moves to the next when one fails
/// with a retryable error ([`ModelError::is_retryable`]: rate limits, overload, timeouts,
/// broken connections). A final error (a refused request, a malformed answer) ends the call:
/// the next model would be asked the same thing. The response names the model that answered
/// (`ChatResponse::model`: the provider's name for it, or else the name given here).
///
/// ```
/// use agent_contracts_runtime::{ChatModel, model::ChatRequest, ScriptedModel};
/// use agent_contracts_llm::Fallback;
/// use std::sync::Arc;
/// let backup = ScriptedModel::default().script("a", ["ok"]);
/// let model = Fallback::new("primary", Arc::new(ScriptedModel::default()))
///     .or("backup", Arc::new(backup));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // The primary's exhausted script is final: the backup is not asked.
/// assert!(model.complete(&ChatRequest::new("a", vec![], vec![])).await.is_err());
/// # });
/// ```
#[derive(Clone)]
pub struct Fallback {
    models: Vec<(String, Arc<dyn ChatModel>)>,
}

impl Fallback {
    /// Tries `model` (called `name` in logs and responses) first.
    pub fn new(name: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        Self {
            models: vec![(name.into(), model)],
        }
    }

    /// Then `model`, when the ones before failed.
    pub fn or(mut self, name: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        self.models.push((name.into(), model));
        self
    }
}

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.models.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Fallback").field("models", &names).finish()
    }
}

impl ChatModel for Fallback {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let mut models = self.models.iter().peekable();
            loop {
                let Some((name, model)) = models.next() else {
                    unreachable!("a Fallback has at least one model")
                };
                let error = match model.complete(request).await {
                    Ok(response) => return Ok(answered(response, name)),
                    Err(error) => error,
                };
                falls_back(error, name, models.peek().map(|(next, _)| next))?;
            }
        })
    }

    /// Falls back only while no delta reached the sink: once the reader has seen one
    /// model's text, another model's answer cannot follow it.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let mut models = self.models.iter().peekable();
            loop {
                let Some((name, model)) = models.next() else {
                    unreachable!("a Fallback has at least one model")
                };
                let mut watched = Watched::new(&mut *sink);
                let error = match model.stream(request, &mut watched).await {
                    Ok(response) => return Ok(answered(response, name)),
                    Err(error) if watched.delivered => return Err(error),
                    Err(error) => error,
                };
                falls_back(error, name, models.peek().map(|(next, _)| next))?;
            }
        })
    }
}

/// The response, named after the model that answered when the provider did not name it.
fn answered(mut response: ChatResponse, name: &str) -> ChatResponse {
    response.model.get_or_insert_with(|| name.to_owned());
    response
}

/// `Ok` (warned about) when the next model is to be asked after `error`, else the error.
fn falls_back(error: ModelError, name: &str, next: Option<&String>) -> Result<(), ModelError> {
    match next {
        Some(next) if error.is_retryable() => {
            tracing::warn!(
                error.type = crate::model_error::error_type(&error),
                error = %error,
                model = %name,
                next = %next,
                "model failed, falling back to the next"
            );
            Ok(())
        }
        _ => Err(error),
    }
}
