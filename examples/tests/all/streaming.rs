//! `plan-pipeline --model P:M --stream` against a loopback server that streams the
//! plan-generator story in each provider's server-sent events, paced like a model writing:
//! the first plan breaks its output contract in its first bytes, and its connection is closed
//! before a quarter of it was sent; the good plan is printed on stderr while it streams; the
//! run ends with the same plan as without `--stream`, and the summary counts the tokens the
//! streams reported.

use agent_contracts::Message;
use axum::body::{Body, Bytes};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt as _;

const PLAN_PIPELINE: &str = env!("CARGO_BIN_EXE_plan-pipeline");

/// Bytes of an answer's text per event.
const PIECE: usize = 16;

/// The good plan, as the scripted main job's plan generator writes it.
fn plan_text() -> String {
    // The pipeline's plan generator answers with this exact text.
    r##"{
  "plan_file_path": "plans/login_form_automation.md",
  "status": "success",
  "agent_response_content": "Plan: open the login page, fill #email-input and #password-input (fallbacks: input[name='email'], form input:first-child), submit. Risk: the submit button label is vague (WCAG 2.4.6)."
}"##
    .to_owned()
}

/// The broken plan: a status the contract does not know, written first.
fn broken_plan() -> String {
    let rest = plan_text()
        .replacen("{\n", "", 1)
        .replace("  \"status\": \"success\",\n", "");
    format!("{{\n  \"status\": \"done\",\n{rest}")
}

/// What the server sent of one response.
#[derive(Debug, Default)]
struct Sent {
    /// Bytes of the answer's text sent.
    text: AtomicUsize,
    /// The whole response was sent.
    finished: AtomicBool,
}

/// What the server sent of the response it streams.
struct Served(Arc<Sent>);

/// One event of a response, and the bytes of answer text it carries.
type Event = (String, usize);

/// A server on loopback that answers the `n`th request with the `n`th reply's events, one
/// every `pace`; what it sent of each, in request order.
async fn server(
    path: &'static str,
    responses: Vec<Vec<Event>>,
    pace: Duration,
) -> (String, Arc<Mutex<Vec<Arc<Sent>>>>) {
    let responses = Arc::new(Mutex::new(responses.into_iter()));
    let log: Arc<Mutex<Vec<Arc<Sent>>>> = Arc::default();
    let handler_log = log.clone();
    let handler = move || {
        let events = responses.lock().unwrap().next().unwrap_or_default();
        let sent = Arc::new(Sent::default());
        handler_log.lock().unwrap().push(sent.clone());
        async move {
            let state = (events.into_iter(), Served(sent));
            let stream =
                futures_util::stream::unfold(state, move |(mut events, served)| async move {
                    tokio::time::sleep(pace).await;
                    let (event, text) = events.next()?;
                    served.0.text.fetch_add(text, Ordering::SeqCst);
                    if events.len() == 0 {
                        served.0.finished.store(true, Ordering::SeqCst);
                    }
                    Some((
                        Ok::<_, std::io::Error>(Bytes::from(event)),
                        (events, served),
                    ))
                });
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap_or_default()
        }
    };
    let app = axum::Router::new().route(path, axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (uri, log)
}

/// `text` in pieces of [`PIECE`] bytes (on character boundaries).
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + PIECE).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// A reply as Chat Completions chunks: text deltas, tool calls by index, then the usage.
fn openai_events(n: usize, m: &Message) -> Vec<Event> {
    let data = |chunk: Value| (format!("data: {chunk}\n\n"), 0);
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![data(chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    for piece in pieces(&m.content) {
        let (event, _) = data(chunk(json!({"content": piece}), None));
        events.push((event, piece.len()));
    }
    for (i, call) in m.tool_calls.iter().enumerate() {
        events.push(data(chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{n}_{i}"), "type": "function",
                "function": {"name": call.name, "arguments": ""}}]}),
            None,
        )));
        for piece in pieces(&call.arguments) {
            events.push(data(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            )));
        }
    }
    let finish = if m.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    events.push(data(chunk(json!({}), Some(finish))));
    events.push(data(
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk",
        "model": "m", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}),
    ));
    events.push(("data: [DONE]\n\n".to_owned(), 0));
    events
}

/// A reply as Messages events: `message_start` with the input tokens, a block per text and
/// tool call, `message_delta` with the output tokens.
fn anthropic_events(n: usize, m: &Message) -> Vec<Event> {
    let event = |name: &str, data: Value| (format!("event: {name}\ndata: {data}\n\n"), 0);
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{n}"), "type": "message",
            "role": "assistant", "content": [], "model": "m", "stop_reason": null,
            "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !m.content.is_empty() {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in pieces(&m.content) {
            let (text, _) = event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": piece}}),
            );
            events.push((text, piece.len()));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ));
        index = 1;
    }
    for (i, call) in m.tool_calls.iter().enumerate() {
        let at = index + i;
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": at, "content_block": {"type": "tool_use",
                "id": format!("toolu_{n}_{i}"), "name": call.name, "input": {}}}),
        ));
        for piece in pieces(&call.arguments) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": at,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": at}),
        ));
    }
    let stop = if m.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 10}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

type Wire = fn(usize, &Message) -> Vec<Event>;

/// Runs the streamed story on one wire format; checks what the issue asks of it.
async fn streamed_story(provider: &str, path: &'static str, wire: Wire, summary: &str) {
    let replies = crate::real_model::story_with(&broken_plan()).await;
    let broken_at = replies
        .iter()
        .position(|m| m.content == broken_plan())
        .unwrap();
    let responses: Vec<Vec<Event>> = replies
        .iter()
        .enumerate()
        .map(|(n, m)| wire(n, m))
        .collect();
    let (uri, sent) = server(path, responses, Duration::from_millis(15)).await;
    let mut child = tokio::process::Command::new(PLAN_PIPELINE)
        .args(["--model", &format!("{provider}:test-model"), "--stream"])
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{uri}/v1"))
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &uri)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reading = tokio::spawn(async move {
        let mut out = String::new();
        stdout.read_to_string(&mut out).await.map(|_| out)
    });
    // stderr read as it comes: the good plan's first bytes show while its response is still
    // being sent.
    let header = "--- [plan_generator_agent] streaming ---\n";
    let mut err = Vec::new();
    let mut seen_while_streaming = None;
    let mut buffer = [0u8; 4096];
    loop {
        let read = stderr.read(&mut buffer).await.unwrap();
        if read == 0 {
            break;
        }
        err.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&err);
        // The second plan-generator answer (the first one is the broken plan).
        if seen_while_streaming.is_none()
            && let Some(second) = text.match_indices(header).nth(1)
            && text[second.0 + header.len()..].starts_with(&plan_text()[..40])
        {
            let log = sent.lock().unwrap();
            seen_while_streaming = Some(!log[broken_at + 1].finished.load(Ordering::SeqCst));
        }
    }
    let status = child.wait().await.unwrap();
    let stdout = reading.await.unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&err).into_owned();
    assert!(status.success(), "{stdout}\n{stderr}");

    // The broken plan's connection closed before a quarter of it was sent.
    let log = sent.lock().unwrap();
    assert_eq!(log.len(), replies.len(), "one request per reply");
    let broken = &log[broken_at];
    let broken_sent = broken.text.load(Ordering::SeqCst);
    println!(
        "{provider}: {broken_sent} of {} bytes of the broken plan sent",
        broken_plan().len()
    );
    assert!(!broken.finished.load(Ordering::SeqCst));
    assert!(
        broken_sent * 4 < broken_plan().len(),
        "{broken_sent} of {} bytes sent",
        broken_plan().len()
    );
    // Every other response was read to its end.
    let whole = log
        .iter()
        .enumerate()
        .filter(|(i, s)| *i != broken_at && s.finished.load(Ordering::SeqCst));
    assert_eq!(whole.count(), replies.len() - 1);

    // The good plan was printed while it streamed, after the broken one's stop.
    assert_eq!(seen_while_streaming, Some(true), "{stderr}");
    assert!(
        stderr.contains("--- [plan_generator_agent] stopped after 16 bytes: \"d…\" is not one of \"success\", \"partial\" or \"failed\" ---"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{header}{}\n--- [plan_generator_agent] done ---",
            plan_text()
        )),
        "{stderr}"
    );

    // The same plan as without `--stream`; the stop in the transcript; the streamed tokens.
    assert!(
        stdout
            .contains("=== [main_agent] assistant ===\nThe crawl plan is written to plans/login_form_automation.md"),
        "{stdout}"
    );
    assert!(
        stdout.contains("=== [plan_generator_agent] answer stopped after 16 bytes (byte 15 broke the output contract) ==="),
        "{stdout}"
    );
    assert!(stdout.contains(summary), "{stdout}");
}

/// OpenAI reports usage in a stream's last chunk: the stopped answer counts none.
#[tokio::test]
async fn chat_completions_streams_stop_a_broken_plan_early() {
    streamed_story(
        "openai",
        "/v1/chat/completions",
        openai_events,
        "=== summary ===\n11 model calls, 1 input retry, 1 output retry; 1000 input tokens (0 cached), 100 output tokens\n1 streamed answer stopped early, after 16 bytes in all",
    )
    .await;
}

/// Anthropic reports the input tokens when the message starts: the stopped answer counts
/// those and its first output token.
#[tokio::test]
async fn messages_streams_stop_a_broken_plan_early() {
    streamed_story(
        "anthropic",
        "/v1/messages",
        anthropic_events,
        "=== summary ===\n11 model calls, 1 input retry, 1 output retry; 1100 input tokens (0 cached), 101 output tokens\n1 streamed answer stopped early, after 16 bytes in all",
    )
    .await;
}
