//! A response body read as server-sent events by `sse-stream`, within bounds: a body of at
//! most [`MAX_BODY_BYTES`] and events of at most [`MAX_EVENT_BYTES`] of data. A transport
//! failure, a timeout, a body over a bound or a line that is not SSE becomes a
//! [`ModelError`]; dropping the reader drops the response, which closes the connection.

use crate::http::{MAX_BODY_BYTES, transport_error};
use agent_contracts_runtime::model::ModelError;
use futures_util::{Stream, StreamExt as _};
use sse_stream::{Sse, SseStream};
use std::pin::Pin;

/// Most bytes of data one event may carry: a chunk of a chat answer is a few hundred bytes;
/// a tool call's arguments come in many.
pub(crate) const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// A failure while reading the body, carried through `sse-stream` (which wants a
/// `std::error::Error`) and taken back out on the other side.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ReadError(ModelError);

type Events = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// The events of one response, in order.
pub(crate) struct EventReader {
    events: Events,
    shown: String,
}

impl EventReader {
    /// Reads `response`'s body; `shown` is its URL as errors show it.
    pub fn new(response: reqwest::Response, shown: String) -> Self {
        let bytes = futures_util::stream::unfold(
            (response, 0usize, shown.clone()),
            |(mut response, total, shown)| async move {
                let chunk = match response.chunk().await {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => return None,
                    Err(e) => {
                        let error = ReadError(transport_error(e, &shown));
                        return Some((Err(error), (response, total, shown)));
                    }
                };
                let total = total + chunk.len();
                if total > MAX_BODY_BYTES {
                    let error = ReadError(ModelError::Malformed(format!(
                        "the event stream is larger than {MAX_BODY_BYTES} bytes"
                    )));
                    return Some((Err(error), (response, total, shown)));
                }
                Some((Ok(chunk), (response, total, shown)))
            },
        );
        Self {
            events: Box::pin(SseStream::from_bytes_stream(bytes)),
            shown,
        }
    }

    /// The next event with data, or `None` at the end of the body. Comments and events
    /// without data (keep-alives) are skipped.
    pub async fn next(&mut self) -> Result<Option<Sse>, ModelError> {
        loop {
            let event = match self.events.next().await {
                None => return Ok(None),
                Some(Ok(event)) => event,
                Some(Err(sse_stream::Error::Body(error))) => {
                    return Err(match error.downcast::<ReadError>() {
                        Ok(read) => read.0,
                        Err(other) => ModelError::Transport(format!("{}: {other}", self.shown)),
                    });
                }
                Some(Err(error)) => {
                    return Err(ModelError::Malformed(format!(
                        "the response is not an event stream ({error})"
                    )));
                }
            };
            match &event.data {
                None => continue,
                Some(data) if data.len() > MAX_EVENT_BYTES => {
                    return Err(ModelError::Malformed(format!(
                        "an event carries more than {MAX_EVENT_BYTES} bytes of data"
                    )));
                }
                Some(_) => return Ok(Some(event)),
            }
        }
    }

    /// The error for a body that ended before the provider's last event.
    pub fn cut(&self, what: &str) -> ModelError {
        ModelError::Transport(format!(
            "POST {}: the event stream ended before {what}",
            self.shown
        ))
    }
}

/// A stream's event whose data is not what the provider sends: what was expected, and the
/// start of the data.
pub(crate) fn malformed_event(what: &str, data: &str) -> ModelError {
    ModelError::Malformed(format!(
        "{what}; the event's data starts: {}",
        agent_contracts_runtime::__private::truncate(data, 200)
    ))
}
