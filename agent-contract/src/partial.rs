//! Typed partial outputs: the value an answer holds so far, while it streams.
//!
//! [`PartialJson`] reads the answer delta by delta (its object found as
//! [`extract_json`](crate::extract_json) finds it) and gives the value received so far, with
//! what is still open closed: a string being written is there as far as it goes when it is a
//! property's value; an array holds its complete items; an object being written is there
//! with its complete properties when it is a property's value; a number, boolean or null is
//! there once complete. The codegen writes a partial type for each output contract (every
//! field optional, nested objects partial themselves) that deserializes from that value:
//! [`PartialOutput`] names it.

use crate::extract::Locate;
use crate::tokens::{Event, Scalar, Sink, Stopped, Tokens};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A type generated from an output contract that has a partial form, to show an answer while
/// it streams.
///
/// ```
/// use agent_contracts_contract::{PartialJson, PartialOutput};
///
/// #[derive(agent_contracts_macros::Agent)]
/// #[agent(
///     crate = "::agent_contracts_contract",
///     name = "plan_generator_agent",
///     input = "../schemas/plan_generator_agent/input.schema.json",
///     output = "../schemas/plan_generator_agent/output.schema.json",
/// )]
/// /// Writes plans.
/// struct PlanGeneratorAgent;
/// use plan_generator_agent::PlanGeneratorAgentOutput as Plan;
///
/// let mut answer = PartialJson::default();
/// answer.feed(r#"{"status": "success", "plan_file_path": "plans/lo"#);
/// let partial = Plan::partial(&answer);
/// assert_eq!(partial.plan_file_path.as_deref(), Some("plans/lo"));
/// assert!(partial.status.is_some());
/// assert_eq!(partial.agent_response_content, None);
/// ```
pub trait PartialOutput {
    /// The partial form: every field optional.
    type Partial: DeserializeOwned + Default + Clone + std::fmt::Debug + Send + Sync + 'static;

    /// The partial form of what `answer` has received so far (all fields `None` before its
    /// object starts, or if the value received does not fit the type).
    fn partial(answer: &PartialJson) -> Self::Partial {
        answer
            .value()
            .and_then(|value| Self::Partial::deserialize(value).ok())
            .unwrap_or_default()
    }
}

/// Agents without an output contract: their answer is any JSON value, partial as received.
impl PartialOutput for Value {
    type Partial = Value;
}

use serde::Deserialize as _;

/// An answer's JSON value as it streams; see the module docs.
///
/// ```
/// use agent_contracts_contract::PartialJson;
///
/// let mut answer = PartialJson::default();
/// answer.feed("Here:\n```json\n{\"steps\": [\"open\", \"fi");
/// assert_eq!(answer.value(), Some(serde_json::json!({"steps": ["open"]})));
/// answer.feed("ll\"], \"note\": \"do");
/// assert_eq!(
///     answer.value(),
///     Some(serde_json::json!({"steps": ["open", "fill"], "note": "do"}))
/// );
/// ```
#[derive(Debug, Default)]
pub struct PartialJson {
    locate: Locate,
    tokens: Tokens,
    builder: Builder,
    /// The text stopped being JSON: the value stays as it was before.
    stopped: bool,
}

impl PartialJson {
    /// Reads the next piece of the answer.
    pub fn feed(&mut self, delta: &str) {
        if self.stopped || self.tokens.done() {
            return;
        }
        if let Some((_, json)) = self.locate.json(delta) {
            match self.tokens.feed(json, &mut self.builder) {
                Ok(_) => {}
                Err(Stopped::Syntax(_)) => self.stopped = true,
                Err(Stopped::Sink(never)) => match never {},
            }
        }
    }

    /// The value received so far, what is open closed (see the module docs); `None` before
    /// the answer's object starts. Each call builds the value afresh.
    pub fn value(&self) -> Option<Value> {
        if let Some(done) = &self.builder.done {
            return Some(done.clone());
        }
        let stack = &self.builder.stack;
        let mut child = None;
        // From the innermost open value out: each shows in its parent when the parent is an
        // object (an array shows complete items only).
        for (i, open) in stack.iter().enumerate().rev() {
            let shown = open.shown(child.take());
            let in_object = i == 0 || matches!(stack[i - 1], Open::Object(..));
            child = if in_object { shown } else { None };
        }
        child
    }

    /// Whether the answer's object is complete.
    pub fn is_complete(&self) -> bool {
        self.builder.done.is_some()
    }
}

/// The open values, outermost first; a complete one goes into its parent.
#[derive(Debug, Default)]
struct Builder {
    stack: Vec<Open>,
    /// The root, once complete.
    done: Option<Value>,
}

#[derive(Debug)]
enum Open {
    Object(Map<String, Value>, Option<String>),
    Array(Vec<Value>),
    String(String),
    Scalar,
}

impl Open {
    /// This open value as it shows, with `child`, its own open value, inside.
    fn shown(&self, child: Option<Value>) -> Option<Value> {
        match self {
            Self::Object(map, key) => {
                let mut map = map.clone();
                if let (Some(key), Some(child)) = (key, child) {
                    map.insert(key.clone(), child);
                }
                Some(Value::Object(map))
            }
            Self::Array(items) => Some(Value::Array(items.clone())),
            Self::String(text) => Some(Value::String(text.clone())),
            Self::Scalar => None,
        }
    }
}

impl Builder {
    /// Puts a complete value into its parent (or keeps it as the root).
    fn complete(&mut self, value: Value) {
        match self.stack.last_mut() {
            Some(Open::Object(map, key)) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
            }
            Some(Open::Array(items)) => items.push(value),
            _ => self.done = Some(value),
        }
    }
}

impl Sink for Builder {
    type Stop = std::convert::Infallible;

    fn event(&mut self, event: Event<'_>, _at: usize) -> Result<(), Self::Stop> {
        match event {
            Event::BeginObject => self.stack.push(Open::Object(Map::new(), None)),
            Event::BeginArray => self.stack.push(Open::Array(Vec::new())),
            Event::BeginString => self.stack.push(Open::String(String::new())),
            Event::BeginScalar(_) => self.stack.push(Open::Scalar),
            Event::Key(key) => {
                if let Some(Open::Object(_, next)) = self.stack.last_mut() {
                    *next = Some(key.to_owned());
                }
            }
            Event::Char(c) => {
                if let Some(Open::String(text)) = self.stack.last_mut() {
                    text.push(c);
                }
            }
            Event::EndString | Event::EndObject | Event::EndArray => {
                let value = match self.stack.pop() {
                    Some(Open::String(text)) => Value::String(text),
                    Some(Open::Object(map, _)) => Value::Object(map),
                    Some(Open::Array(items)) => Value::Array(items),
                    _ => Value::Null,
                };
                self.complete(value);
            }
            Event::EndScalar(kind, text) => {
                self.stack.pop();
                let value = match kind {
                    Scalar::Null => Value::Null,
                    Scalar::Bool => Value::Bool(text == "true"),
                    Scalar::Number => serde_json::from_str(text).unwrap_or(Value::Null),
                };
                self.complete(value);
            }
        }
        Ok(())
    }
}

/// A partial type's field: the value deserialized as `T`, or absent when it does not fit yet
/// (an enum's value being written, an object missing what its type requires).
#[doc(hidden)]
pub fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).ok())
}

/// [`lenient`] for an integer field that takes `5.0`, as its full type does.
#[doc(hidden)]
pub fn lenient_integer<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: for<'v> crate::integer::Lenient<'v>,
{
    let value = Value::deserialize(deserializer)?;
    Ok(crate::integer::deserialize(value).ok())
}

/// A partial type's array: its items while they deserialize as `T` (the first that does not
/// ends it).
#[doc(hidden)]
pub fn lenient_items<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(match Value::deserialize(deserializer)? {
        Value::Array(items) => Some(
            items
                .into_iter()
                .map_while(|item| T::deserialize(item).ok())
                .collect(),
        ),
        _ => None,
    })
}
