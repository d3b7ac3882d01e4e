//! The text of a `tools/call`'s arguments, as the client wrote it.
//!
//! rmcp parses every message into serde_json values, and serde_json (with none of its optional
//! features, which this workspace leaves off on purpose) sorts an object's keys and keeps a
//! number as `f64`, `i64` or `u64`: `{"b": 0.60, "a": 1e5}` comes back as
//! `{"a":100000.0,"b":0.6}`. An untyped part of an agent's contract is rendered into the
//! prompt from its text, so the server reads that text beside rmcp, from the same bytes:
//!
//! - over streamable HTTP, [`tap_http`] reads a `POST`'s body (within a bound), finds the
//!   `params.arguments` of a `tools/call` with [`tools_call_arguments`], and puts it in the
//!   request's extensions as [`RawArguments`]; rmcp then hands the handler the request's
//!   [`http::request::Parts`](axum::http::request::Parts), extensions included. The text comes
//!   from the very body rmcp parses, so it needs no key;
//! - over stdio (or any line-delimited stream), [`Tap`] wraps the reader rmcp reads from: it
//!   sees each line before rmcp's codec does, and keeps the arguments of each `tools/call` in
//!   [`Pending`] under the JSON-RPC id, which the handler takes back by its request's id. Ids
//!   are the client's to choose (and to reuse), so the handler uses the text only when it
//!   parses to exactly the map rmcp gave it ([`Pending::take`]).
//!
//! Whatever the tap cannot read (a message past the bound, text that is not one JSON-RPC
//! object, arguments that are not an object) passes to rmcp untouched, which answers as it
//! always does; the call then reaches the agent as rmcp parsed it, re-serialized (sorted keys,
//! `0.6` for `0.60`). So does a call made to the server in-process, with no transport to read.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use futures_util::StreamExt as _;
use rmcp::model::{JsonObject, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};

/// The room a `tools/call` message may take around its arguments (the JSON-RPC envelope, the
/// tool's name, `_meta`) and still have its arguments' text read: the transports read at most
/// [`Limits::max_bytes`](agent_core::Limits) of the server's config plus this much of one
/// message. Arguments beyond `max_bytes` are refused by the input contract anyway.
pub const MAX_ENVELOPE_BYTES: usize = 64 * 1024;

/// Calls whose arguments the stdio tap keeps at once, waiting for their handler. A handler
/// takes its call's text as it starts, so only calls rmcp never hands over (refused, or
/// cancelled before they start) linger; past this bound the oldest is forgotten, and that
/// call, if it ever starts, gets rmcp's map.
pub const MAX_PENDING_CALLS: usize = 64;

/// A `tools/call`'s `params.arguments` text, as it came over HTTP.
#[derive(Clone, Debug)]
pub(crate) struct RawArguments(pub(crate) Arc<str>);

/// The parts of a JSON-RPC message the tap reads; everything else is skipped unparsed.
#[derive(Deserialize)]
struct Message<'a> {
    id: Option<RequestId>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// A `tools/call`'s params: only the arguments' text.
#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// The id and the `params.arguments` text of `message` when it is one JSON-RPC `tools/call`
/// request whose arguments are an object; `None` for anything else (a batch, which rmcp does
/// not take either, a notification, invalid JSON).
pub(crate) fn tools_call_arguments(message: &[u8]) -> Option<(RequestId, &str)> {
    // rmcp skips a UTF-8 byte order mark before a line's message.
    let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
    let message: Message<'_> = serde_json::from_slice(message).ok()?;
    if message.method.as_deref() != Some("tools/call") {
        return None;
    }
    let params: Params<'_> = serde_json::from_str(message.params?.get()).ok()?;
    let arguments = params.arguments?.get();
    arguments
        .starts_with('{')
        .then_some((message.id?, arguments))
}

/// Streamable HTTP: reads a `POST` body of at most `max` bytes and, when it is a `tools/call`,
/// puts its arguments' text in the request's extensions as [`RawArguments`]. Every body goes
/// on to rmcp byte for byte, read or not: a longer one (by its `Content-Length`, or once more
/// than `max` bytes have come) is passed on as a stream, what was read first and then the rest.
pub(crate) async fn tap_http(
    State((max, timeout)): State<(usize, Duration)>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let mut stream = body.into_data_stream();
    let mut read: Vec<u8> = Vec::new();
    // The body must arrive within `timeout` of the headers: a client that announces a body
    // and stalls holds the connection no longer.
    let reading = async {
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(chunk) if read.len() + chunk.len() <= max => read.extend_from_slice(&chunk),
                // Too long for the tap: rmcp reads it whole, or answers that it is too long.
                Ok(chunk) => return Some(Ok(chunk)),
                // A broken body: rmcp meets the same error where it occurred.
                Err(error) => return Some(Err(error)),
            }
        }
        None
    };
    let unread = match tokio::time::timeout(timeout, reading).await {
        Ok(unread) => unread,
        Err(_) => {
            tracing::warn!(?timeout, "a request body did not arrive in time");
            return (
                StatusCode::REQUEST_TIMEOUT,
                "Request Timeout: the body did not arrive in time",
            )
                .into_response();
        }
    };
    if let Some(unread) = unread {
        let head = futures_util::stream::iter([Ok(Bytes::from(read)), unread]);
        let body = Body::from_stream(head.chain(stream));
        return next.run(Request::from_parts(parts, body)).await;
    }
    if let Some((_, arguments)) = tools_call_arguments(&read) {
        parts.extensions.insert(RawArguments(arguments.into()));
    }
    next.run(Request::from_parts(parts, Body::from(read))).await
}

/// The arguments' text of the `tools/call`s a stdio tap has seen whose handler has not yet
/// started, oldest first: at most [`MAX_PENDING_CALLS`] of them, and at most four messages'
/// worth of bytes.
pub(crate) struct Pending {
    calls: Mutex<PendingCalls>,
    max_bytes: usize,
}

#[derive(Default)]
struct PendingCalls {
    calls: VecDeque<(RequestId, Arc<str>)>,
    bytes: usize,
}

impl Pending {
    /// Room for calls of up to `max_message` bytes each.
    pub(crate) fn new(max_message: usize) -> Self {
        Self {
            calls: Mutex::new(PendingCalls::default()),
            max_bytes: max_message.saturating_mul(4),
        }
    }

    fn put(&self, id: RequestId, arguments: &str) {
        let mut pending = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        while pending.calls.len() >= MAX_PENDING_CALLS
            || (!pending.calls.is_empty() && pending.bytes + arguments.len() > self.max_bytes)
        {
            if let Some((_, old)) = pending.calls.pop_front() {
                pending.bytes -= old.len();
            }
        }
        pending.bytes += arguments.len();
        pending.calls.push_back((id, Arc::from(arguments)));
    }

    /// The text of the oldest call with `id` that parses to `arguments` (rmcp's map of the
    /// call the handler runs), taken out. Ids are the client's: one that reuses an id, or a
    /// line rmcp refused, then leaves each handler its own call's text, or rmcp's map, never
    /// another call's text. The parse runs outside the lock, so the reader is not held up.
    pub(crate) fn take(&self, id: &RequestId, arguments: Option<&JsonObject>) -> Option<String> {
        let arguments = arguments?;
        let mut skip = 0;
        loop {
            let text = {
                let pending = self.calls.lock().unwrap_or_else(|e| e.into_inner());
                let (_, text) = pending
                    .calls
                    .iter()
                    .filter(|(seen, _)| seen == id)
                    .nth(skip)?;
                text.clone()
            };
            let parsed: Option<JsonObject> = serde_json::from_str(&text).ok();
            if parsed.as_ref() == Some(arguments) {
                let mut pending = self.calls.lock().unwrap_or_else(|e| e.into_inner());
                let at = pending
                    .calls
                    .iter()
                    .position(|(_, kept)| Arc::ptr_eq(kept, &text))?;
                pending.calls.remove(at);
                pending.bytes -= text.len();
                return Some(text.to_string());
            }
            skip += 1;
        }
    }
}

/// A reader that lets rmcp read every byte of a line-delimited stream unchanged and, at each
/// line's end, keeps the arguments' text of a `tools/call` in [`Pending`] (lines longer than
/// `max` bytes are not kept, only passed on). Like rmcp, it takes a message only at its
/// newline: the bytes after the last one, at the stream's end, are no message.
pub(crate) struct Tap<R> {
    inner: R,
    pending: Arc<Pending>,
    line: Vec<u8>,
    /// The current line has outgrown `max`: skipped up to its newline.
    skipping: bool,
    max: usize,
}

impl<R> Tap<R> {
    pub(crate) fn new(inner: R, pending: Arc<Pending>, max: usize) -> Self {
        Self {
            inner,
            pending,
            line: Vec::new(),
            skipping: false,
            max,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while let Some(newline) = bytes.iter().position(|b| *b == b'\n') {
            self.push(&bytes[..newline]);
            self.end_line();
            bytes = &bytes[newline + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.skipping || bytes.is_empty() {
            return;
        }
        if self.line.len() + bytes.len() > self.max {
            self.skipping = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self) {
        if !self.skipping
            && let Some((id, arguments)) = tools_call_arguments(&self.line)
        {
            self.pending.put(id, arguments);
        }
        self.skipping = false;
        self.line.clear();
        // A long call's buffer is not kept for the short messages after it.
        if self.line.capacity() > MAX_ENVELOPE_BYTES {
            self.line = Vec::new();
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let start = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.scan(&buf.filled()[start..]);
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_a","arguments":{"z": 0.60, "a": 1e5}}}"#;

    #[test]
    fn the_arguments_of_a_tools_call_are_read_as_written() {
        let (id, text) = tools_call_arguments(CALL.as_bytes()).unwrap();
        assert_eq!(id, RequestId::Number(7));
        assert_eq!(text, r#"{"z": 0.60, "a": 1e5}"#);
        // An escaped method name and a string id are read too.
        let escaped = r#"{"params":{"arguments":{"b":1}},"method":"tools\/call","id":"x"}"#;
        let (id, text) = tools_call_arguments(escaped.as_bytes()).unwrap();
        assert_eq!(id, RequestId::String("x".into()));
        assert_eq!(text, r#"{"b":1}"#);
    }

    #[test]
    fn anything_else_is_left_to_rmcp() {
        for message in [
            "",
            "not json",
            &format!("[{CALL}]"),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"id":1,"method":"tools/call","method":"tools/call","params":{"arguments":{}}}"#,
        ] {
            assert!(
                tools_call_arguments(message.as_bytes()).is_none(),
                "{message}"
            );
        }
    }

    /// Gives at most `step` bytes a read, so lines arrive cut anywhere.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl AsyncRead for Trickle<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = self.step.min(self.bytes.len()).min(buf.remaining());
            buf.put_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn the_stdio_tap_passes_every_byte_and_keeps_each_calls_text() {
        let other = CALL
            .replace(r#""id":7"#, r#""id":8"#)
            .replace("0.60", "0.000001");
        let long = CALL
            .replace(r#""id":7"#, r#""id":9"#)
            .replace("0.60", &format!("0.60{}", " ".repeat(400)));
        let last = CALL.replace(r#""id":7"#, r#""id":10"#);
        let stream = format!(
            "{CALL}\r\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n{long}\n\u{feff}{other}\n{last}"
        );
        for step in [1, 3, 64, 4096] {
            let pending = Arc::new(Pending::new(300));
            let mut tap = Tap::new(
                Trickle {
                    bytes: stream.as_bytes(),
                    step,
                },
                pending.clone(),
                300,
            );
            let mut passed = String::new();
            tap.read_to_string(&mut passed).await.unwrap();
            assert_eq!(passed, stream);
            let map = |text: &str| serde_json::from_str::<JsonObject>(text).unwrap();
            let seven = map(r#"{"z": 0.6, "a": 100000.0}"#);
            assert_eq!(
                pending.take(&RequestId::Number(7), Some(&seven)).as_deref(),
                Some(r#"{"z": 0.60, "a": 1e5}"#)
            );
            // Taken once.
            assert_eq!(pending.take(&RequestId::Number(7), Some(&seven)), None);
            // The long line was passed on, not kept.
            assert_eq!(pending.take(&RequestId::Number(9), Some(&seven)), None);
            let eight = map(r#"{"z": 1e-6, "a": 1e5}"#);
            assert_eq!(
                pending.take(&RequestId::Number(8), Some(&eight)).as_deref(),
                Some(r#"{"z": 0.000001, "a": 1e5}"#)
            );
            // Bytes with no newline after them are no message.
            let ten = seven.clone();
            assert_eq!(pending.take(&RequestId::Number(10), Some(&ten)), None);
        }
    }

    #[test]
    fn a_calls_text_is_used_only_for_the_map_rmcp_parsed() {
        let pending = Pending::new(1_000);
        // A client that reuses an id: the second call's handler starts first.
        pending.put(RequestId::Number(1), r#"{"a": 1.50}"#);
        pending.put(RequestId::Number(1), r#"{"b": 2}"#);
        let first = serde_json::from_str::<JsonObject>(r#"{"a": 1.5}"#).unwrap();
        let second = serde_json::from_str::<JsonObject>(r#"{"b": 2}"#).unwrap();
        assert_eq!(
            pending
                .take(&RequestId::Number(1), Some(&second))
                .as_deref(),
            Some(r#"{"b": 2}"#)
        );
        assert_eq!(
            pending.take(&RequestId::Number(1), Some(&first)).as_deref(),
            Some(r#"{"a": 1.50}"#)
        );
        assert_eq!(pending.take(&RequestId::Number(1), Some(&first)), None);
        // A call rmcp parsed differently from what the tap kept keeps rmcp's map.
        pending.put(RequestId::Number(4), r#"{"a": 1}"#);
        assert_eq!(pending.take(&RequestId::Number(4), Some(&second)), None);
        // Duplicate keys parse to the last one's map, as rmcp's does: the text goes on, and
        // the contract path judges it.
        pending.put(RequestId::Number(2), r#"{"b": 1, "b": 2}"#);
        assert!(pending.take(&RequestId::Number(2), Some(&second)).is_some());
        assert_eq!(pending.take(&RequestId::Number(3), None), None);
    }

    #[test]
    fn pending_calls_are_bounded() {
        let pending = Pending::new(1_000);
        for id in 0..(MAX_PENDING_CALLS as i64 + 5) {
            pending.put(RequestId::Number(id), "{}");
        }
        let empty = JsonObject::new();
        assert_eq!(pending.take(&RequestId::Number(0), Some(&empty)), None);
        assert_eq!(
            pending.take(&RequestId::Number(5), Some(&empty)).as_deref(),
            Some("{}")
        );
        // Bytes too: four messages' worth.
        let pending = Pending::new(10);
        let text = "{\"a\":\"12\"}";
        for id in 0..5 {
            pending.put(RequestId::Number(id), text);
        }
        assert_eq!(pending.take(&RequestId::Number(0), Some(&empty)), None);
        let map = serde_json::from_str::<JsonObject>(text).unwrap();
        assert!(pending.take(&RequestId::Number(1), Some(&map)).is_some());
        assert!(pending.take(&RequestId::Number(4), Some(&map)).is_some());
    }
}
