//! How a run's answers arrive: whole, or streamed, checked against their output contract as
//! they stream and shown to a [`Watch`] as they come.

use crate::chat::StreamDelta;
use agent_contracts_contract::RetryError;
use std::fmt;
use std::sync::Arc;

/// How the models of a run deliver their answers ([`Config::delivery`](crate::Config::delivery)).
///
/// Streamed, each model call goes through [`ChatModel::stream`](crate::ChatModel::stream): a
/// sub-agent's answer is checked against its output contract as it arrives, and the moment the
/// text received can no longer pass, the stream is closed (no more tokens are paid for) and the
/// agent is sent the retry error built from what it wrote, as for any broken answer. A
/// [`Watch`] sees every delta, to show the answer while it is written.
///
/// ```
/// use agent_contracts::{Config, stream::Delivery, stream::StreamEvent};
///
/// let config = Config::default().with_delivery(Delivery::watched(|event: StreamEvent<'_>| {
///     if let StreamEvent::Text { text, .. } = event {
///         eprint!("{text}");
///     }
/// }));
/// assert!(config.delivery.is_streamed());
/// assert!(!Config::default().delivery.is_streamed());
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Delivery {
    /// Each answer whole ([`ChatModel::complete`](crate::ChatModel::complete)): the default.
    #[default]
    Whole,
    /// Each answer streamed, its contract checked as it arrives, shown to the watch.
    Streamed(Arc<dyn Watch>),
}

impl Delivery {
    /// Streamed, with no one watching: the contract is still checked as answers arrive.
    pub fn streamed() -> Self {
        Self::Streamed(Arc::new(|_: StreamEvent<'_>| {}))
    }

    /// Streamed, each event handed to `watch`.
    pub fn watched(watch: impl Watch + 'static) -> Self {
        Self::Streamed(Arc::new(watch))
    }

    /// Whether answers stream.
    pub fn is_streamed(&self) -> bool {
        matches!(self, Self::Streamed(_))
    }

    /// The watch of a streamed delivery, shared.
    pub(crate) fn watch_arc(&self) -> Option<Arc<dyn Watch>> {
        match self {
            Self::Whole => None,
            Self::Streamed(watch) => Some(watch.clone()),
        }
    }

    /// The watch of a streamed delivery.
    pub(crate) fn watch(&self) -> Option<&dyn Watch> {
        match self {
            Self::Whole => None,
            Self::Streamed(watch) => Some(&**watch),
        }
    }
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Whole => "Whole",
            Self::Streamed(_) => "Streamed",
        })
    }
}

/// What happens to an answer while it streams, as a [`Watch`] sees it. The agents of one
/// model turn may answer at the same time: each event names its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent<'a> {
    /// More of `agent`'s answer.
    Text {
        /// Who is answering.
        agent: &'a str,
        /// The text, to append to what came before.
        text: &'a str,
    },
    /// More of `agent`'s reasoning (never part of the answer).
    Thinking {
        /// Who is answering.
        agent: &'a str,
        /// The reasoning text.
        text: &'a str,
    },
    /// `agent`'s answer can no longer pass its output contract: the stream was closed after
    /// `received` bytes, and the agent is asked again with `error`.
    Stopped {
        /// Who was answering.
        agent: &'a str,
        /// Bytes of the answer received before the stream was closed.
        received: usize,
        /// The retry error the agent is sent.
        error: &'a RetryError,
    },
    /// `agent`'s stream was cut after `received` bytes (the connection broke, or the body
    /// ended before the provider's last event) and is asked again from the start: drop what
    /// it showed so far.
    Cut {
        /// Who was answering.
        agent: &'a str,
        /// Bytes of the answer received before the cut.
        received: usize,
    },
    /// `agent`'s answer is complete (it may still be refused by the whole-answer check).
    Done {
        /// Who answered.
        agent: &'a str,
    },
}

/// Sees the answers of a streamed run as they arrive ([`Delivery::Streamed`]). Called from
/// the run's task between reads of the stream: keep it short (print, send on a channel).
///
/// Any `Fn(StreamEvent<'_>) + Send + Sync` closure is a watch.
pub trait Watch: Send + Sync {
    /// One event of an answer.
    fn event(&self, event: StreamEvent<'_>);
}

impl<F: Fn(StreamEvent<'_>) + Send + Sync> Watch for F {
    fn event(&self, event: StreamEvent<'_>) {
        self(event)
    }
}

/// The event a model's delta is for `agent`.
pub(crate) fn delta_event<'a>(agent: &'a str, delta: StreamDelta<'a>) -> StreamEvent<'a> {
    match delta {
        StreamDelta::Text(text) => StreamEvent::Text { agent, text },
        StreamDelta::Thinking(text) => StreamEvent::Thinking { agent, text },
    }
}
