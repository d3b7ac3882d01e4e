//! A model wrapper that adds up token usage, for the binaries' `--model` runs.

use agent_core::model::BoxFuture;
use agent_core::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use std::fmt;
use std::sync::{Arc, Mutex};

/// Counts the calls and adds up the usage of every response of the model it wraps.
pub struct Metered {
    inner: Arc<dyn ChatModel>,
    total: Mutex<(usize, Usage)>,
}

impl Metered {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ChatModel>) -> Self {
        Self {
            inner,
            total: Mutex::new((0, Usage::default())),
        }
    }

    /// The model named by a `--model` flag (`openai:<model>` or `anthropic:<model>`),
    /// configured from the environment.
    pub fn from_spec(spec: &str) -> Result<Arc<Self>, agent_llm::ConfigError> {
        agent_llm::from_spec(spec).map(|model| Arc::new(Self::new(model)))
    }

    /// Calls so far and their usage.
    pub fn total(&self) -> (usize, Usage) {
        *self
            .total
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl fmt::Display for Metered {
    /// The usage section that ends a run's output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (calls, usage) = self.total();
        writeln!(
            f,
            "=== usage ===\n{calls} model calls, {} input tokens ({} cached), {} output tokens\n",
            usage.input_tokens, usage.cached_tokens, usage.output_tokens
        )
    }
}

impl ChatModel for Metered {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let response = self.inner.complete(request).await?;
            let mut total = self
                .total
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            total.0 += 1;
            total.1 += response.usage.unwrap_or_default();
            Ok(response)
        })
    }
}
