//! The model of one task, telling the task of each of its calls: every model call (a
//! sub-agent's answer, each retry, each workflow step) is a `working` status update naming
//! the agent, and a streamed answer's text reaches streaming callers as it arrives.

use crate::tasks::Task;
use agent_contracts_runtime::ChatModel;
use agent_contracts_runtime::model::{
    BoxFuture, ChatRequest, ChatResponse, ModelError, StreamDelta, StreamSink,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Wraps a task's model.
pub(crate) struct Reporting {
    model: Arc<dyn ChatModel>,
    task: Arc<Task>,
    calls: AtomicU64,
}

impl Reporting {
    pub(crate) fn new(model: Arc<dyn ChatModel>, task: Arc<Task>) -> Self {
        Self {
            model,
            task,
            calls: AtomicU64::new(0),
        }
    }

    fn started(&self, agent: &str) {
        let call = self.calls.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        self.task
            .note(&format!("model call {call}: `{agent}` is thinking"));
    }
}

impl ChatModel for Reporting {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.started(&request.agent);
        self.model.complete(request)
    }

    /// The wrapped model's stream, each text delta also sent to the task's streaming callers.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.started(&request.agent);
        Box::pin(async move {
            let task = self.task.clone();
            let agent = request.agent.clone();
            let mut forwarding = move |delta: StreamDelta<'_>| {
                if let StreamDelta::Text(text) = delta {
                    task.partial(&agent, text);
                }
                sink.delta(delta)
            };
            self.model.stream(request, &mut forwarding).await
        })
    }
}
