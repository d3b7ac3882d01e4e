//! `notifications/progress` for a `tools/call` that carries a progress token: one at each
//! model call of the run (a sub-agent's answer, each retry, each tool turn, each workflow
//! step), naming the agent, and one every [`PROGRESS_INTERVAL`] while a model call is in
//! flight, so a host that ends calls silent for a minute keeps a long run alive.

use agent_core::{BoxFuture, ChatModel, ChatRequest, ChatResponse, ModelError};
use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often a model call in flight is reported.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(10);

/// Longest a notification may wait for room on the way to the client: a client that stops
/// reading its stream must not hold the run.
const SEND_TIMEOUT: Duration = Duration::from_secs(1);

/// The model of one `tools/call`, reporting each of its calls to the client.
pub(crate) struct Reporting {
    model: Arc<dyn ChatModel>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
    /// Notifications sent: the `progress` value, which only grows.
    sent: AtomicU64,
    /// Model calls started.
    calls: AtomicU64,
    interval: Duration,
}

impl Reporting {
    pub(crate) fn new(
        model: Arc<dyn ChatModel>,
        peer: Peer<RoleServer>,
        token: ProgressToken,
        interval: Duration,
    ) -> Self {
        Self {
            model,
            peer,
            token,
            sent: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            interval,
        }
    }

    /// Sends one notification, or gives up after [`SEND_TIMEOUT`]: a client that went away or
    /// stopped reading loses only its progress, and the run goes on.
    async fn notify(&self, message: String) {
        let progress = self.sent.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        let param = ProgressNotificationParam::new(self.token.clone(), progress as f64)
            .with_message(message);
        match tokio::time::timeout(SEND_TIMEOUT, self.peer.notify_progress(param)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::debug!(%error, "a progress notification was not sent"),
            Err(_) => tracing::debug!("a progress notification found no room in time"),
        }
    }
}

impl ChatModel for Reporting {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let call = self.calls.fetch_add(1, Ordering::Relaxed).saturating_add(1);
            let agent = &request.agent;
            self.notify(format!("model call {call}: `{agent}` is thinking"))
                .await;
            let answer = self.model.complete(request);
            tokio::pin!(answer);
            let started = tokio::time::Instant::now();
            let mut ticks = tokio::time::interval_at(started + self.interval, self.interval);
            loop {
                tokio::select! {
                    answer = &mut answer => return answer,
                    _ = ticks.tick() => {
                        let waited = started.elapsed().as_secs();
                        self.notify(format!(
                            "model call {call}: still waiting for `{agent}` ({waited} s)"
                        ))
                        .await;
                    }
                }
            }
        })
    }
}
