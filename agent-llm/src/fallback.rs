//! A list of models tried in order: when one fails with an error a later try could fix
//! (after its own retries, when it is a [`Retrying`](crate::Retrying)), the next one answers.

use agent_core::BoxFuture;
use agent_core::{ChatModel, ChatRequest, ChatResponse, ModelError};
use std::fmt;
use std::sync::Arc;

/// Models tried in order: a request goes to the first, and moves to the next when one fails
/// with a retryable error ([`ModelError::is_retryable`]: rate limits, overload, timeouts,
/// broken connections). A final error (a refused request, a malformed answer) ends the call:
/// the next model would be asked the same thing. The response names the model that answered
/// (`ChatResponse::model`: the provider's name for it, or else the name given here).
///
/// ```
/// use agent_core::{ChatModel, ChatRequest, ScriptedModel};
/// use agent_llm::Fallback;
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
                    Ok(mut response) => {
                        response.model.get_or_insert_with(|| name.clone());
                        return Ok(response);
                    }
                    Err(error) => error,
                };
                match models.peek() {
                    Some((next, _)) if error.is_retryable() => tracing::warn!(
                        error.type = crate::model_error::error_type(&error),
                        error = %error,
                        model = %name,
                        next = %next,
                        "model failed, falling back to the next"
                    ),
                    _ => return Err(error),
                }
            }
        })
    }
}
