//! A `tools/call` whose HTTP client went away is cancelled: its run stops at the next model or
//! tool call, as when the client sends `notifications/cancelled`, instead of spending the
//! model account's tokens on an answer no one reads.
//!
//! rmcp runs a call's handler apart from the response stream that carries its answer, so a
//! dropped connection alone does not reach the handler. This layer gives each request a token,
//! cancelled when the response stream of a call in progress (`text/event-stream`) is dropped
//! before its end; the handler finds the token in the request's parts.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt as _;
use tokio_util::sync::CancellationToken;

/// Cancelled when the client of the request stopped listening for its answer.
#[derive(Clone)]
pub(crate) struct Disconnect(pub(crate) CancellationToken);

pub(crate) async fn watch(request: Request, next: Next) -> Response {
    let token = CancellationToken::new();
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(Disconnect(token.clone()));
    let response = next.run(Request::from_parts(parts, body)).await;
    let streaming = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if !streaming {
        return response;
    }
    let (parts, body) = response.into_parts();
    // The guard lives as long as the stream: hyper drops it when the connection closes, and
    // after the stream's end nothing listens to the token any more.
    let guard = token.drop_guard();
    let body = body.into_data_stream().map(move |chunk| {
        let _alive = &guard;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}
