//! The connections the HTTP server holds: at most [`HttpSettings::max_connections`]
//! (crate::HttpSettings::max_connections), and when that many are open, the oldest one with no
//! request in flight makes room for a new one.
//!
//! A bound alone lets a slow-loris client take every slot: 1,100 connections that send their
//! headers a byte at a time, each held until the header timeout, leave none for a real client.
//! A connection with no request in flight (silent, slow with its headers, or idle between
//! requests) costs its client nothing to open again, so it is the one to close; a connection
//! whose request is being served (its body read, its call run, its answer streamed) is never
//! closed to make room. A new connection is refused only when every slot is serving a request.

use axum::body::{Body, Bytes, HttpBody};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio_util::sync::CancellationToken;

/// The open connections, in the order they were accepted.
pub(crate) struct Connections {
    max: usize,
    open: Mutex<BTreeMap<u64, Open>>,
    next: AtomicU64,
}

struct Open {
    /// Requests in flight on the connection.
    busy: Arc<AtomicUsize>,
    /// Cancelled to close the connection.
    close: CancellationToken,
}

/// One connection's place in the table, given back when the connection ends.
pub(crate) struct Slot {
    id: u64,
    connections: Arc<Connections>,
    /// Requests in flight on the connection ([`Busy`] counts them).
    pub(crate) busy: Arc<AtomicUsize>,
    /// Cancelled when the connection is closed to make room.
    pub(crate) close: CancellationToken,
}

impl Connections {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            open: Mutex::default(),
            next: AtomicU64::new(0),
        })
    }

    /// A slot for a new connection: a free one, or the oldest idle connection's, which is
    /// closed; `None` when every connection is serving a request.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= self.max {
            let idle = open
                .iter()
                .find(|(_, c)| c.busy.load(Ordering::SeqCst) == 0)
                .map(|(id, _)| *id)?;
            if let Some(closed) = open.remove(&idle) {
                tracing::debug!("closed an idle connection to make room for a new one");
                closed.close.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = Slot {
            id,
            connections: self.clone(),
            busy: Arc::default(),
            close: CancellationToken::new(),
        };
        open.insert(
            id,
            Open {
                busy: slot.busy.clone(),
                close: slot.close.clone(),
            },
        );
        Some(slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .connections
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        open.remove(&self.id);
    }
}

/// A request in flight: counted from its headers until its response body ends or is dropped.
pub(crate) struct Busy(Arc<AtomicUsize>);

impl Busy {
    pub(crate) fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that keeps its request counted as in flight while it is sent.
pub(crate) struct Held {
    body: Body,
    _busy: Busy,
}

impl Held {
    pub(crate) fn new(body: Body, busy: Busy) -> Self {
        Self { body, _busy: busy }
    }
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_idle_connection_makes_room_and_a_busy_one_never_does() {
        let connections = Connections::new(2);
        let first = connections.admit().unwrap();
        let second = connections.admit().unwrap();
        let serving = Busy::new(&first.busy);
        // The first is serving a request: the second, idle, is closed for the third.
        let third = connections.admit().unwrap();
        assert!(!first.close.is_cancelled());
        assert!(second.close.is_cancelled());
        // Both open ones busy: a fourth is refused.
        let also_serving = Busy::new(&third.busy);
        assert!(connections.admit().is_none());
        // A request done, its connection is idle again, and the oldest such.
        drop(serving);
        let fourth = connections.admit().unwrap();
        assert!(first.close.is_cancelled());
        assert!(!third.close.is_cancelled());
        // A connection that ends gives its slot back without closing another.
        drop(also_serving);
        drop(fourth);
        let fifth = connections.admit().unwrap();
        assert!(!third.close.is_cancelled());
        drop((first, second, fifth));
    }
}
