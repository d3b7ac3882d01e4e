//! Tool-call kwargs: reserved keys apart, everything else merged into the context.
//!
//! Parents pass data flat beside `task`; a sub-agent that only read `context` dropped it. Here
//! every non-reserved key lands in the context, in the parent's order.

use crate::error::{ErrorKind, RetryError};
use crate::limits::{
    Exceeded, Limits, check_shape, text_depth, text_exceeds, too_deep, too_many_values,
};
use serde_json::{Map, Value};

/// Keys of a tool call that are about the call, not data for the agent (defined in
/// `agent-schema`, so the code generator refuses the same keys in input contracts).
pub use agent_schema::RESERVED_KEYS;

/// A parent's tool call, split into the reserved keys and the merged context.
#[derive(Debug, Clone, PartialEq)]
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
}

impl ToolCall {
    /// Parses kwargs text with the default [`Limits`].
    pub fn from_json_str(text: &str) -> Result<Self, RetryError> {
        Self::from_json_str_with(text, &Limits::default())
    }

    /// Parses kwargs text within `limits`: the size is checked before parsing, the depth on the
    /// parsed value (see [`parse_within`]), so an oversized or 100,000-deep input costs no stack.
    pub fn from_json_str_with(text: &str, limits: &Limits) -> Result<Self, RetryError> {
        let value = parse_within(text, limits, 0).map_err(|e| match e {
            Unparsed::Limit(e) => e,
            Unparsed::NotJson(e) => RetryError::call(
                ErrorKind::NotJson,
                e.to_string(),
                "Send the tool call arguments as one JSON object",
            ),
        })?;
        Self::from_checked_value(value, limits)
    }

    /// Splits an already parsed kwargs value; its depth is checked iteratively first.
    pub fn from_value(value: Value, limits: &Limits) -> Result<Self, RetryError> {
        check_shape(&value, limits, 0)?;
        Self::from_checked_value(value, limits)
    }

    fn from_checked_value(value: Value, limits: &Limits) -> Result<Self, RetryError> {
        let Value::Object(kwargs) = value else {
            return Err(RetryError::call(
                ErrorKind::NotObject,
                format!("got {}", type_name(&value)),
                "Send the tool call arguments as one JSON object with a `task` string",
            ));
        };
        split(kwargs, limits)
    }

    /// A call built in code: `task` plus a context object.
    pub fn new(task: impl Into<String>, context: Map<String, Value>) -> Self {
        Self {
            task: task.into(),
            run_identifier: None,
            expected_outputs: None,
            output_contract_schema: None,
            context: Value::Object(context),
        }
    }

    /// The merged context; always a JSON object.
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
}

fn split(mut kwargs: Map<String, Value>, limits: &Limits) -> Result<ToolCall, RetryError> {
    // One pass takes the reserved keys out; what stays is the flat context, in the parent's
    // order, without a second map being built (or a key hashed again).
    let [
        mut task,
        mut run_identifier,
        mut expected_outputs,
        mut output_contract_schema,
    ] = [None, None, None, None];
    let (mut context_value, mut explicit_at, mut kept) = (None, 0, 0);
    kwargs.retain(|key, value| {
        let slot = match key.as_str() {
            "task" => &mut task,
            "run_identifier" => &mut run_identifier,
            "expected_outputs" => &mut expected_outputs,
            "output_contract_schema" => &mut output_contract_schema,
            "context" => {
                explicit_at = kept;
                &mut context_value
            }
            _ => {
                kept += 1;
                return true;
            }
        };
        *slot = Some(std::mem::take(value));
        false
    });
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
        Some(Value::String(task)) => task,
        Some(other) => {
            return Err(RetryError::call(
                ErrorKind::TaskNotString,
                format!("`task` is {}", type_name(&other)),
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
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id),
        Some(other) => {
            return Err(RetryError::call(
                ErrorKind::RunIdentifierNotString,
                format!("`run_identifier` is {}", type_name(&other)),
                "Pass `run_identifier` as a string, or leave it out",
            ));
        }
    };
    let explicit = match context_value {
        Some(value) => explicit_context(value, limits)?.map(|mut map| {
            map.retain(|k, _| !shadowing.contains(&k.as_str()));
            map
        }),
        None => None,
    };
    Ok(ToolCall {
        task,
        run_identifier,
        expected_outputs,
        output_contract_schema,
        context: Value::Object(splice(kwargs, explicit, explicit_at)),
    })
}

/// Puts the explicit context's entries where `context` stood in the parent's call; a flat key
/// of the same name wins and keeps its own place.
fn splice(
    flat: Map<String, Value>,
    explicit: Option<Map<String, Value>>,
    at: usize,
) -> Map<String, Value> {
    let Some(explicit) = explicit else {
        return flat;
    };
    let mut merged = Map::with_capacity(flat.len() + explicit.len());
    let mut flat = flat.into_iter();
    for (key, value) in flat.by_ref().take(at) {
        merged.insert(key, value);
    }
    // A map, not a list: the clash test must stay O(1) for a call with many keys.
    let rest: Map<String, Value> = flat.collect();
    for (key, value) in explicit {
        let shadowed = merged.contains_key(&key) || rest.contains_key(&key);
        if !shadowed {
            merged.insert(key, value);
        }
    }
    merged.extend(rest);
    merged
}

/// `context` may be absent, null, an object, or a string holding an object (LLMs stringify).
fn explicit_context(
    value: Value,
    limits: &Limits,
) -> Result<Option<Map<String, Value>>, RetryError> {
    let not_object = |found: &str| {
        RetryError::call(
            ErrorKind::ContextNotObject,
            format!("`context` is {found}"),
            "Pass the agent's data as top-level fields, or `context` as a JSON object",
        )
    };
    match value {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        Value::String(text) => {
            // The outer parse saw this as one string: its inner depth counts from level 1.
            match parse_within(&text, limits, 1) {
                Ok(Value::Object(map)) => Ok(Some(map)),
                Ok(other) => Err(not_object(&format!(
                    "a string holding {}",
                    type_name(&other)
                ))),
                Err(Unparsed::Limit(e)) => Err(e),
                Err(Unparsed::NotJson(_)) => Err(not_object("a string that is not JSON")),
            }
        }
        other => Err(not_object(type_name(&other))),
    }
}

/// Why [`parse_within`] returned no value.
enum Unparsed {
    /// Over the size or depth limit: the retry error says which.
    Limit(RetryError),
    /// Not JSON, within the limits.
    NotJson(serde_json::Error),
}

/// Parses `text` whose nesting counts from `outer_depth`, within `limits`.
///
/// The size is checked first. Then the text is parsed, and the depth is checked on the value
/// with an explicit stack: that touches each array and object once, where scanning the text
/// first cost a byte-by-byte state machine over every byte. Parsing first costs no stack either:
/// serde_json refuses nesting past its own recursion limit (128), and a text that fails to parse
/// is then scanned, so that one too deep to parse is "too deep", not "not JSON".
fn parse_within(text: &str, limits: &Limits, outer_depth: usize) -> Result<Value, Unparsed> {
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
    match serde_json::from_str::<Value>(text) {
        Ok(value) => match check_shape(&value, limits, outer_depth) {
            Ok(()) => Ok(value),
            Err(e) => Err(Unparsed::Limit(e)),
        },
        Err(_) if room.is_none_or(|room| text_depth(text) > room) => {
            Err(Unparsed::Limit(too_deep(limits)))
        }
        Err(e) => Err(Unparsed::NotJson(e)),
    }
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
