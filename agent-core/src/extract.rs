//! Finding the JSON in a model's answer: plain JSON, a fenced block, or JSON inside prose
//! (seed 003, "Graceful JSON Parsing").

use crate::error::{ErrorKind, RetryError};
use crate::limits::{Limits, text_depth};
use serde_json::Value;

/// How many `{` positions in prose are tried before giving up, so an answer full of braces
/// costs bounded time.
const MAX_CANDIDATES: usize = 64;

/// The first JSON object in `answer`, within `limits`; an answer with none is an output retry
/// error, so the agent is asked again rather than the run failing.
pub fn extract_json(answer: &str, limits: &Limits) -> Result<Value, RetryError> {
    if answer.len() > limits.max_bytes {
        let kind = ErrorKind::TooLarge {
            size: answer.len(),
            limit: limits.max_bytes,
        };
        let message = kind.to_string();
        return Err(RetryError::call(
            kind,
            message,
            "Answer with a shorter JSON object",
        ));
    }
    if text_depth(answer) > limits.max_depth {
        let kind = ErrorKind::TooDeep {
            limit: limits.max_depth,
        };
        let message = kind.to_string();
        return Err(RetryError::call(
            kind,
            message,
            "Answer with a less deeply nested JSON object",
        ));
    }
    let trimmed = answer.trim();
    if let Ok(value @ Value::Object(_)) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    if let Some(value) = fenced(answer) {
        return Ok(value);
    }
    embedded(answer).ok_or_else(|| {
        RetryError::call(
            ErrorKind::OutputNotJson,
            "the answer contains no JSON object",
            "Answer with one JSON object that matches your output contract",
        )
    })
}

/// The first ```json (or bare ```) block that holds an object.
fn fenced(answer: &str) -> Option<Value> {
    let mut rest = answer;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let close = body.find("```")?;
        if let Ok(value @ Value::Object(_)) = serde_json::from_str(body[..close].trim()) {
            return Some(value);
        }
        rest = &body[close + 3..];
    }
    None
}

/// The first object that parses from a `{` in the text, ignoring what follows it.
fn embedded(answer: &str) -> Option<Value> {
    answer
        .match_indices('{')
        .take(MAX_CANDIDATES)
        .find_map(|(at, _)| {
            let mut stream = serde_json::Deserializer::from_str(&answer[at..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(value @ Value::Object(_))) => Some(value),
                _ => None,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(answer: &str) -> Value {
        extract_json(answer, &Limits::default()).unwrap()
    }

    #[test]
    fn plain_fenced_and_embedded() {
        assert_eq!(get(r#" {"a": 1} "#), serde_json::json!({"a": 1}));
        assert_eq!(
            get("Here:\n```json\n{\"a\": 2}\n```\nDone."),
            serde_json::json!({"a": 2})
        );
        assert_eq!(
            get("I think {\"a\": 3} is right. {x}"),
            serde_json::json!({"a": 3})
        );
    }

    #[test]
    fn no_json_is_a_retry_error() {
        let e = extract_json("no json {here", &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutputNotJson);
        assert_eq!(e.error, "Output contains no JSON object");
    }

    #[test]
    fn deep_answer_is_refused_without_recursion() {
        let deep = "{\"a\":".repeat(50_000);
        let e = extract_json(&deep, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep { limit: 64 });
    }
}
