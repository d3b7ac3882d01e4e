//! Tool-call kwargs: reserved keys apart, everything else merged into the context.
//!
//! Parents pass data flat beside `task`; a sub-agent that only read `context` dropped it. Here
//! every non-reserved key lands in the context, in the parent's order.

use crate::json::{
    Exceeded, Flaw, Scanned, object_entries, scan_value, text_depth, text_exceeds, text_values,
};
use crate::json::{Reading, Shared, Tape, TapeValue, Text, TopEntry, Walk};
use crate::limits::{Limits, check_shape, out_of_range_error, too_deep, too_many_values};
use crate::retry::{ErrorKind, PathSegment, RetryError};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

/// Keys of a tool call that are about the call, not data for the agent (defined in
/// `agent-schema`, so the code generator refuses the same keys in input contracts).
pub use agent_contracts_schema::RESERVED_KEYS;

/// A parent's tool call, split into the reserved keys and the merged context.
///
/// The context is kept as the parent wrote it: the kwargs text, received once, and where each
/// entry's key and value stand in it (its keys in their order, each value's text, numbers as
/// written). The typed input and the prompt are built from that text. The context as a `Value`
/// (keys sorted, numbers as `f64`/`i64`/`u64`), which the validator reads, is built only when
/// something asks for it ([`ToolCall::context`]), so a call whose typed input passes its
/// contract's compiled checks never builds it.
#[derive(Clone)]
pub struct ToolCall {
    /// What the parent asks the agent to do.
    pub task: String,
    /// The parent's identifier of the run, if given.
    pub run_identifier: Option<String>,
    /// The outputs the parent expects, passed through untouched.
    pub expected_outputs: Option<Value>,
    /// An output schema the parent sent along, passed through untouched.
    pub output_contract_schema: Option<Value>,
    /// The text the entries are slices of: the kwargs as received (or, for a call built in
    /// code, its values written one after the other).
    text: Arc<str>,
    /// A `context` the parent sent as a string, unescaped: the entries it gave are slices of it.
    inner: Option<Arc<str>>,
    /// The merged context, in the parent's order.
    entries: Vec<Entry>,
    /// The merged context as a `Value`, built on first use.
    context: OnceLock<Value>,
    /// The call's text read once (see [`object_entries`]), when its entries stand on it: the
    /// typed input is read from it.
    tape: Option<Arc<Shared>>,
}

/// One entry of the merged context: where its key and value stand.
#[derive(Debug, Clone)]
struct Entry {
    key: Key,
    value: Slice,
    /// Where the value stands on the call's tape, when it has one.
    tape: Option<u32>,
}

/// A key: a slice of the text when it holds no escape, else its unescaped copy.
#[derive(Debug, Clone)]
enum Key {
    At(Slice),
    Owned(Box<str>),
}

/// A range of the call's text, or of the unescaped `context` string.
#[derive(Debug, Clone, Copy)]
struct Slice {
    inner: bool,
    start: usize,
    end: usize,
}

impl PartialEq for ToolCall {
    /// Calls are equal when their data is, in the same order (not the same number text).
    fn eq(&self, other: &Self) -> bool {
        self.task == other.task
            && self.run_identifier == other.run_identifier
            && self.expected_outputs == other.expected_outputs
            && self.output_contract_schema == other.output_contract_schema
            && self.keys().eq(other.keys())
            && self.context() == other.context()
    }
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        struct Context<'a>(&'a ToolCall);
        impl std::fmt::Debug for Context<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_map().entries(self.0.entries()).finish()
            }
        }
        f.debug_struct("ToolCall")
            .field("task", &self.task)
            .field("run_identifier", &self.run_identifier)
            .field("expected_outputs", &self.expected_outputs)
            .field("output_contract_schema", &self.output_contract_schema)
            .field("context", &Context(self))
            .finish()
    }
}

impl ToolCall {
    /// The length of the text the call was read from.
    pub(crate) fn text_len(&self) -> usize {
        self.text.len()
    }

    /// Parses kwargs text within `limits`: the size is checked before parsing, the depth, the
    /// number of values and the range of numbers on the text of each entry, so an oversized
    /// or 100,000-deep input costs no stack.
    pub fn from_json_str(text: &str, limits: &Limits) -> Result<Self, RetryError> {
        // One pass reads the call (the one reader: its entries, JSON's grammar, what the depth
        // and number checks need, and the call's tape); serde_json reads it again only to
        // write the error of text that is not one object.
        match parse_within(text, limits, 0) {
            Ok(Parsed::Object(entries, tape)) => {
                let mut entries: Vals<'_> = entries
                    .into_iter()
                    .map(|(key, text, scanned, at)| {
                        let (scanned, tape) = (Some(scanned), Some(at));
                        (
                            key,
                            Val {
                                text,
                                scanned,
                                tape,
                            },
                        )
                    })
                    .collect();
                crate::json::dedupe(&mut entries);
                let mut call = split(text, entries, Some(&tape), limits)?;
                if call.entries.iter().any(|entry| entry.tape.is_some()) {
                    call.tape = Some(Arc::new(Shared {
                        text: Arc::clone(&call.text),
                        tape,
                    }));
                }
                Ok(call)
            }
            Ok(Parsed::Other(found)) => Err(RetryError::call(
                ErrorKind::NotObject,
                format!("got {found}"),
                "Send the tool call arguments as one JSON object with a `task` string",
            )),
            Err(Unparsed::Limit(e)) => Err(e),
            Err(Unparsed::NotJson(e)) => Err(RetryError::call(
                ErrorKind::NotJson,
                e.to_string(),
                "Send the tool call arguments as one JSON object",
            )),
        }
    }

    /// Splits an already parsed kwargs value; its depth is checked iteratively first. The
    /// context's order and numbers are the value's.
    pub fn from_value(value: Value, limits: &Limits) -> Result<Self, RetryError> {
        check_shape(&value, limits, 0)?;
        if !value.is_object() {
            return Err(RetryError::call(
                ErrorKind::NotObject,
                format!("got {}", type_name(&value)),
                "Send the tool call arguments as one JSON object with a `task` string",
            ));
        }
        let text = value.to_string();
        Self::from_json_str(&text, limits)
    }

    /// A call built in code: `task` plus a context object.
    pub fn new(task: impl Into<String>, context: Map<String, Value>) -> Self {
        let mut text = String::new();
        let entries = context
            .iter()
            .map(|(key, value)| {
                let start = text.len();
                text.push_str(raw_of(value).get());
                Entry {
                    key: Key::Owned(key.as_str().into()),
                    value: Slice {
                        inner: false,
                        start,
                        end: text.len(),
                    },
                    tape: None,
                }
            })
            .collect();
        Self {
            task: task.into(),
            run_identifier: None,
            expected_outputs: None,
            output_contract_schema: None,
            text: text.into(),
            inner: None,
            entries,
            context: OnceLock::from(Value::Object(context)),
            tape: None,
        }
    }

    /// A call built in code from `task` and context entries given as JSON text, in order (a
    /// workflow step's context). Each value is parsed for the validator within `limits`.
    #[doc(hidden)]
    pub fn from_entries(
        task: impl Into<String>,
        entries: Vec<(String, Box<RawValue>)>,
        limits: &Limits,
    ) -> Result<Self, RetryError> {
        let mut map = Map::new();
        for (key, raw) in &entries {
            map.insert(key.clone(), value_of(raw.get(), limits, 1, key)?);
        }
        let context = Value::Object(map);
        check_shape(&context, limits, 0)?;
        let mut text = String::new();
        let entries = entries
            .into_iter()
            .map(|(key, raw)| {
                let start = text.len();
                text.push_str(raw.get());
                Entry {
                    key: Key::Owned(key.into_boxed_str()),
                    value: Slice {
                        inner: false,
                        start,
                        end: text.len(),
                    },
                    tape: None,
                }
            })
            .collect();
        Ok(Self {
            task: task.into(),
            run_identifier: None,
            expected_outputs: None,
            output_contract_schema: None,
            text: text.into(),
            inner: None,
            entries,
            context: OnceLock::from(context),
            tape: None,
        })
    }

    /// The merged context; always a JSON object. Its keys are sorted and its numbers parsed:
    /// see [`ToolCall::entries`] for the context as the parent wrote it. Built from the text
    /// on first use.
    pub fn context(&self) -> &Value {
        self.context.get_or_init(|| {
            let map = self
                .entries_on(self.tape.as_ref())
                .map(|(key, value)| {
                    // Each entry was read (by the one pass or serde_json) and checked within
                    // the limits (depth under serde_json's own, numbers finite) when the call
                    // was split, so it parses; `null` stands in for what cannot happen. A
                    // value on the tape is built from it, without reading its text again.
                    let value = match value {
                        Read::Tape(value) => value.to_value(),
                        Read::Text(text) => serde_json::from_str(text),
                    };
                    (key.to_owned(), value.unwrap_or(Value::Null))
                })
                .collect();
            Value::Object(map)
        })
    }

    /// Takes the context out, leaving an empty object.
    #[doc(hidden)]
    pub fn into_context(self) -> Map<String, Value> {
        self.context();
        match self.context.into_inner() {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// Whether the context's `Value` has been built (by [`ToolCall::context`] or a call built
    /// from one). For tests of the paths that must not build it.
    #[doc(hidden)]
    pub fn context_built(&self) -> bool {
        self.context.get().is_some()
    }

    /// The merged context as the parent wrote it: each key in the parent's order, with its
    /// value's JSON text (one JSON value, as serde_json read it).
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|entry| (self.key(entry), self.slice(entry.value)))
    }

    fn slice(&self, at: Slice) -> &str {
        let text = match (&self.inner, at.inner) {
            (Some(inner), true) => inner,
            _ => &self.text,
        };
        &text[at.start..at.end]
    }

    fn key<'a>(&'a self, entry: &'a Entry) -> &'a str {
        match &entry.key {
            Key::At(at) => self.slice(*at),
            Key::Owned(key) => key,
        }
    }

    fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| self.key(entry))
    }

    /// Whether the context has every one of `names` among its keys.
    pub(crate) fn has_keys(&self, names: &[String]) -> bool {
        let mut missing = names.len();
        if missing == 0 {
            return true;
        }
        // On the stack for the contracts most have (up to 64 required keys): no allocation.
        let (mut few, mut many) = ([false; 64], Vec::new());
        let seen: &mut [bool] = if names.len() <= few.len() {
            &mut few[..names.len()]
        } else {
            many.resize(names.len(), false);
            &mut many
        };
        for key in self.keys() {
            if let Some(at) = names.iter().position(|name| name == key)
                && !std::mem::replace(&mut seen[at], true)
            {
                missing -= 1;
                if missing == 0 {
                    return true;
                }
            }
        }
        false
    }

    /// Deserializes the context as written into `T` (the typed input), straight from the text:
    /// each entry's value is parsed once from its own slice, numbers reach `T` as the parent
    /// wrote them, and untyped parts keep their text and order. Reserved keys and the
    /// `context` keys a flat key shadowed are not among the entries, so `T` never sees them.
    ///
    /// It reads through [`checks::deserialize`](crate::checks::deserialize) (structs from
    /// objects only), so a generated type's compiled checks hold for what it returns.
    #[doc(hidden)]
    pub fn deserialize_context<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<T, serde_json::Error> {
        // From the call's tape when it has one (no second read of the text); a call the tape
        // does not read as `T` is read again from the text, whose error is the one to give.
        // Its untyped parts stand on the call (shared, not copied) while the guard lives.
        if let Some(tape) = &self.tape {
            let _reading = Reading::of(tape);
            if let Ok(input) = crate::checks::deserialize(
                serde::de::value::MapAccessDeserializer::new(EntryAccess {
                    entries: self.entries_on(Some(tape)),
                    value: None,
                }),
            ) {
                return Ok(input);
            }
        }
        crate::checks::deserialize(serde::de::value::MapAccessDeserializer::new(EntryAccess {
            entries: self.entries_on(None),
            value: None,
        }))
    }

    /// The entries, each value with its place on `tape` when it has one there.
    /// Every entry of the context read from the call's tape, in the caller's order; `None`
    /// when one of them is not on it (the call or a value kept the other paths).
    pub(crate) fn tape_entries(&self) -> Option<Vec<(&str, TapeValue<'_>)>> {
        self.entries_on(self.tape.as_ref())
            .map(|(key, value)| match value {
                Read::Tape(value) => Some((key, value)),
                Read::Text(_) => None,
            })
            .collect()
    }

    fn entries_on<'a>(
        &'a self,
        tape: Option<&'a Arc<Shared>>,
    ) -> impl ExactSizeIterator<Item = (&'a str, Read<'a>)> {
        self.entries.iter().map(move |entry| {
            let value = match (tape, entry.tape) {
                (Some(shared), Some(at)) => Read::Tape(TapeValue::shared(shared, at as usize)),
                _ => Read::Text(self.slice(entry.value)),
            };
            (self.key(entry), value)
        })
    }

    /// The context as written, serialized as one object (for a template or a pretty printer).
    #[doc(hidden)]
    pub fn context_json(&self) -> impl serde::Serialize + '_ {
        ContextJson(self)
    }
}

/// A value of the call as the typed input reads it: from its place on the call's tape, or
/// from its own text.
enum Read<'a> {
    Tape(TapeValue<'a>),
    Text(&'a str),
}

/// The entries of a call as a serde map, each value deserialized from its tape or its text.
struct EntryAccess<'a, I> {
    entries: I,
    value: Option<Read<'a>>,
}

impl<'de, I: Iterator<Item = (&'de str, Read<'de>)>> serde::de::MapAccess<'de>
    for EntryAccess<'de, I>
{
    type Error = serde_json::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(serde::de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value.take() {
            Some(Read::Tape(value)) => seed.deserialize(value),
            Some(Read::Text(text)) => {
                let mut de = serde_json::Deserializer::from_str(text);
                let value = seed.deserialize(&mut de)?;
                de.end()?;
                Ok(value)
            }
            None => Err(serde::de::Error::custom("a value asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.entries.size_hint().1
    }
}

/// A call's context as written, serialized as one object.
struct ContextJson<'a>(&'a ToolCall);

impl serde::Serialize for ContextJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.entries.len()))?;
        for (key, value) in self.0.entries() {
            map.serialize_entry(key, &Walk(value))?;
        }
        map.end()
    }
}

fn raw_of(value: &Value) -> Box<RawValue> {
    // A `Value` always serializes: its keys are strings and its numbers finite.
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("valid JSON"))
}

/// Above this depth limit the context's `Value` is built when the call is split, as serde_json
/// refuses nesting past 128: a call within such a limit but past serde_json's gets its retry
/// error then, not a context that cannot be built later.
const LAZY_DEPTH: usize = 100;

/// Where `part` (a slice of `text`) starts in `text`.
fn offset_in(text: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (start + part.len() <= text.len()).then_some(start)
}

/// A value of the call: its text, and what the one pass over the call found in it, when that
/// pass read it ([`object_entries`]).
#[derive(Clone, Copy)]
struct Val<'a> {
    text: &'a str,
    scanned: Option<Scanned>,
    /// Where the value stands on the call's tape, when it has one.
    tape: Option<u32>,
}

impl<'a> Val<'a> {
    fn get(&self) -> &'a str {
        self.text
    }
}

/// Entries whose values are [`Val`]s.
type Vals<'a> = Vec<(Cow<'a, str>, Val<'a>)>;

fn split<'a>(
    text: &'a str,
    kwargs: Vals<'a>,
    tape: Option<&'a Tape>,
    limits: &Limits,
) -> Result<ToolCall, RetryError> {
    // One pass takes the reserved keys out; what stays is the flat context, in the parent's
    // order.
    let [
        mut task,
        mut run_identifier,
        mut expected_outputs,
        mut output_contract_schema,
        mut context_value,
    ]: [Option<Val<'_>>; 5] = [None; 5];
    let mut flat: Vals<'_> = Vec::with_capacity(kwargs.len());
    let mut explicit_at = 0;
    for (key, value) in kwargs {
        let slot = match key.as_ref() {
            "task" => &mut task,
            "run_identifier" => &mut run_identifier,
            "expected_outputs" => &mut expected_outputs,
            "output_contract_schema" => &mut output_contract_schema,
            "context" => {
                explicit_at = flat.len();
                &mut context_value
            }
            _ => {
                flat.push((key, value));
                continue;
            }
        };
        *slot = Some(value);
    }
    // A top-level key wins over the same key inside `context`, reserved keys included: a
    // parent that copied its whole call into `context` must not hand `task` over as data.
    let shadowing = [
        ("task", task.is_some()),
        ("run_identifier", run_identifier.is_some()),
        ("expected_outputs", expected_outputs.is_some()),
        ("output_contract_schema", output_contract_schema.is_some()),
    ];
    let task = match task {
        Some(raw) if raw.get().starts_with('"') => string_of(raw.get())?,
        Some(other) => {
            return Err(RetryError::call(
                ErrorKind::TaskNotString,
                format!("`task` is {}", raw_type_name(other.get())),
                "Pass `task` as a string describing what the agent should do",
            ));
        }
        None => {
            return Err(RetryError::call(
                ErrorKind::MissingTask,
                "\"task\" is a required property",
                "Pass `task` as a string describing what the agent should do",
            ));
        }
    };
    let run_identifier = match run_identifier {
        None => None,
        Some(raw) if raw.get() == "null" => None,
        Some(raw) if raw.get().starts_with('"') => Some(string_of(raw.get())?),
        Some(other) => {
            return Err(RetryError::call(
                ErrorKind::RunIdentifierNotString,
                format!("`run_identifier` is {}", raw_type_name(other.get())),
                "Pass `run_identifier` as a string, or leave it out",
            ));
        }
    };
    let expected_outputs = expected_outputs
        .map(|raw| value_of(raw.get(), limits, 1, "expected_outputs"))
        .transpose()?;
    let output_contract_schema = output_contract_schema
        .map(|raw| value_of(raw.get(), limits, 1, "output_contract_schema"))
        .transpose()?;
    // A context given as a string is parsed from this copy, which its entries borrow.
    let unescaped = match context_value {
        Some(raw) if raw.get().starts_with('"') => string_of(raw.get())?,
        _ => String::new(),
    };
    let explicit = match context_value {
        Some(raw) => explicit_context(raw, text, tape, &unescaped, limits)?.map(|mut entries| {
            entries.retain(|(k, _)| !shadowing.contains(&(k.as_ref(), true)));
            entries
        }),
        None => None,
    };
    let (merged, from_context) = splice(flat, explicit, explicit_at);
    // Only a text this long can hold more values than the limit (a value takes two bytes):
    // the merged context's values are counted then (a `context` string adds its own).
    if (text.len() + unescaped.len()) / 2 >= limits.max_values {
        let mut values = 1usize;
        for (_, raw) in &merged {
            values = values.saturating_add(text_values(raw.get(), limits.max_values));
            if values > limits.max_values {
                return Err(too_many_values(limits));
            }
        }
    }
    let eager = limits.max_depth > LAZY_DEPTH;
    let mut map = Map::new();
    let mut entries = Vec::with_capacity(merged.len());
    for (i, (key, raw)) in merged.iter().enumerate() {
        // An entry of `context` stood one level deeper in the call than a flat key.
        let outer = if from_context.contains(&i) { 2 } else { 1 };
        if eager {
            let value = value_of(raw.get(), limits, 1, key)?;
            check_shape(&value, limits, outer)?;
            map.insert(key.clone().into_owned(), value);
        } else {
            let room = limits
                .max_depth
                .checked_sub(outer)
                .ok_or_else(|| too_deep(limits))?;
            let flaw = match raw.scanned {
                Some(scanned) => scanned.flaw(room),
                None => scan_value(raw.get(), room),
            };
            match flaw {
                Ok(()) => {}
                Err(Flaw::TooDeep) => return Err(too_deep(limits)),
                Err(Flaw::OutOfRange) => {
                    let mut path = crate::json::out_of_range(raw.get()).unwrap_or_default();
                    path.insert(0, PathSegment::Key(key.clone().into_owned()));
                    return Err(out_of_range_error(path, limits));
                }
            }
        }
        let at = |part: &str| match offset_in(text, part) {
            Some(start) => Some(Slice {
                inner: false,
                start,
                end: start + part.len(),
            }),
            None => offset_in(&unescaped, part).map(|start| Slice {
                inner: true,
                start,
                end: start + part.len(),
            }),
        };
        let key = match key {
            Cow::Borrowed(k) => at(k).map_or_else(|| Key::Owned((*k).into()), Key::At),
            Cow::Owned(k) => Key::Owned(k.as_str().into()),
        };
        let Some(value) = at(raw.get()) else {
            // Every value is a slice of one of the two texts.
            return Err(RetryError::call(
                ErrorKind::NotJson,
                "a context value is not part of the call",
                "Send valid JSON",
            ));
        };
        entries.push(Entry {
            key,
            value,
            tape: raw.tape,
        });
    }
    let context = OnceLock::new();
    if eager {
        let context_value = Value::Object(map);
        check_shape(&context_value, limits, 0)?;
        let _ = context.set(context_value);
    }
    let inner = entries
        .iter()
        .any(|e: &Entry| e.value.inner || matches!(e.key, Key::At(Slice { inner: true, .. })))
        .then(|| Arc::from(unescaped.as_str()));
    Ok(ToolCall {
        task,
        run_identifier,
        expected_outputs,
        output_contract_schema,
        text: Arc::from(text),
        inner,
        entries,
        context,
        tape: None,
    })
}

/// The string a raw JSON string holds.
fn string_of(raw: &str) -> Result<String, RetryError> {
    serde_json::from_str::<Text<'_>>(raw)
        .map(|t| t.0.into_owned())
        .map_err(|e| RetryError::call(ErrorKind::NotJson, e.to_string(), "Send valid JSON"))
}

/// The `Value` of raw JSON at `key` (nested `outer_depth` deep): a value nested past
/// serde_json's own limit is "too deep", a number no `f64` holds names its path.
fn value_of(
    raw: &str,
    limits: &Limits,
    outer_depth: usize,
    key: &str,
) -> Result<Value, RetryError> {
    serde_json::from_str::<Value>(raw).map_err(|e| {
        let room = limits.max_depth.saturating_sub(outer_depth);
        if text_depth(raw) > room {
            return too_deep(limits);
        }
        match crate::json::out_of_range(raw) {
            Some(mut path) => {
                path.insert(0, PathSegment::Key(key.to_owned()));
                out_of_range_error(path, limits)
            }
            None => RetryError::call(ErrorKind::NotJson, e.to_string(), "Send valid JSON"),
        }
    })
}

/// Puts the explicit context's entries where `context` stood in the parent's call; a flat key
/// of the same name wins and keeps its own place. Also returns where the context's entries are.
fn splice<'a>(
    flat: Vals<'a>,
    explicit: Option<Vals<'a>>,
    at: usize,
) -> (Vals<'a>, std::ops::Range<usize>) {
    let Some(explicit) = explicit else {
        return (flat, 0..0);
    };
    // A set, not a list: the clash test must stay O(1) for a call with many keys.
    let taken: HashSet<&str> = flat.iter().map(|(k, _)| k.as_ref()).collect();
    let explicit: Vals<'a> = explicit
        .into_iter()
        .filter(|(key, _)| !taken.contains(key.as_ref()))
        .collect();
    drop(taken);
    let mut merged = Vec::with_capacity(flat.len() + explicit.len());
    let mut flat = flat.into_iter();
    merged.extend(flat.by_ref().take(at));
    let from_context = merged.len()..merged.len() + explicit.len();
    merged.extend(explicit);
    merged.extend(flat);
    (merged, from_context)
}

/// `context` may be absent, null, an object, or a string holding an object (LLMs stringify).
fn explicit_context<'a>(
    raw: Val<'a>,
    text: &'a str,
    tape: Option<&'a Tape>,
    unescaped: &'a str,
    limits: &Limits,
) -> Result<Option<Vals<'a>>, RetryError> {
    let not_object = |found: &str| {
        RetryError::call(
            ErrorKind::ContextNotObject,
            format!("`context` is {found}"),
            "Pass the agent's data as top-level fields, or `context` as a JSON object",
        )
    };
    match (raw.get().as_bytes().first(), tape.zip(raw.tape)) {
        (Some(b'n'), _) => Ok(None),
        // An object on the call's tape: its entries read from it, each with its place.
        (Some(b'{'), Some((tape, at))) => Ok(Some(
            TapeValue::on(text, tape, at as usize)
                .entries()
                .map(|(key, value)| {
                    let val = Val {
                        text: value.text(),
                        scanned: None,
                        tape: Some(value.index()),
                    };
                    (Cow::Borrowed(key), val)
                })
                .collect(),
        )),
        (Some(b'"'), _) => {
            // The outer parse saw this as one string: its inner depth counts from level 1.
            // Its entries stand on a tape of their own, which the call does not keep: they
            // are read from their text.
            match parse_within(unescaped, limits, 1) {
                Ok(Parsed::Object(entries, _)) => Ok(Some(
                    entries
                        .into_iter()
                        .map(|(key, text, scanned, _)| {
                            let scanned = Some(scanned);
                            let tape = None;
                            (
                                key,
                                Val {
                                    text,
                                    scanned,
                                    tape,
                                },
                            )
                        })
                        .collect(),
                )),
                Ok(Parsed::Other(found)) => Err(not_object(&format!("a string holding {found}"))),
                Err(Unparsed::Limit(e)) => Err(e),
                Err(Unparsed::NotJson(_)) => Err(not_object("a string that is not JSON")),
            }
        }
        _ => Err(not_object(raw_type_name(raw.get()))),
    }
}

/// What [`parse_within`] found.
enum Parsed<'a> {
    /// An object's entries, in order (a repeated key each time), read by the one pass, and
    /// its tape.
    Object(Vec<TopEntry<'a>>, Tape),
    /// Some other JSON value: "an array", "a number", ...
    Other(&'static str),
}

/// Why [`parse_within`] returned no value.
enum Unparsed {
    /// Over the size or depth limit: the retry error says which.
    Limit(RetryError),
    /// Not JSON, within the limits.
    NotJson(serde_json::Error),
}

/// Parses `text` whose nesting counts from `outer_depth`, within `limits`, into the entries of
/// its object (borrowed from `text`), each value left as its text.
///
/// The size is checked first. Reading the entries builds no tree: serde_json skips each value
/// with an explicit stack, so no nesting costs stack here; the depth is checked when the values
/// are parsed (see [`value_of`]). A text that fails to parse is then scanned, so that one too
/// deep to parse is "too deep", not "not JSON".
fn parse_within<'a>(
    text: &'a str,
    limits: &Limits,
    outer_depth: usize,
) -> Result<Parsed<'a>, Unparsed> {
    if text.len() > limits.max_bytes {
        let kind = ErrorKind::TooLarge {
            size: text.len(),
            limit: limits.max_bytes,
        };
        let message = kind.to_string();
        return Err(Unparsed::Limit(RetryError::call(
            kind,
            message,
            "Send less data: summarize or drop what the agent does not need",
        )));
    }
    let room = limits.max_depth.checked_sub(outer_depth);
    // A value takes at least two bytes (`0,`), so only a text this long can hold more values
    // than the limit: scan it before building a tree that costs far more than the text.
    if text.len() / 2 >= limits.max_values {
        match text_exceeds(text, limits.max_values, room.unwrap_or(0)) {
            Some(Exceeded::Values) => return Err(Unparsed::Limit(too_many_values(limits))),
            Some(Exceeded::Depth) => return Err(Unparsed::Limit(too_deep(limits))),
            None => {}
        }
    }
    if let Some((entries, tape)) = object_entries(text) {
        return Ok(Parsed::Object(entries, tape));
    }
    // Not one object the one pass reads: serde_json says what it is, or what is wrong.
    let too_deep_for = |text: &str| room.is_none_or(|room| text_depth(text) > room);
    match serde_json::from_str::<&RawValue>(text) {
        // An object serde_json reads and the pass does not nests past the pass's depth.
        Ok(raw) if raw.get().starts_with('{') => Err(Unparsed::Limit(too_deep(limits))),
        Ok(_) if too_deep_for(text) => Err(Unparsed::Limit(too_deep(limits))),
        Ok(raw) => Ok(Parsed::Other(raw_type_name(raw.get()))),
        Err(_) if too_deep_for(text) => Err(Unparsed::Limit(too_deep(limits))),
        Err(e) => Err(Unparsed::NotJson(e)),
    }
}

fn raw_type_name(raw: &str) -> &'static str {
    crate::json::type_name(raw)
}

/// "an array", "a number", ...: for messages that must not echo the value itself.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use crate::json::text_depth;
    use crate::json::value_depth_exceeds;

    /// A typed input with the shapes a contract gives: strings, numbers, options, lists,
    /// enums, maps and untyped parts.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Input {
        url: String,
        count: Option<u32>,
        #[serde(default)]
        items: Vec<Item>,
        #[serde(default)]
        meta: std::collections::BTreeMap<String, f64>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Item {
        kind: Kind,
        output: crate::RawObject,
        #[serde(default)]
        note: Option<crate::RawJson>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Discovery,
        Selector,
    }

    /// The typed input read from `tape` where the call's values stand on it, else from text.
    fn typed_again(
        call: &super::ToolCall,
        tape: Option<&std::sync::Arc<super::Shared>>,
    ) -> Result<Input, serde_json::Error> {
        let _reading = tape.map(crate::json::Reading::of);
        crate::checks::deserialize(serde::de::value::MapAccessDeserializer::new(
            super::EntryAccess {
                entries: call.entries_on(tape),
                value: None,
            },
        ))
    }

    #[test]
    fn the_typed_input_reads_the_same_from_the_tape_and_the_text() {
        let limits = super::Limits::default();
        for text in [
            r#"{"task": "t", "url": "a\u00e9", "count": 3, "items": [{"kind": "discovery", "output": {"x": [1, {"y": 0.60}]}, "note": [1e5]}], "meta": {"a": 1.5}}"#,
            r#"{"task": "t", "url": "a", "items": [{"kind": "selector", "output": {"b": 1, "b": 2}}]}"#,
            r#"{"url": "a", "task": "t", "count": null, "meta": {"\u0061": 1}}"#,
            r#"{"task": "t", "url": "a", "count": -1}"#,
            r#"{"task": "t", "url": "a", "count": 1.0}"#,
            r#"{"task": "t", "url": "a", "items": [{"kind": "other", "output": {}}]}"#,
            r#"{"task": "t", "url": "a", "items": [{"kind": "selector", "output": []}]}"#,
            r#"{"task": "t", "url": "a", "extra": 1}"#,
            r#"{"task": "t", "count": 1}"#,
            r#"{"task": "t", "context": {"url": "inner"}, "count": 2}"#,
        ] {
            let call = super::ToolCall::from_json_str(text, &limits).unwrap();
            let typed: Result<Input, _> = call.deserialize_context();
            let by_text = typed_again(&call, None);
            match (typed, by_text) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (a, b) => panic!("{text}: {a:?} against {b:?}"),
            }
            // A call the type reads is read from the tape itself, not by falling back, and
            // its untyped parts keep their part of the tape, which writes them as their text.
            if let Ok(expected) = &typed_again(&call, None) {
                let from_tape = typed_again(&call, call.tape.as_ref()).unwrap();
                assert_eq!(&from_tape, expected);
                for item in &from_tape.items {
                    assert!(item.output.tape_read(), "{text}");
                    assert_eq!(
                        serde_json::to_string(&item.output).unwrap(),
                        serde_json::to_string(&crate::json::Walk(item.output.get())).unwrap()
                    );
                }
            }
            // The context the validator reads is the same built from the tape.
            let by_text: serde_json::Map<String, serde_json::Value> = call
                .entries()
                .map(|(k, v)| (k.to_owned(), serde_json::from_str(v).unwrap()))
                .collect();
            assert_eq!(
                call.context(),
                &serde_json::Value::Object(by_text),
                "{text}"
            );
            // Every value of these calls but the ones with a repeated or escaped key stands on
            // the tape.
            let on_tape = call.entries.iter().filter(|e| e.tape.is_some()).count();
            assert_eq!(call.tape.is_some(), on_tape > 0, "{text}");
        }
    }

    #[test]
    fn the_depth_of_a_value_is_the_depth_of_its_text() {
        let deep = "[".repeat(100) + &"]".repeat(100);
        let texts = [
            "42",
            "\"[[\"",
            "{}",
            "[]",
            r#"{"a": [1, {"b": [[]]}], "c": {"d": {}}}"#,
            r#"[[1], [[2]], {"x": [[[3]]]}, 4]"#,
            &deep,
        ];
        for text in texts {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let depth = text_depth(text);
            for limit in 0..=depth + 1 {
                assert_eq!(
                    value_depth_exceeds(&value, limit),
                    depth > limit,
                    "{text} at {limit}"
                );
            }
        }
    }

    use super::ToolCall;
    use crate::limits::Limits;
    use crate::retry::{ErrorKind, PathSegment};

    /// The checks that replaced the eager `Value`: depth (one level more for an entry of
    /// `context`) and number range, on the text of each entry, before any `Value` exists.
    #[test]
    fn limits_hold_on_the_text_of_each_entry() {
        let limits = Limits {
            max_depth: 4,
            ..Limits::default()
        };
        let split = |text: &str| ToolCall::from_json_str(text, &limits);
        // Depth 3 under the call's own object: 4 in all.
        assert!(split(r#"{"task": "t", "a": [[[1]]]}"#).is_ok());
        let deep = split(r#"{"task": "t", "a": [[[[1]]]]}"#).unwrap_err();
        assert!(
            matches!(deep.kind, ErrorKind::TooDeep { limit: 4 }),
            "{deep:?}"
        );
        // Brackets inside strings are not nesting.
        assert!(split(r#"{"task": "t", "a": ["[[[[\"]]"]}"#).is_ok());
        // An entry of `context` (object or string) stands one level deeper.
        assert!(split(r#"{"task": "t", "context": {"a": [[1]]}}"#).is_ok());
        for text in [
            r#"{"task": "t", "context": {"a": [[[1]]]}}"#,
            r#"{"task": "t", "context": "{\"a\": [[[1]]]}"}"#,
        ] {
            let deep = split(text).unwrap_err();
            assert!(
                matches!(deep.kind, ErrorKind::TooDeep { .. }),
                "{text}: {deep:?}"
            );
        }
        let out = split(r#"{"task": "t", "a": {"b": [1, 2e400]}}"#).unwrap_err();
        assert_eq!(out.kind, ErrorKind::NumberOutOfRange);
        assert_eq!(
            out.path,
            [
                PathSegment::Key("a".into()),
                PathSegment::Key("b".into()),
                PathSegment::Index(1)
            ]
        );
        let call = split(r#"{"task": "t", "a": [1e300, -0.5e-400, "1e400"]}"#).unwrap();
        assert!(!call.context_built());
        assert_eq!(call.context()["a"][0], serde_json::json!(1e300));
    }

    #[test]
    fn keys_with_escapes_and_calls_built_in_code_read_back() {
        let call = ToolCall::from_json_str(
            r#"{"task": "t", "k\u00e9y": 1, "plain": "\n"}"#,
            &crate::Limits::default(),
        )
        .unwrap();
        let entries: Vec<(&str, &str)> = call.entries().collect();
        assert_eq!(entries, [("kéy", "1"), ("plain", "\"\\n\"")]);
        let map = call.context().as_object().unwrap().clone();
        let rebuilt = ToolCall::new("t", map);
        assert_eq!(rebuilt, call);
        let input: std::collections::BTreeMap<String, serde_json::Value> =
            rebuilt.deserialize_context().unwrap();
        assert_eq!(input["plain"], "\n");
    }

    /// The reserved strings (`task`, `run_identifier`, a `context` sent as a string) are
    /// decoded, empty, plain or escaped, on both readers (the one pass, and serde_json's for
    /// a call with a repeated key).
    #[test]
    fn reserved_strings_are_decoded_where_they_are_escaped() {
        for repeat in [false, true] {
            for expected in ["", "plain é", "a\"b\\c\né"] {
                let context = serde_json::json!({ "k": expected }).to_string();
                let mut text = serde_json::json!({
                    "task": expected,
                    "run_identifier": expected,
                    "context": context,
                })
                .to_string();
                if repeat {
                    text.insert_str(text.len() - 1, r#", "x": 1, "x": 2"#);
                }
                let call = ToolCall::from_json_str(&text, &crate::Limits::default()).unwrap();
                assert_eq!(call.task, expected, "{text}");
                assert_eq!(call.run_identifier.as_deref(), Some(expected), "{text}");
                assert_eq!(call.context()["k"], expected, "{text}");
            }
        }
    }
}
