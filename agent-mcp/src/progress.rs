//! `notifications/progress` for a `tools/call` that carries a progress token: one at each
//! model call of the run (a sub-agent's answer, each retry, each tool turn, each workflow
//! step), naming the agent, and one every [`PROGRESS_INTERVAL`] while a model call is in
//! flight, so a host that ends calls silent for a minute keeps a long run alive. Such a call's
//! answers stream: once text has arrived, the notification carries the answer so far (its
//! last [`PARTIAL_TEXT_BYTES`]) instead of "still waiting".

use agent_contracts_runtime::{
    ChatModel, model::BoxFuture, model::ChatRequest, model::ChatResponse, model::ModelError,
};
use agent_contracts_runtime::{model::StreamDelta, model::StreamSink};
use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often a model call in flight is reported.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(10);

/// Most bytes of an answer's text one notification carries: its end, where the new text is.
pub const PARTIAL_TEXT_BYTES: usize = 2048;

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

impl Reporting {
    /// Runs `answer` (the wrapped model's call), reporting it: once when it starts, then every
    /// interval while it is in flight, with the text `received` so far once some arrived.
    async fn report(
        &self,
        agent: &str,
        received: &Mutex<String>,
        answer: impl Future<Output = Result<ChatResponse, ModelError>>,
    ) -> Result<ChatResponse, ModelError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        self.notify(format!("model call {call}: `{agent}` is thinking"))
            .await;
        tokio::pin!(answer);
        let started = tokio::time::Instant::now();
        let mut ticks = tokio::time::interval_at(started + self.interval, self.interval);
        let mut reported = 0;
        loop {
            tokio::select! {
                answer = &mut answer => return answer,
                _ = ticks.tick() => {
                    let message = {
                        let text = received.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        partial_message(call, agent, &text, &mut reported)
                    };
                    let message = message.unwrap_or_else(|| {
                        let waited = started.elapsed().as_secs();
                        format!("model call {call}: still waiting for `{agent}` ({waited} s)")
                    });
                    self.notify(message).await;
                }
            }
        }
    }
}

/// The notification of an answer's text so far, when more arrived since the last one
/// (`reported` bytes): its end, within [`PARTIAL_TEXT_BYTES`].
fn partial_message(call: u64, agent: &str, text: &str, reported: &mut usize) -> Option<String> {
    if text.len() <= *reported {
        return None;
    }
    *reported = text.len();
    let mut start = text.len().saturating_sub(PARTIAL_TEXT_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let cut = if start > 0 { "…" } else { "" };
    Some(format!(
        "model call {call}: `{agent}` has written {} bytes: {cut}{}",
        text.len(),
        &text[start..]
    ))
}

impl ChatModel for Reporting {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let nothing = Mutex::default();
            self.report(&request.agent, &nothing, self.model.complete(request))
                .await
        })
    }

    /// The wrapped model's stream, its text kept for the notifications as it passes.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let received = Mutex::new(String::new());
            let mut keeping = |delta: StreamDelta<'_>| {
                if let StreamDelta::Text(text) = delta {
                    received
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push_str(text);
                }
                sink.delta(delta)
            };
            let answer = self.model.stream(request, &mut keeping);
            self.report(&request.agent, &received, answer).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_message_carries_the_new_text_end_only_when_it_grew() {
        let mut reported = 0;
        assert_eq!(partial_message(1, "a", "", &mut reported), None);
        assert_eq!(
            partial_message(1, "a", "{\"plan\": \"op", &mut reported).as_deref(),
            Some("model call 1: `a` has written 12 bytes: {\"plan\": \"op")
        );
        assert_eq!(
            partial_message(1, "a", "{\"plan\": \"op", &mut reported),
            None
        );
        let long = format!("{}é{}", "x".repeat(10), "y".repeat(PARTIAL_TEXT_BYTES - 1));
        let message = partial_message(2, "b", &long, &mut reported).unwrap();
        let shown = message.split_once("bytes: ").unwrap().1;
        // The cut falls inside `é`: it moves past it, keeping whole characters.
        assert_eq!(shown, format!("…{}", "y".repeat(PARTIAL_TEXT_BYTES - 1)));
        assert_eq!(reported, long.len());
    }
}
