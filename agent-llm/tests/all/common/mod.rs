//! A loopback server that answers from a queue, and models pointed at it, retried on a
//! manual clock.

#![allow(dead_code, reason = "each test file uses a part of the helpers")]

use agent_contracts_llm::{HttpModel, ManualClock, Provider, RetryPolicy, Retrying};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The key every test model sends; no response or error may show it.
pub const KEY: &str = "sk-test-0123456789-secret";

/// Answers each request with the next response of the queue; an empty queue answers 599.
pub struct Queue(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Queue {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut queue = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        queue
            .pop_front()
            .unwrap_or_else(|| ResponseTemplate::new(599).set_body_string("the queue is empty"))
    }
}

/// A server on 127.0.0.1 answering POSTs to `endpoint` from `responses`, in order.
pub async fn serve(endpoint: &str, responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(Queue(Mutex::new(responses.into())))
        .mount(&server)
        .await;
    server
}

/// A 200 whose body is exactly `body`.
pub fn ok(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into().into_bytes(), "application/json")
}

/// An error status with a JSON error body.
pub fn status(code: u16) -> ResponseTemplate {
    let body = format!(r#"{{"error":{{"message":"status {code}","type":"test"}}}}"#);
    ResponseTemplate::new(code).set_body_raw(body.into_bytes(), "application/json")
}

/// Backoff without randomness: each wait is the full exponential step.
pub fn exact_retries() -> RetryPolicy {
    RetryPolicy::default().with_jitter(|| 1.0)
}

pub const OPENAI_PATH: &str = "/v1/chat/completions";
pub const ANTHROPIC_PATH: &str = "/v1/messages";

/// `model` retried by [`exact_retries`] on `clock`.
pub fn retrying<M>(model: M, clock: &Arc<ManualClock>) -> Retrying<M> {
    Retrying::new(model, exact_retries()).clock(clock.clone())
}

pub fn openai(server: &MockServer, clock: &Arc<ManualClock>) -> Retrying<HttpModel> {
    let model = openai_builder(server).build();
    retrying(model.expect("a valid configuration"), clock)
}

pub fn openai_builder(server: &MockServer) -> agent_contracts_llm::HttpModelBuilder {
    HttpModel::builder(Provider::OpenAi, "gpt-test")
        .base_url(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .timeout(Duration::from_secs(10))
}

pub fn anthropic(server: &MockServer, clock: &Arc<ManualClock>) -> Retrying<HttpModel> {
    let model = anthropic_builder(server).build();
    retrying(model.expect("a valid configuration"), clock)
}

pub fn anthropic_builder(server: &MockServer) -> agent_contracts_llm::HttpModelBuilder {
    HttpModel::builder(Provider::Anthropic, "claude-test")
        .base_url(server.uri())
        .api_key(KEY)
        .timeout(Duration::from_secs(10))
}

/// Every request the server received.
pub async fn received(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

/// The bodies of every request, parsed.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    received(server)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("a JSON request body"))
        .collect()
}

/// An OpenAI completion with `message` and `finish_reason`.
pub fn completion(message: Value, finish_reason: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-test-2026",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17,
                  "prompt_tokens_details": {"cached_tokens": 4},
                  "completion_tokens_details": {"reasoning_tokens": 3}},
    })
    .to_string()
}

/// An Anthropic message with content blocks given as JSON text (kept exactly).
pub fn message(blocks: &str, stop_reason: &str) -> String {
    format!(
        r#"{{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-2026","content":[{blocks}],"stop_reason":"{stop_reason}","usage":{{"input_tokens":10,"output_tokens":6,"cache_read_input_tokens":3,"cache_creation_input_tokens":2}}}}"#
    )
}
