//! Retries as a layer over any model: a server's long wait slept for real on tokio's paused
//! clock, and retries around a `Router` of scripted models.

use agent_contracts_llm::{ManualClock, RetryPolicy, Retrying, Router};
use agent_contracts_runtime::model::BoxFuture;
use agent_contracts_runtime::{
    ChatModel, Message, ScriptedModel, model::ChatRequest, model::ChatResponse, model::ModelError,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Fails its first calls with `error`, then answers as `inner` does.
struct Flaky<M> {
    failures: usize,
    error: ModelError,
    calls: AtomicUsize,
    inner: M,
}

impl<M: ChatModel> ChatModel for Flaky<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        if self.calls.fetch_add(1, Ordering::Relaxed) < self.failures {
            let error = self.error.clone();
            return Box::pin(async move { Err(error) });
        }
        self.inner.complete(request)
    }
}

fn flaky(failures: usize, error: ModelError) -> Flaky<ScriptedModel> {
    let inner = ScriptedModel::default().script("a", [Message::assistant("ok")]);
    Flaky {
        failures,
        error,
        calls: AtomicUsize::new(0),
        inner,
    }
}

fn request() -> ChatRequest {
    ChatRequest::new("a", vec![Message::user("hi")], Vec::new())
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_of_35_seconds_is_waited_out_on_the_real_timer() {
    let limited = ModelError::RateLimited {
        retry_after: Some(Duration::from_secs(35)),
        message: None,
    };
    let model = Retrying::new(flaky(1, limited), RetryPolicy::default());
    let (virtual_start, real_start) = (tokio::time::Instant::now(), std::time::Instant::now());
    let reply = model.complete(&request()).await;
    assert_eq!(reply.map(|r| r.message.content).ok().as_deref(), Some("ok"));
    let waited = virtual_start.elapsed();
    assert!(
        (Duration::from_secs(35)..Duration::from_secs(36)).contains(&waited),
        "{waited:?}"
    );
    assert!(
        real_start.elapsed() < Duration::from_secs(5),
        "no real sleep"
    );
    assert_eq!(model.inner().calls.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn retries_wrap_a_router_of_scripted_models() {
    let overloaded = ModelError::Status {
        status: 529,
        body: "overloaded".into(),
        retry_after: None,
        should_retry: None,
    };
    let router = Router::new(Arc::new(flaky(2, overloaded)));
    let clock = Arc::new(ManualClock::new());
    let policy = RetryPolicy::default().with_jitter(|| 1.0);
    let model = Retrying::new(router, policy).clock(clock.clone());
    let reply = model.complete(&request()).await;
    assert_eq!(reply.map(|r| r.message.content).ok().as_deref(), Some("ok"));
    let ms = Duration::from_millis;
    assert_eq!(clock.sleeps(), [ms(500), ms(1000)]);
}

#[tokio::test]
async fn a_final_error_is_not_retried() {
    let clock = Arc::new(ManualClock::new());
    let model = Retrying::new(
        flaky(1, ModelError::Malformed("x".into())),
        RetryPolicy::default(),
    )
    .clock(clock.clone());
    let error = model.complete(&request()).await;
    assert_eq!(error.err(), Some(ModelError::Malformed("x".into())));
    assert!(clock.sleeps().is_empty());
}

#[tokio::test]
async fn a_fallback_moves_on_only_after_a_retryable_error_and_names_who_answered() {
    let down = flaky(1, ModelError::Timeout);
    let backup = ScriptedModel::default().script("a", [Message::assistant("from backup")]);
    let model = agent_contracts_llm::Fallback::new("openai:a", Arc::new(down))
        .or("anthropic:b", Arc::new(backup));
    let reply = model
        .complete(&request())
        .await
        .expect("the backup answers");
    assert_eq!(reply.message.content, "from backup");
    assert_eq!(reply.model.as_deref(), Some("anthropic:b"));

    let refused = flaky(1, ModelError::Malformed("not a completion".into()));
    let untouched = Arc::new(ScriptedModel::default().script("a", ["never"]));
    let model =
        agent_contracts_llm::Fallback::new("a", Arc::new(refused)).or("b", untouched.clone());
    let error = model.complete(&request()).await.err();
    assert_eq!(
        error,
        Some(ModelError::Malformed("not a completion".into()))
    );
    assert!(
        untouched.requests_of("a").is_empty(),
        "a final error ends the call"
    );
}
