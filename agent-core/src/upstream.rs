//! Typed upstream context: what an agent receives, part by part, with the agent call that
//! produced each part.
//!
//! ```
//! use agent_contracts::transcript::ContextIdGenerator;
//! use agent_contracts::prompt::UpstreamContext;
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize)]
//! struct Discovery {
//!     page_title: String,
//! }
//!
//! let ids = ContextIdGenerator::new("run-1").unwrap();
//! let id = ids.next("discovery_agent").unwrap();
//! let mut upstream = UpstreamContext::default();
//! upstream.push("discovery_agent", id.clone(), json!({"page_title": "Login"}));
//!
//! let discovery = upstream.get::<Discovery>("discovery_agent").unwrap();
//! assert_eq!(discovery.value.page_title, "Login");
//! assert_eq!(discovery.context_id, id);
//! // The context that goes through the consumer's contract path.
//! assert_eq!(
//!     serde_json::Value::Object(upstream.to_context_map()),
//!     json!({"discovery_agent_output": {"page_title": "Login"}})
//! );
//! ```

use crate::ids::ContextId;
use agent_contracts_contract::RawJson;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One part of an agent's context: the value, the agent that produced it, and the ID of the
/// call that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Upstream<T> {
    /// The producing agent's name.
    pub producer: String,
    /// The producing call.
    pub context_id: ContextId,
    /// What it produced.
    pub value: T,
    /// The output as the model wrote it (its key order, its numbers' text), when known: a
    /// collected item shows it as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<RawJson>,
}

impl<T> Upstream<T> {
    /// A part produced by `producer` in the call `context_id`.
    pub(crate) fn new(producer: impl Into<String>, context_id: ContextId, value: T) -> Self {
        Self {
            producer: producer.into(),
            context_id,
            value,
            written: None,
        }
    }
}

/// A part that is missing or not of the requested type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// No part from that producer.
    #[error("no upstream output from `{producer}`")]
    Missing {
        /// The producer asked for.
        producer: String,
    },
    /// The part does not deserialize into the requested type.
    #[error(
        "upstream output of `{producer}` (context id `{context_id}`) has the wrong shape: {source}"
    )]
    Shape {
        /// The producer.
        producer: String,
        /// The call that produced it.
        context_id: ContextId,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
}

/// Everything an agent receives from upstream agents, in the order it was produced.
///
/// A producer may appear more than once (parallel calls of one agent, or a redo): typed
/// access and the context map use its latest part, [`UpstreamContext::all`] gives every one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UpstreamContext {
    entries: Vec<Upstream<Value>>,
}

impl UpstreamContext {
    /// Records `producer`'s output of the call `context_id`.
    pub fn push(
        &mut self,
        producer: impl Into<String>,
        context_id: ContextId,
        value: Value,
    ) -> &mut Self {
        self.entries
            .push(Upstream::new(producer, context_id, value));
        self
    }

    /// Records `producer`'s output of the call `context_id`, with the text the model wrote
    /// it as (see [`Upstream::written`]).
    pub(crate) fn push_written(
        &mut self,
        producer: impl Into<String>,
        context_id: ContextId,
        value: Value,
        written: Option<RawJson>,
    ) -> &mut Self {
        let mut part = Upstream::new(producer, context_id, value);
        part.written = written;
        self.entries.push(part);
        self
    }

    /// Every part, in the order it was pushed.
    pub fn entries(&self) -> &[Upstream<Value>] {
        &self.entries
    }

    /// Whether there are no parts.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The producer's latest part, as JSON.
    pub(crate) fn latest(&self, producer: &str) -> Option<&Upstream<Value>> {
        self.entries.iter().rev().find(|e| e.producer == producer)
    }

    /// The producer's latest part, typed.
    pub fn get<T: DeserializeOwned>(&self, producer: &str) -> Result<Upstream<T>, UpstreamError> {
        let part = self
            .latest(producer)
            .ok_or_else(|| UpstreamError::Missing {
                producer: producer.to_owned(),
            })?;
        typed(part)
    }

    /// Every part of the producer, typed, in order (a collector's inputs).
    pub fn all<T: DeserializeOwned>(
        &self,
        producer: &str,
    ) -> Result<Vec<Upstream<T>>, UpstreamError> {
        self.entries
            .iter()
            .filter(|e| e.producer == producer)
            .map(typed)
            .collect()
    }

    /// The context for the consumer's contract path: `<producer>_output` keys in the order
    /// producers first appeared, each with the producer's latest value.
    pub fn to_context_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for entry in &self.entries {
            map.insert(format!("{}_output", entry.producer), entry.value.clone());
        }
        map
    }
}

fn typed<T: DeserializeOwned>(part: &Upstream<Value>) -> Result<Upstream<T>, UpstreamError> {
    let value = T::deserialize(&part.value).map_err(|source| UpstreamError::Shape {
        producer: part.producer.clone(),
        context_id: part.context_id.clone(),
        source,
    })?;
    let mut typed = Upstream::new(part.producer.clone(), part.context_id.clone(), value);
    typed.written = part.written.clone();
    Ok(typed)
}

impl<'a> IntoIterator for &'a UpstreamContext {
    type Item = &'a Upstream<Value>;
    type IntoIter = std::slice::Iter<'a, Upstream<Value>>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl Extend<Upstream<Value>> for UpstreamContext {
    fn extend<I: IntoIterator<Item = Upstream<Value>>>(&mut self, iter: I) {
        self.entries.extend(iter);
    }
}

impl FromIterator<Upstream<Value>> for UpstreamContext {
    fn from_iter<I: IntoIterator<Item = Upstream<Value>>>(iter: I) -> Self {
        Self {
            entries: iter.into_iter().collect(),
        }
    }
}
