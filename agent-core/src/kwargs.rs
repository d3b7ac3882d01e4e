//! Tool-call kwargs: reserved keys apart, everything else merged into the context.
//!
//! Parents pass data flat beside `task`; a sub-agent that only read `context` dropped it. Here
//! every non-reserved key lands in the context, in the parent's order.

use crate::error::{ErrorKind, PathSegment, RetryError};
use crate::json::{Entries, Ordered, Text, WalkEntries};
use crate::limits::{
    Exceeded, Limits, check_shape, out_of_range_error, text_depth, text_exceeds, too_deep,
    too_many_values,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Keys of a tool call that are about the call, not data for the agent (defined in
/// `agent-schema`, so the code generator refuses the same keys in input contracts).
pub use agent_schema::RESERVED_KEYS;

/// A parent's tool call, split into the reserved keys and the merged context.
///
/// The context is kept twice: as the parent wrote it (its keys in their order, each value's
/// text, numbers as written), which the typed input and the prompt are built from, and as a
/// `Value` (keys sorted, numbers as `f64`/`i64`/`u64`), which the validator reads.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// What the parent asks the agent to do.
    pub task: String,
    /// The parent's identifier of the run, if given.
    pub run_identifier: Option<String>,
    /// The outputs the parent expects, passed through untouched.
    pub expected_outputs: Option<Value>,
    /// An output schema the parent sent along, passed through untouched.
    pub output_contract_schema: Option<Value>,
    /// Always a JSON object: the explicit `context` merged with every flat key.
    context: Value,
    /// The same context as written, in the parent's order.
    entries: Vec<(String, Box<RawValue>)>,
}

impl PartialEq for ToolCall {
    /// Calls are equal when their data is, in the same order (not the same number text).
    fn eq(&self, other: &Self) -> bool {
        self.task == other.task
            && self.run_identifier == other.run_identifier
            && self.expected_outputs == other.expected_outputs
            && self.output_contract_schema == other.output_contract_schema
            && self.context == other.context
            && self.keys().eq(other.keys())
    }
}

impl ToolCall {
    /// Parses kwargs text with the default [`Limits`].
    pub fn from_json_str(text: &str) -> Result<Self, RetryError> {
        Self::from_json_str_with(text, &Limits::default())
    }

    /// Parses kwargs text within `limits`: the size is checked before parsing, the depth on the
    /// parsed value (see [`parse_within`]), so an oversized or 100,000-deep input costs no stack.
    pub fn from_json_str_with(text: &str, limits: &Limits) -> Result<Self, RetryError> {
        match parse_within(text, limits, 0) {
            Ok(Parsed::Object(entries)) => split(entries, limits),
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
        Self::from_json_str_with(&text, limits)
    }

    /// A call built in code: `task` plus a context object.
    pub fn new(task: impl Into<String>, context: Map<String, Value>) -> Self {
        let entries = context
            .iter()
            .map(|(key, value)| (key.clone(), raw_of(value)))
            .collect();
        Self {
            task: task.into(),
            run_identifier: None,
            expected_outputs: None,
            output_contract_schema: None,
            context: Value::Object(context),
            entries,
        }
    }

    /// A call built in code from `task` and context entries given as JSON text, in order (a
    /// workflow step's context). Each value is parsed for the validator within `limits`.
    pub fn from_entries(
        task: impl Into<String>,
        entries: Vec<(String, Box<RawValue>)>,
        limits: &Limits,
    ) -> Result<Self, RetryError> {
        let mut map = Map::new();
        for (key, raw) in &entries {
            map.insert(key.clone(), value_of(raw, limits, 1, key)?);
        }
        let context = Value::Object(map);
        check_shape(&context, limits, 0)?;
        Ok(Self {
            task: task.into(),
            run_identifier: None,
            expected_outputs: None,
            output_contract_schema: None,
            context,
            entries,
        })
    }

    /// The merged context; always a JSON object. Its keys are sorted and its numbers parsed:
    /// see [`ToolCall::entries`] for the context as the parent wrote it.
    pub fn context(&self) -> &Value {
        &self.context
    }

    /// The merged context as a map.
    pub fn context_map(&self) -> &Map<String, Value> {
        match &self.context {
            Value::Object(map) => map,
            _ => unreachable!("ToolCall::context is always an object"),
        }
    }

    /// Takes the context out, leaving an empty object.
    pub fn into_context(self) -> Map<String, Value> {
        match self.context {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// The merged context as the parent wrote it: each key in the parent's order, with its
    /// value's text.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&str, &RawValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), &**v))
    }

    fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Deserializes the context as written into `T` (the typed input): numbers reach `T` as
    /// the parent wrote them, and untyped parts keep their text and order.
    pub fn deserialize_context<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<T, serde_json::Error> {
        let map = serde::de::value::MapDeserializer::new(self.entries());
        T::deserialize(map)
    }

    /// The context as written, serialized as one object (for a template or a pretty printer).
    pub fn context_json(&self) -> impl serde::Serialize + '_ {
        WalkEntries(&self.entries)
    }
}

fn raw_of(value: &Value) -> Box<RawValue> {
    // A `Value` always serializes: its keys are strings and its numbers finite.
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("valid JSON"))
}

fn split(kwargs: Entries<'_>, limits: &Limits) -> Result<ToolCall, RetryError> {
    // One pass takes the reserved keys out; what stays is the flat context, in the parent's
    // order.
    let [
        mut task,
        mut run_identifier,
        mut expected_outputs,
        mut output_contract_schema,
        mut context_value,
    ]: [Option<&RawValue>; 5] = [None; 5];
    let mut flat: Entries<'_> = Vec::with_capacity(kwargs.len());
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
    let shadowing: Vec<&str> = [
        ("task", task.is_some()),
        ("run_identifier", run_identifier.is_some()),
        ("expected_outputs", expected_outputs.is_some()),
        ("output_contract_schema", output_contract_schema.is_some()),
    ]
    .into_iter()
    .filter_map(|(key, present)| present.then_some(key))
    .collect();
    let task = match task {
        Some(raw) if raw.get().starts_with('"') => string_of(raw)?,
        Some(other) => {
            return Err(RetryError::call(
                ErrorKind::TaskNotString,
                format!("`task` is {}", raw_type_name(other)),
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
        Some(raw) if raw.get().starts_with('"') => Some(string_of(raw)?),
        Some(other) => {
            return Err(RetryError::call(
                ErrorKind::RunIdentifierNotString,
                format!("`run_identifier` is {}", raw_type_name(other)),
                "Pass `run_identifier` as a string, or leave it out",
            ));
        }
    };
    let expected_outputs = expected_outputs
        .map(|raw| value_of(raw, limits, 1, "expected_outputs"))
        .transpose()?;
    let output_contract_schema = output_contract_schema
        .map(|raw| value_of(raw, limits, 1, "output_contract_schema"))
        .transpose()?;
    // A context given as a string is parsed from this copy, which its entries borrow.
    let mut unescaped = String::new();
    let explicit = match context_value {
        Some(raw) => explicit_context(raw, &mut unescaped, limits)?.map(|mut entries| {
            entries.retain(|(k, _)| !shadowing.contains(&k.as_ref()));
            entries
        }),
        None => None,
    };
    let (merged, from_context) = splice(flat, explicit, explicit_at);
    let mut map = Map::new();
    for (i, (key, raw)) in merged.iter().enumerate() {
        let value = value_of(raw, limits, 1, key)?;
        // An entry of `context` stood one level deeper in the call than a flat key.
        if (from_context.start..from_context.end).contains(&i) {
            check_shape(&value, limits, 2)?;
        }
        map.insert(key.clone().into_owned(), value);
    }
    let context = Value::Object(map);
    check_shape(&context, limits, 0)?;
    let entries = merged
        .into_iter()
        .map(|(key, raw)| (key.into_owned(), raw.to_owned()))
        .collect();
    Ok(ToolCall {
        task,
        run_identifier,
        expected_outputs,
        output_contract_schema,
        context,
        entries,
    })
}

/// The string a raw JSON string holds.
fn string_of(raw: &RawValue) -> Result<String, RetryError> {
    serde_json::from_str::<Text<'_>>(raw.get())
        .map(|t| t.0.into_owned())
        .map_err(|e| RetryError::call(ErrorKind::NotJson, e.to_string(), "Send valid JSON"))
}

/// The `Value` of raw JSON at `key` (nested `outer_depth` deep): a value nested past
/// serde_json's own limit is "too deep", a number no `f64` holds names its path.
fn value_of(
    raw: &RawValue,
    limits: &Limits,
    outer_depth: usize,
    key: &str,
) -> Result<Value, RetryError> {
    serde_json::from_str::<Value>(raw.get()).map_err(|e| {
        let room = limits.max_depth.saturating_sub(outer_depth);
        if text_depth(raw.get()) > room {
            return too_deep(limits);
        }
        match crate::json::out_of_range(raw.get()) {
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
    flat: Entries<'a>,
    explicit: Option<Entries<'a>>,
    at: usize,
) -> (Entries<'a>, std::ops::Range<usize>) {
    let Some(explicit) = explicit else {
        return (flat, 0..0);
    };
    // A set, not a list: the clash test must stay O(1) for a call with many keys.
    let taken: HashSet<&str> = flat.iter().map(|(k, _)| k.as_ref()).collect();
    let explicit: Entries<'a> = explicit
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
    raw: &'a RawValue,
    unescaped: &'a mut String,
    limits: &Limits,
) -> Result<Option<Entries<'a>>, RetryError> {
    let not_object = |found: &str| {
        RetryError::call(
            ErrorKind::ContextNotObject,
            format!("`context` is {found}"),
            "Pass the agent's data as top-level fields, or `context` as a JSON object",
        )
    };
    match raw.get().as_bytes().first() {
        Some(b'n') => Ok(None),
        Some(b'{') => crate::json::entries(raw.get())
            .map(Some)
            .map_err(|e| RetryError::call(ErrorKind::NotJson, e.to_string(), "Send valid JSON")),
        Some(b'"') => {
            *unescaped = string_of(raw)?;
            // The outer parse saw this as one string: its inner depth counts from level 1.
            match parse_within(unescaped, limits, 1) {
                Ok(Parsed::Object(entries)) => Ok(Some(entries)),
                Ok(Parsed::Other(found)) => Err(not_object(&format!("a string holding {found}"))),
                Err(Unparsed::Limit(e)) => Err(e),
                Err(Unparsed::NotJson(_)) => Err(not_object("a string that is not JSON")),
            }
        }
        _ => Err(not_object(raw_type_name(raw))),
    }
}

/// What [`parse_within`] found.
enum Parsed<'a> {
    /// An object's entries, in order.
    Object(Entries<'a>),
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
    let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r']);
    let parsed = if trimmed.starts_with('{') {
        serde_json::from_str::<Ordered<'_>>(text).map(|o| Parsed::Object(o.0))
    } else {
        serde_json::from_str::<&RawValue>(text).map(|raw| Parsed::Other(raw_type_name(raw)))
    };
    match parsed {
        Ok(Parsed::Other(_)) if room.is_none_or(|room| text_depth(text) > room) => {
            Err(Unparsed::Limit(too_deep(limits)))
        }
        Ok(parsed) => Ok(parsed),
        Err(_) if room.is_none_or(|room| text_depth(text) > room) => {
            Err(Unparsed::Limit(too_deep(limits)))
        }
        Err(e) => Err(Unparsed::NotJson(e)),
    }
}

fn raw_type_name(raw: &RawValue) -> &'static str {
    crate::json::type_name(raw.get())
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
    use crate::limits::text_depth;
    use crate::limits::value_depth_exceeds;

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
}
