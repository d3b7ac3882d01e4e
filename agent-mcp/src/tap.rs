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
//! A message past the bound is refused by the tap itself, with a JSON-RPC error (over HTTP a
//! 413, over stdio an error line: [`Tap`]). Whatever else the tap cannot read (text that is
//! not one JSON-RPC object, arguments that are not an object) passes to rmcp untouched, which
//! answers as it always does; the call then reaches the agent as rmcp parsed it, re-serialized
//! (sorted keys, `0.6` for `0.60`). So does a call made to the server in-process, with no
//! transport to read.

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
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::guard::Client;
use crate::sessions::Bounded;

/// The room a `tools/call` message may take around its arguments (the JSON-RPC envelope, the
/// tool's name, `_meta`) and still have its arguments' text read: the transports read at most
/// [`Limits::max_bytes`](agent_contracts_runtime::Limits) of the server's config plus this much of one
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
    let message: Message<'_> = serde_json::from_slice(bom_stripped(message)).ok()?;
    arguments_of(&message)
}

/// The id and arguments' text of `message` when it is a `tools/call` whose arguments are an
/// object.
fn arguments_of<'a>(message: &Message<'a>) -> Option<(RequestId, &'a str)> {
    if message.method.as_deref() != Some("tools/call") {
        return None;
    }
    let params: Params<'_> = serde_json::from_str(message.params?.get()).ok()?;
    let arguments = params.arguments?.get();
    arguments
        .starts_with('{')
        .then_some((message.id.clone()?, arguments))
}

/// What the HTTP tap reads a body within: the longest message, the time it may take, and the
/// bytes all bodies read at once may hold; and the sessions, whose bound an `initialize` meets
/// here first.
#[derive(Clone)]
pub(crate) struct Intake {
    pub(crate) max: usize,
    pub(crate) timeout: Duration,
    /// One permit a byte held, over every request being read.
    pub(crate) budget: Arc<Semaphore>,
    pub(crate) sessions: Option<Arc<Bounded>>,
}

impl Intake {
    pub(crate) fn new(
        max: usize,
        timeout: Duration,
        max_buffered: usize,
        sessions: Option<Arc<Bounded>>,
    ) -> Self {
        // One message of the largest size always fits, whatever the bound says.
        let permits = max_buffered.max(max).min(Semaphore::MAX_PERMITS);
        Self {
            max,
            timeout,
            budget: Arc::new(Semaphore::new(permits)),
            sessions,
        }
    }

    /// Permits for `bytes` more bytes, now or never: a server out of room says so at once.
    fn hold(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let bytes = u32::try_from(bytes).ok()?;
        self.budget.clone().try_acquire_many_owned(bytes).ok()
    }
}

/// Streamable HTTP: reads a `POST` body of at most `max` bytes, within the time and the
/// shared byte budget of [`Intake`], and hands it to rmcp whole. A `tools/call`'s arguments
/// text goes in the request's extensions as [`RawArguments`]. What rmcp would answer with a
/// bare status (a body too long, or that is not JSON-RPC) gets a JSON-RPC error here, as does
/// a body that does not fit the budget (503) or an `initialize` past the session bound (503).
pub(crate) async fn tap_http(
    State(intake): State<Intake>,
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
    let max = intake.max;
    if declared.is_some_and(|n| n > max as u64) {
        // Only the start is read, for the id the client waits on its answer under.
        let mut stream = body.into_data_stream();
        let mut head = Vec::new();
        let reading = async {
            while head.len() < ID_SCAN_BYTES
                && let Some(Ok(chunk)) = stream.next().await
            {
                head.extend_from_slice(&chunk[..chunk.len().min(ID_SCAN_BYTES - head.len())]);
            }
        };
        // A second at most: the refusal does not wait on a client that sends nothing.
        let wait = intake.timeout.min(Duration::from_secs(1));
        let _ = tokio::time::timeout(wait, reading).await;
        return too_large(max, leading_id(&head));
    }
    // A body of known length holds its bytes before it is read; one sent in chunks, as each
    // chunk comes.
    let mut held = match declared {
        Some(n) => match intake.hold(n as usize) {
            Some(permit) => Some(permit),
            None => return busy(),
        },
        None => None,
    };
    let mut stream = body.into_data_stream();
    let mut read: Vec<u8> = Vec::new();
    // The body must arrive within `timeout` of the headers: a client that announces a body
    // and stalls holds the connection no longer.
    let reading = async {
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|_| Refusal::Broken)?;
            if read.len() + chunk.len() > max {
                return Err(Refusal::TooLarge);
            }
            let within = read.len() + chunk.len() <= declared.unwrap_or(0) as usize;
            if !within {
                match (intake.hold(chunk.len()), held.as_mut()) {
                    (Some(more), Some(permit)) => permit.merge(more),
                    (Some(more), None) => held = Some(more),
                    (None, _) => return Err(Refusal::Busy),
                }
            }
            read.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(intake.timeout, reading).await {
        Ok(Ok(())) => {}
        Ok(Err(Refusal::TooLarge)) => return too_large(max, leading_id(&read)),
        Ok(Err(Refusal::Busy)) => return busy(),
        Ok(Err(Refusal::Broken)) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                "the request body broke off",
                None,
            );
        }
        Err(_) => {
            tracing::warn!(timeout = ?intake.timeout, "a request body did not arrive in time");
            return rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                INVALID_REQUEST,
                "the request body did not arrive in time",
                None,
            );
        }
    }
    let message: Option<Message<'_>> = serde_json::from_slice(bom_stripped(&read)).ok();
    if let (Some(sessions), Some(message)) = (&intake.sessions, &message)
        && message.method.as_deref() == Some("initialize")
        && !parts.headers.contains_key("mcp-session-id")
    {
        let client = parts
            .extensions
            .get::<Client>()
            .copied()
            .unwrap_or(Client::Anyone);
        if let Err(full) = sessions.room_for(client).await {
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_BUSY,
                &full.to_string(),
                message.id.clone(),
            );
        }
    }
    if let Some((_, arguments)) = message.as_ref().and_then(arguments_of) {
        parts.extensions.insert(RawArguments(arguments.into()));
    }
    drop(message);
    let json_body = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    let read = Bytes::from(read);
    let response = next
        .run(Request::from_parts(parts, Body::from(read.clone())))
        .await;
    drop(held);
    // rmcp answers a JSON body it cannot take as a JSON-RPC message with a bare 415.
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE && json_body {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(bom_stripped(&read)) {
            Err(error) => rpc_error(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                &format!("the body is not JSON: {error}"),
                leading_id(&read),
            ),
            Ok(_) => rpc_error(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "the body is not a JSON-RPC 2.0 request, notification or response the server takes (one object with `jsonrpc: \"2.0\"`, a `method` it knows and well-formed `params`)",
                message_id(&read),
            ),
        };
    }
    response
}

/// Why the tap did not read a body to its end.
enum Refusal {
    TooLarge,
    Busy,
    Broken,
}

/// JSON-RPC's code for text that is not JSON.
pub(crate) const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's code for JSON that is not a request the server takes.
pub(crate) const INVALID_REQUEST: i32 = -32600;
/// A server error (JSON-RPC leaves -32000 to -32099 to servers): no room now, try later.
pub(crate) const SERVER_BUSY: i32 = -32000;

/// A JSON-RPC error response, as the body of an HTTP refusal.
pub(crate) fn rpc_error(
    status: StatusCode,
    code: i32,
    message: &str,
    id: Option<RequestId>,
) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    }
    response
}

fn too_large(max: usize, id: Option<RequestId>) -> Response {
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        INVALID_REQUEST,
        &format!("the message is too large: the server reads at most {max} bytes"),
        id,
    )
}

/// How much of a message [`leading_id`] looks at.
pub(crate) const ID_SCAN_BYTES: usize = 4096;

/// The id of a message the server cannot parse whole (too long, or not JSON), when its first
/// [`ID_SCAN_BYTES`] name one before any `params`: a client waits for the answer to its
/// request under that id, and an error with a null id answers no request. Clients write
/// `jsonrpc`, `id` and `method` before `params`; an `"id"` after `"params"` may be one of the
/// arguments, so it is not taken.
pub(crate) fn leading_id(message: &[u8]) -> Option<RequestId> {
    let message = &message[..message.len().min(ID_SCAN_BYTES)];
    let find = |needle: &[u8]| message.windows(needle.len()).position(|w| w == needle);
    let at = find(b"\"id\"")?;
    if find(b"\"params\"").is_some_and(|params| params < at) {
        return None;
    }
    let rest = message[at + 4..].trim_ascii_start().strip_prefix(b":")?;
    serde_json::Deserializer::from_slice(rest)
        .into_iter::<RequestId>()
        .next()?
        .ok()
}

fn busy() -> Response {
    tracing::warn!("refused a request body: the bytes held at once are at their bound");
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        SERVER_BUSY,
        "the server is reading as many request bodies as it holds at once; try again shortly",
        None,
    )
}

/// rmcp skips a UTF-8 byte order mark before a message.
fn bom_stripped(message: &[u8]) -> &[u8] {
    message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message)
}

/// The `id` of a JSON object message, when it has a well-formed one.
fn message_id(message: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Id {
        id: Option<RequestId>,
    }
    serde_json::from_slice::<Id>(bom_stripped(message)).ok()?.id
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

/// A reader that hands rmcp a line-delimited stream line by line and, at each line's end,
/// keeps the arguments' text of a `tools/call` in [`Pending`]. A line longer than `max` bytes
/// never reaches rmcp (whose codec would drop a line past 16 MiB unanswered, and parse any
/// shorter one whole): it is skipped to its newline and answered, through `refusals`, with a
/// JSON-RPC error under the id its start names. Like rmcp, it takes a message only at its
/// newline; the bytes after the last one, at the stream's end, go to rmcp as they are.
pub(crate) struct Tap<R> {
    inner: R,
    pending: Arc<Pending>,
    /// The current line, up to `max` bytes.
    line: Vec<u8>,
    /// The current line has outgrown `max`: its start (for its id), and it is skipped up to
    /// its newline.
    skipping: Option<Vec<u8>>,
    /// Whole lines read and not yet handed to rmcp, and how far the first one is handed.
    ready: VecDeque<Vec<u8>>,
    offset: usize,
    max: usize,
    refusals: tokio::sync::mpsc::Sender<Vec<u8>>,
    ended: bool,
}

impl<R> Tap<R> {
    pub(crate) fn new(
        inner: R,
        pending: Arc<Pending>,
        max: usize,
        refusals: tokio::sync::mpsc::Sender<Vec<u8>>,
    ) -> Self {
        Self {
            inner,
            pending,
            line: Vec::new(),
            skipping: None,
            ready: VecDeque::new(),
            offset: 0,
            max,
            refusals,
            ended: false,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while let Some(newline) = bytes.iter().position(|b| *b == b'\n') {
            self.push(&bytes[..=newline]);
            self.end_line();
            bytes = &bytes[newline + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.skipping.is_some() || bytes.is_empty() {
            return;
        }
        if self.line.len() + bytes.len() > self.max {
            let mut head = std::mem::take(&mut self.line);
            head.extend_from_slice(&bytes[..bytes.len().min(ID_SCAN_BYTES)]);
            head.truncate(ID_SCAN_BYTES);
            self.skipping = Some(head);
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self) {
        if let Some(head) = self.skipping.take() {
            tracing::warn!(max = self.max, "refused a message past the bound");
            let refusal = serde_json::json!({
                "jsonrpc": "2.0",
                "id": leading_id(&head),
                "error": {
                    "code": INVALID_REQUEST,
                    "message": format!("the message is too large: the server reads at most {} bytes", self.max),
                },
            });
            let mut line = refusal.to_string().into_bytes();
            line.push(b'\n');
            // A client that floods the server with long lines gets some of its answers.
            let _ = self.refusals.try_send(line);
            return;
        }
        if let Some((id, arguments)) = tools_call_arguments(self.line.trim_ascii_end()) {
            self.pending.put(id, arguments);
        }
        let line = std::mem::take(&mut self.line);
        self.ready.push_back(line);
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if let Some(line) = this.ready.front() {
                let n = (line.len() - this.offset).min(buf.remaining());
                buf.put_slice(&line[this.offset..this.offset + n]);
                this.offset += n;
                if this.offset == line.len() {
                    this.ready.pop_front();
                    this.offset = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut scratch = [0u8; 8 * 1024];
            let mut read = ReadBuf::new(&mut scratch);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // The stream's end: a last line without its newline goes on as it is.
                this.ended = true;
                if this.skipping.is_none() && !this.line.is_empty() {
                    let line = std::mem::take(&mut this.line);
                    this.ready.push_back(line);
                }
                continue;
            }
            let n = read.filled().len();
            this.scan(&scratch[..n]);
        }
    }
}

/// Writes rmcp's output lines and the tap's refusals to `writer`, each line whole, until rmcp
/// closes its side (then the refusals still waiting are written too).
pub(crate) async fn merge<W>(
    from_rmcp: tokio::io::DuplexStream,
    mut refusals: tokio::sync::mpsc::Receiver<Vec<u8>>,
    mut writer: W,
) -> std::io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mut lines = tokio::io::BufReader::new(from_rmcp);
    let mut line = Vec::new();
    loop {
        tokio::select! {
            // `read_until` keeps what it read in `line` when the other branch wins, so no
            // output is lost or cut.
            read = lines.read_until(b'\n', &mut line) => {
                if read? == 0 {
                    break;
                }
                if line.ends_with(b"\n") {
                    writer.write_all(&line).await?;
                    writer.flush().await?;
                    line.clear();
                }
            }
            Some(refusal) = refusals.recv() => {
                writer.write_all(&refusal).await?;
                writer.flush().await?;
            }
        }
    }
    writer.write_all(&line).await?;
    refusals.close();
    while let Some(refusal) = refusals.recv().await {
        writer.write_all(&refusal).await?;
    }
    writer.flush().await
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
    async fn the_stdio_tap_passes_each_line_keeps_each_calls_text_and_refuses_long_ones() {
        let other = CALL
            .replace(r#""id":7"#, r#""id":8"#)
            .replace("0.60", "0.000001");
        let long = CALL
            .replace(r#""id":7"#, r#""id":9"#)
            .replace("0.60", &format!("0.60{}", " ".repeat(400)));
        let last = CALL.replace(r#""id":7"#, r#""id":10"#);
        let initialized = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
        let stream = format!("{CALL}\r\n{initialized}\n{long}\n\u{feff}{other}\n{last}");
        for step in [1, 3, 64, 4096] {
            let pending = Arc::new(Pending::new(300));
            let (refusals, mut refused) = tokio::sync::mpsc::channel(4);
            let mut tap = Tap::new(
                Trickle {
                    bytes: stream.as_bytes(),
                    step,
                },
                pending.clone(),
                300,
                refusals,
            );
            let mut passed = String::new();
            tap.read_to_string(&mut passed).await.unwrap();
            // Every line but the long one, unchanged.
            assert_eq!(
                passed,
                format!("{CALL}\r\n{initialized}\n\u{feff}{other}\n{last}"),
                "{step}"
            );
            // The long one is answered under its id.
            let refusal: serde_json::Value =
                serde_json::from_slice(&refused.try_recv().unwrap()).unwrap();
            assert_eq!(refusal["id"], 9);
            assert_eq!(refusal["error"]["code"], INVALID_REQUEST);
            assert!(refused.try_recv().is_err());
            let map = |text: &str| serde_json::from_str::<JsonObject>(text).unwrap();
            let seven = map(r#"{"z": 0.6, "a": 100000.0}"#);
            assert_eq!(
                pending.take(&RequestId::Number(7), Some(&seven)).as_deref(),
                Some(r#"{"z": 0.60, "a": 1e5}"#)
            );
            // Taken once.
            assert_eq!(pending.take(&RequestId::Number(7), Some(&seven)), None);
            // The long line was not kept.
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
    fn the_id_of_a_message_too_long_or_broken_is_read_from_its_start() {
        let id = |text: &str| leading_id(text.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"#),
            Some(RequestId::Number(12))
        );
        assert_eq!(
            id(r#"{"id" : "abc" ,"method":"x""#),
            Some(RequestId::String("abc".into()))
        );
        assert_eq!(id(r#"{"method":"x","id":3}"#), Some(RequestId::Number(3)));
        // An `"id"` after `"params"` may be an argument's: not taken.
        assert_eq!(id(r#"{"params":{"id":5},"id":6"#), None);
        for none in [
            "",
            "{",
            r#"{"id":"#,
            r#"{"id":[1]"#,
            r#"{"id":1.5,"#,
            r#"{"idx":1}"#,
        ] {
            assert_eq!(id(none), None, "{none}");
        }
        // Only the start is read.
        let late = format!(r#"{{"jsonrpc":"2.0",{}"id":1}}"#, " ".repeat(ID_SCAN_BYTES));
        assert_eq!(id(&late), None);
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
