//! Streaming by server-sent events, against loopback servers speaking each provider's
//! documented event format: fragments put together (text and tool calls), thinking kept with
//! its signature, usage counted, errors in the middle of a stream, a stream cut, and a reader
//! that stops early closing the connection before the rest was sent.

use crate::common::*;
use agent_contracts_llm::{Fallback, HttpModel, ManualClock, Provider};
use agent_contracts_runtime::{
    ChatModel, Message, model::ChatRequest, model::ModelError, model::StreamDelta, model::Thinking,
};
use axum::body::{Body, Bytes};
use serde_json::json;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::ResponseTemplate;

fn request() -> ChatRequest {
    ChatRequest::new("a", vec![Message::user("plan it")], Vec::new())
}

/// A 200 event stream whose body is exactly `body`.
fn sse(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into().into_bytes(), "text/event-stream")
}

/// OpenAI's `data:` lines, each a chunk, then `[DONE]`.
fn openai_events(chunks: &[serde_json::Value]) -> String {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

fn chunk(delta: serde_json::Value, finish_reason: Option<&str>) -> serde_json::Value {
    json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1_767_225_600,
        "model": "gpt-test-2026", "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null})
}

fn usage_chunk() -> serde_json::Value {
    json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1_767_225_600,
        "model": "gpt-test-2026", "choices": [],
        "usage": {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43,
                  "prompt_tokens_details": {"cached_tokens": 8},
                  "completion_tokens_details": {"reasoning_tokens": 0}}})
}

/// Anthropic's named events.
fn anthropic_events(events: &[(&str, serde_json::Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn message_start() -> (&'static str, serde_json::Value) {
    (
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_9",
        "type": "message", "role": "assistant", "content": [], "model": "claude-test-2026",
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 25, "cache_read_input_tokens": 5,
                  "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    )
}

fn block_start(index: u64, block: serde_json::Value) -> (&'static str, serde_json::Value) {
    (
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn block_delta(index: u64, delta: serde_json::Value) -> (&'static str, serde_json::Value) {
    (
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn block_stop(index: u64) -> (&'static str, serde_json::Value) {
    (
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_end(stop_reason: &str) -> [(&'static str, serde_json::Value); 2] {
    [
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 15}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

/// Every delta a sink received, in order.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn sink(&mut self) -> impl FnMut(StreamDelta<'_>) -> ControlFlow<()> + Send + '_ {
        |delta| {
            self.0.push(match delta {
                StreamDelta::Text(text) => format!("text:{text}"),
                StreamDelta::Thinking(text) => format!("thinking:{text}"),
                _ => "other".to_owned(),
            });
            ControlFlow::Continue(())
        }
    }
}

#[tokio::test]
async fn openai_text_and_tool_call_fragments_are_put_together() {
    let chunks = [
        chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ),
        chunk(json!({"content": "{\"plan\": "}), None),
        chunk(json!({"content": "\"go\"}"}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
            "function": {"name": "run_search_agent", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
            "function": {"name": "run_budget_agent", "arguments": "{\"max\": 0."}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"task\""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": ": \"Find it\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "60}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(),
    ];
    let server = serve(OPENAI_PATH, vec![sse(openai_events(&chunks))]).await;
    let clock = Arc::new(ManualClock::new());
    let mut seen = Seen::default();
    let response = openai(&server, &clock)
        .stream(&request(), &mut seen.sink())
        .await
        .expect("a streamed reply");
    assert_eq!(seen.0, ["text:{\"plan\": ", "text:\"go\"}"]);
    assert_eq!(response.message.content, r#"{"plan": "go"}"#);
    let calls: Vec<_> = response
        .message
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "run_search_agent", r#"{"task": "Find it"}"#),
            ("call_b", "run_budget_agent", r#"{"max": 0.60}"#),
        ]
    );
    let usage = response.usage.expect("the last chunk's usage");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.cached_tokens),
        (31, 12, 8)
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.id.as_deref(), Some("chatcmpl-9"));
    assert_eq!(response.model.as_deref(), Some("gpt-test-2026"));
    let body = &bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn anthropic_text_thinking_and_tool_input_fragments_are_put_together() {
    let mut events = vec![
        message_start(),
        block_start(0, json!({"type": "thinking", "thinking": ""})),
        ("ping", json!({"type": "ping"})),
        block_delta(
            0,
            json!({"type": "thinking_delta", "thinking": "Check the "}),
        ),
        block_delta(0, json!({"type": "thinking_delta", "thinking": "budget."})),
        block_delta(
            0,
            json!({"type": "signature_delta", "signature": "EqQBCgIYAh"}),
        ),
        block_stop(0),
        block_start(
            1,
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy"}),
        ),
        block_stop(1),
        block_start(2, json!({"type": "text", "text": ""})),
        block_delta(2, json!({"type": "text_delta", "text": "Asking "})),
        block_delta(2, json!({"type": "text_delta", "text": "the agent."})),
        block_stop(2),
        block_start(
            3,
            json!({"type": "tool_use", "id": "toolu_01", "name": "run_budget_agent", "input": {}}),
        ),
        block_delta(3, json!({"type": "input_json_delta", "partial_json": ""})),
        block_delta(
            3,
            json!({"type": "input_json_delta", "partial_json": "{\"max\": 0.6"}),
        ),
        block_delta(
            3,
            json!({"type": "input_json_delta", "partial_json": "0, \"b\": 1}"}),
        ),
        block_stop(3),
    ];
    events.extend(message_end("tool_use"));
    let server = serve(ANTHROPIC_PATH, vec![sse(anthropic_events(&events))]).await;
    let clock = Arc::new(ManualClock::new());
    let mut seen = Seen::default();
    let response = anthropic(&server, &clock)
        .stream(&request(), &mut seen.sink())
        .await
        .expect("a streamed reply");
    assert_eq!(
        seen.0,
        [
            "thinking:Check the ",
            "thinking:budget.",
            "text:Asking ",
            "text:the agent."
        ]
    );
    assert_eq!(response.message.content, "Asking the agent.");
    assert_eq!(
        response.message.thinking,
        [
            Thinking::Thinking {
                thinking: "Check the budget.".into(),
                signature: "EqQBCgIYAh".into()
            },
            Thinking::RedactedThinking {
                data: "EmwKAhgBEgy".into()
            },
        ]
    );
    let call = &response.message.tool_calls[0];
    assert_eq!(
        (
            call.id.as_str(),
            call.name.as_str(),
            call.arguments.as_str()
        ),
        ("toolu_01", "run_budget_agent", r#"{"max": 0.60, "b": 1}"#)
    );
    let usage = response.usage.expect("usage");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.cached_tokens),
        (30, 15, 5),
        "input from message_start (cache reads added), output from message_delta"
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(bodies(&server).await[0]["stream"], true);
}

#[tokio::test]
async fn errors_in_the_middle_of_a_stream_are_model_errors() {
    let clock = Arc::new(ManualClock::new());
    let text = |t: &str| block_delta(0, json!({"type": "text_delta", "text": t}));
    let overloaded = anthropic_events(&[
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        text("{\"a\": "),
        (
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]);
    let not_json = anthropic_events(&[message_start()])
        + "event: content_block_start\ndata: {\"type\": \"content_block_st\n\n";
    let unfinished = anthropic_events(&[
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        text("{\"a\": "),
    ]);
    let openai_error = "data: {\"error\": {\"message\": \"The server had an error\", \"type\": \"server_error\"}}\n\n";
    let server = serve(
        ANTHROPIC_PATH,
        vec![sse(overloaded), sse(not_json), sse(unfinished)],
    )
    .await;
    let never = agent_contracts_llm::RetryPolicy::never();
    let model = agent_contracts_llm::Retrying::new(
        anthropic_builder(&server).build().expect("a model"),
        never,
    )
    .clock(clock.clone());
    let mut seen = Seen::default();
    let error = model.stream(&request(), &mut seen.sink()).await.err();
    assert!(
        matches!(&error, Some(ModelError::Status { status: 529, body, .. }) if body == "Overloaded"),
        "{error:?}"
    );
    let error = model.stream(&request(), &mut seen.sink()).await.err();
    assert!(
        matches!(&error, Some(ModelError::Malformed(m)) if m.contains("not a message event")),
        "{error:?}"
    );
    let error = model.stream(&request(), &mut seen.sink()).await.err();
    assert!(
        matches!(&error, Some(ModelError::Transport(m)) if m.ends_with("the event stream ended before `message_stop`")),
        "{error:?}"
    );

    let server = serve(OPENAI_PATH, vec![sse(openai_error)]).await;
    let error = openai(&server, &clock)
        .stream(&request(), &mut seen.sink())
        .await
        .err();
    assert!(
        matches!(&error, Some(ModelError::GaveUp { attempts: 4, .. })),
        "a server error before any delta is retried: {error:?}"
    );
}

#[tokio::test]
async fn retries_and_fallbacks_stop_once_the_reader_saw_text() {
    // A 503 before any delta is retried; an error after one is returned.
    let text_then_error = anthropic_events(&[
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Hel"})),
        (
            "error",
            json!({"type": "error", "error": {"type": "api_error", "message": "Internal"}}),
        ),
    ]);
    let server = serve(
        ANTHROPIC_PATH,
        vec![status(503), sse(text_then_error), status(200)],
    )
    .await;
    let clock = Arc::new(ManualClock::new());
    let backup = Arc::new(
        agent_contracts_runtime::ScriptedModel::default().script("a", ["from the backup"]),
    );
    let model = Fallback::new("primary", Arc::new(anthropic(&server, &clock))).or("backup", backup);
    let mut seen = Seen::default();
    let error = model.stream(&request(), &mut seen.sink()).await.err();
    assert!(
        matches!(&error, Some(ModelError::GaveUp { attempts: 2, last }) if matches!(**last, ModelError::Status { status: 500, .. })),
        "not retried, not fallen back from: {error:?}"
    );
    assert_eq!(seen.0, ["text:Hel"]);
    assert_eq!(
        received(&server).await.len(),
        2,
        "one retry, before the text"
    );
    assert_eq!(clock.sleeps().len(), 1);
}

#[tokio::test]
async fn a_server_that_does_not_stream_answers_in_one_delta() {
    let reply = completion(json!({"role": "assistant", "content": "whole"}), "stop");
    let server = serve(OPENAI_PATH, vec![ok(reply)]).await;
    let clock = Arc::new(ManualClock::new());
    let mut seen = Seen::default();
    let response = openai(&server, &clock)
        .stream(&request(), &mut seen.sink())
        .await
        .expect("a reply");
    assert_eq!(seen.0, ["text:whole"]);
    assert_eq!(response.usage.map(|u| u.input_tokens), Some(12));
}

/// What a streaming server saw: the bytes it handed to the connection, and whether the
/// client went away before the end.
#[derive(Default)]
struct Probe {
    sent: AtomicUsize,
    finished: AtomicBool,
    dropped: tokio::sync::Notify,
    dropped_early: AtomicBool,
}

/// Marks the stream's end when dropped: hyper drops the body when the connection closes.
struct DropMark(Arc<Probe>);

impl Drop for DropMark {
    fn drop(&mut self) {
        if !self.0.finished.load(Ordering::SeqCst) {
            self.0.dropped_early.store(true, Ordering::SeqCst);
        }
        self.0.dropped.notify_one();
    }
}

/// How a served stream ends.
#[derive(Clone, Copy)]
enum End {
    Complete,
    /// The connection is aborted after this many chunks.
    CutAfter(usize),
}

/// An axum server on loopback streaming `chunks` at `path`, `delay` apart.
async fn streaming_server(
    path: &'static str,
    chunks: Vec<String>,
    delay: Duration,
    end: End,
) -> (String, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let shared = Arc::new(Mutex::new(Some(chunks)));
    let handler_probe = probe.clone();
    let handler = move || {
        let probe = handler_probe.clone();
        let chunks = shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .unwrap_or_default();
        async move {
            let mark = DropMark(probe.clone());
            let state = (chunks.into_iter().enumerate(), mark);
            let stream =
                futures_util::stream::unfold(state, move |(mut chunks, mark)| async move {
                    tokio::time::sleep(delay).await;
                    let Some((i, chunk)) = chunks.next() else {
                        mark.0.finished.store(true, Ordering::SeqCst);
                        return None;
                    };
                    if let End::CutAfter(n) = end
                        && i == n
                    {
                        let cut = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut");
                        return Some((Err(cut), (chunks, mark)));
                    }
                    mark.0.sent.fetch_add(chunk.len(), Ordering::SeqCst);
                    Some((Ok(Bytes::from(chunk)), (chunks, mark)))
                });
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap_or_default()
        }
    };
    let app = axum::Router::new().route(path, axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let uri = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (uri, probe)
}

/// A long answer in OpenAI's chunks: 200 deltas of a JSON array.
fn long_openai_answer() -> Vec<String> {
    let mut chunks = vec![format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": "["}), None)
    )];
    for i in 0..200 {
        let piece = format!("{{\"step\": {i}, \"note\": \"a long answer\"}}, ");
        chunks.push(format!(
            "data: {}\n\n",
            chunk(json!({"content": piece}), None)
        ));
    }
    chunks.push(format!(
        "data: {}\n\n",
        chunk(json!({"content": "]"}), Some("stop"))
    ));
    chunks.push(format!("data: {}\n\ndata: [DONE]\n\n", usage_chunk()));
    chunks
}

#[tokio::test]
async fn a_reader_that_stops_closes_the_connection_before_the_rest_is_sent() {
    let chunks = long_openai_answer();
    let total: usize = chunks.iter().map(String::len).sum();
    let (uri, probe) = streaming_server(
        "/v1/chat/completions",
        chunks,
        Duration::from_millis(5),
        End::Complete,
    )
    .await;
    let model = HttpModel::builder(Provider::OpenAi, "gpt-test")
        .base_url(format!("{uri}/v1"))
        .api_key(KEY)
        .build()
        .expect("a model");
    let mut deltas = 0;
    // Stops at the third delta: "the answer can no longer pass".
    let mut sink = |_: StreamDelta<'_>| {
        deltas += 1;
        if deltas == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let error = model.stream(&request(), &mut sink).await.err();
    let Some(ModelError::Stopped { partial }) = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        partial.message.content,
        r#"[{"step": 0, "note": "a long answer"}, {"step": 1, "note": "a long answer"}, "#
    );
    assert_eq!(partial.id.as_deref(), Some("chatcmpl-9"));
    // The server sees the connection go: its body is dropped before the end.
    tokio::time::timeout(Duration::from_secs(5), probe.dropped.notified())
        .await
        .expect("the server saw the client go away");
    assert!(probe.dropped_early.load(Ordering::SeqCst));
    let sent = probe.sent.load(Ordering::SeqCst);
    assert!(
        sent < total / 4,
        "{sent} of {total} bytes were sent before the connection closed"
    );
}

#[tokio::test]
async fn a_connection_cut_in_the_middle_is_a_transport_error() {
    let mut chunks = long_openai_answer();
    chunks.truncate(20);
    let (uri, _probe) = streaming_server(
        "/v1/messages",
        anthropic_events(&[
            message_start(),
            block_start(0, json!({"type": "text", "text": ""})),
            block_delta(0, json!({"type": "text_delta", "text": "Hel"})),
            block_delta(0, json!({"type": "text_delta", "text": "lo"})),
        ])
        .split_inclusive("\n\n")
        .map(str::to_owned)
        .collect(),
        Duration::from_millis(1),
        End::CutAfter(3),
    )
    .await;
    let model = HttpModel::builder(Provider::Anthropic, "claude-test")
        .base_url(uri)
        .api_key(KEY)
        .build()
        .expect("a model");
    let mut seen = Seen::default();
    let error = model.stream(&request(), &mut seen.sink()).await.err();
    assert!(
        matches!(&error, Some(ModelError::Transport(m)) if m.starts_with("POST http://127.0.0.1:")),
        "{error:?}"
    );
    assert_eq!(
        seen.0,
        ["text:Hel"],
        "the text before the cut was delivered"
    );
}

#[tokio::test]
async fn scripted_answers_stream_in_chunks_through_the_layers() {
    let scripted = agent_contracts_runtime::ScriptedModel::default()
        .chunk_size(5)
        .script("a", ["0123456789ab"]);
    let model = agent_contracts_llm::Traced::new(agent_contracts_llm::Retrying::new(
        scripted,
        agent_contracts_llm::RetryPolicy::never(),
    ));
    let mut seen = Seen::default();
    let response = model
        .stream(&request(), &mut seen.sink())
        .await
        .expect("a reply");
    assert_eq!(seen.0, ["text:01234", "text:56789", "text:ab"]);
    assert_eq!(response.message.content, "0123456789ab");
}

#[tokio::test]
async fn an_event_or_a_stream_past_its_bound_is_an_error() {
    let big_event = format!(
        "data: {}\n\n",
        chunk(json!({"content": "x".repeat(1024 * 1024)}), None)
    );
    let piece = format!(
        "data: {}\n\n",
        chunk(json!({"content": "y".repeat(100 * 1024)}), None)
    );
    let long_stream = piece.repeat(170);
    assert!(long_stream.len() > 16 * 1024 * 1024);
    let server = serve(OPENAI_PATH, vec![sse(big_event), sse(long_stream)]).await;
    let model = openai_builder(&server).build().expect("a model");
    let mut deltas = 0usize;
    let mut sink = |_: StreamDelta<'_>| {
        deltas += 1;
        ControlFlow::Continue(())
    };
    let error = model.stream(&request(), &mut sink).await.err();
    assert!(
        matches!(&error, Some(ModelError::Malformed(m)) if m == "an event carries more than 1048576 bytes of data"),
        "{error:?}"
    );
    let error = model.stream(&request(), &mut sink).await.err();
    assert!(
        matches!(&error, Some(ModelError::Malformed(m)) if m == "the event stream is larger than 16777216 bytes"),
        "{error:?}"
    );
    assert!(
        deltas > 100,
        "the stream was read up to its bound: {deltas}"
    );
}

/// An axum server on loopback that answers `chunks` to every request, the first one cut (the
/// connection reset) after `cut_after` chunks; returns its URI and every request's body.
async fn cut_once_server(
    chunks: Vec<String>,
    cut_after: usize,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let handler = move |body: String| {
        let chunks = chunks.clone();
        let first = {
            let mut bodies = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            bodies.push(body);
            bodies.len() == 1
        };
        async move {
            let stream = futures_util::stream::iter(chunks.into_iter().enumerate().map(
                move |(i, chunk)| {
                    if first && i == cut_after {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "cut",
                        ));
                    }
                    Ok(Bytes::from(chunk))
                },
            ));
            // Each chunk a moment after the last, so the ones before the cut reach the client.
            let stream = futures_util::StreamExt::then(stream, |item| async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                item
            });
            // Nothing after the cut: the body ends in the error.
            let stream = futures_util::StreamExt::scan(stream, false, |failed, item| {
                let next = (!*failed).then_some(item);
                if matches!(next, Some(Err(_))) {
                    *failed = true;
                }
                std::future::ready(next)
            });
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap_or_default()
        }
    };
    let app = axum::Router::new().route(OPENAI_PATH, axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let uri = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (uri, bodies)
}

#[tokio::test]
async fn a_stream_cut_after_half_the_answer_is_retried_and_the_call_completes() {
    use agent_contracts_runtime::stream::{Delivery, StreamEvent};
    let answer = r#"{"venue_name": "The Lakeview Loft", "capacity": 60, "cost_usd": 1500, "notes": "Available all evening"}"#;
    let mut chunks = vec![format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": ""}), None)
    )];
    let pieces: Vec<String> = answer
        .as_bytes()
        .chunks(10)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let half = pieces.len() / 2;
    for piece in &pieces {
        chunks.push(format!(
            "data: {}\n\n",
            chunk(json!({"content": piece}), None)
        ));
    }
    chunks.push(format!("data: {}\n\n", chunk(json!({}), Some("stop"))));
    chunks.push("data: [DONE]\n\n".to_owned());
    // Cut after the role chunk and half the answer's pieces.
    let (uri, bodies) = cut_once_server(chunks, 1 + half).await;
    let clock = Arc::new(ManualClock::new());
    let model = HttpModel::builder(Provider::OpenAi, "gpt-test")
        .base_url(format!("{uri}/v1"))
        .api_key(KEY)
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a model");
    let model = retrying(model, &clock);
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = events.clone();
    let watch = move |event: StreamEvent<'_>| {
        let line = match event {
            StreamEvent::Text { text, .. } => format!("text {text}"),
            StreamEvent::Cut { received, .. } => format!("cut {received}"),
            StreamEvent::Done { .. } => "done".to_owned(),
            _ => "other".to_owned(),
        };
        seen.lock().unwrap().push(line);
    };
    let config = agent_contracts_runtime::Config::default()
        .with_delivery(Delivery::Streamed(Arc::new(watch)));
    let runtime = agent_contracts_runtime::Runtime::with_config(model, config);
    let venue = runtime
        .call::<agent_examples::agents::VenueAgent>(r#"{"task": "Find a venue for 40"}"#)
        .await
        .expect("the retried stream completes the call");
    assert_eq!(venue.venue_name, "The Lakeview Loft");

    let events = events.lock().unwrap().clone();
    let cut = events
        .iter()
        .position(|e| e.starts_with("cut "))
        .unwrap_or_else(|| {
            let requests = bodies.lock().unwrap().len();
            panic!("the watch is told of the cut ({requests} requests): {events:?}")
        });
    let texts = |events: &[String]| -> String {
        events
            .iter()
            .filter_map(|e| e.strip_prefix("text "))
            .collect()
    };
    // What the watch saw before the cut is a part of the answer, as many bytes as the cut
    // says; after it, the whole answer again.
    let before = texts(&events[..cut]);
    let received = before.len();
    assert_eq!(events[cut], format!("cut {received}"));
    assert!(
        received > 0 && received < answer.len() && answer.starts_with(&before),
        "{events:?}"
    );
    assert_eq!(texts(&events[cut..]), answer, "{events:?}");
    assert_eq!(events.last().map(String::as_str), Some("done"));
    // The retry is one attempt of the same budget, and the partial answer is never sent back.
    assert_eq!(clock.sleeps().len(), 1);
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1]);
    assert!(!bodies[1].contains("Lakeview"));
    let transcript = runtime.transcript();
    assert_eq!(transcript.counts().cut_streams, 1);
    assert_eq!(transcript.counts().model_calls, 1);
    let text: String = transcript
        .events()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        text.contains(&format!(
            "=== [venue_agent] stream cut after {received} bytes: the partial answer is discarded and asked again ===\n"
        )),
        "{text}"
    );
}
