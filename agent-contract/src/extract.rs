//! Finding the JSON in a model's answer: plain JSON, a fenced block, or JSON inside prose, so
//! an answer wrapped in explanation still parses.

use crate::limits::{Limits, check_shape};
use crate::retry::{ErrorKind, RetryError};
use serde_json::Value;

/// How many `{` positions in prose are tried before giving up, so an answer full of braces
/// costs bounded time.
const MAX_CANDIDATES: usize = 64;

/// The first JSON object in `answer`, within `limits`; an answer with none is an output retry
/// error, so the agent is asked again rather than the run failing.
///
/// Depth is checked on the parsed value (serde_json's own recursion limit keeps parsing off
/// the stack's edge), so no quote in the prose around the JSON can hide nesting.
pub fn extract_json(answer: &str, limits: &Limits) -> Result<Value, RetryError> {
    extract_json_text(answer, limits).map(|(value, _)| value)
}

/// [`extract_json`], with the part of `answer` that holds the JSON, as the model wrote it.
#[doc(hidden)]
pub fn extract_json_text<'a>(
    answer: &'a str,
    limits: &Limits,
) -> Result<(Value, &'a str), RetryError> {
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
    let found = match find(answer) {
        Found::Object(value, text) => {
            check_shape(&value, limits, 0)?;
            (value, text)
        }
        Found::TooDeep => return Err(too_deep(limits)),
        Found::OutOfRange(path) => return Err(crate::limits::out_of_range_error(path, limits)),
        Found::Nothing => {
            return Err(RetryError::call(
                ErrorKind::OutputNotJson,
                "the answer contains no JSON object",
                "Answer with one JSON object that matches your output contract",
            ));
        }
    };
    Ok(found)
}

enum Found<'a> {
    /// The object, and the text it was parsed from.
    Object(Value, &'a str),
    TooDeep,
    /// An object with a number no `f64` holds, at this path.
    OutOfRange(Vec<crate::retry::PathSegment>),
    Nothing,
}

fn too_deep(limits: &Limits) -> RetryError {
    let kind = ErrorKind::TooDeep {
        limit: limits.max_depth,
    };
    let message = kind.to_string();
    RetryError::call(
        kind,
        message,
        "Answer with a less deeply nested JSON object",
    )
}

fn find(answer: &str) -> Found<'_> {
    let trimmed = answer.trim();
    match serde_json::from_str(trimmed) {
        Ok(value @ Value::Object(_)) => return Found::Object(value, trimmed),
        Err(e) if trimmed.starts_with('{') => {
            if let Some(found) = out_of_range(&e, trimmed) {
                return found;
            }
        }
        _ => {}
    }
    if let Some((value, text)) = fenced(answer) {
        return Found::Object(value, text);
    }
    embedded(answer)
}

/// The first ```json (or bare ```) block that holds an object.
fn fenced(answer: &str) -> Option<(Value, &str)> {
    let mut rest = answer;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let close = body.find("```")?;
        let text = body[..close].trim();
        if let Ok(value @ Value::Object(_)) = serde_json::from_str(text) {
            return Some((value, text));
        }
        rest = &body[close + 3..];
    }
    None
}

/// The first object that parses from a `{` in the prose, ignoring what follows it.
///
/// A candidate that fails is skipped up to where its parse stopped: an object nested in a
/// broken outer object is never taken for the answer, and the whole search reads the text a
/// bounded number of times.
fn embedded(answer: &str) -> Found<'_> {
    let mut from = 0;
    for _ in 0..MAX_CANDIDATES {
        let Some(at) = answer[from..].find('{').map(|i| from + i) else {
            return Found::Nothing;
        };
        let rest = &answer[at..];
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match values.next().unwrap_or(Ok(Value::Null)) {
            Ok(value) => return Found::Object(value, &rest[..values.byte_offset()]),
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                return Found::TooDeep;
            }
            Err(e) => {
                if let Some(found) = out_of_range(&e, rest) {
                    return found;
                }
                from = at + offset_of(rest, e.line(), e.column()).max(1);
            }
        }
        if from >= answer.len() {
            return Found::Nothing;
        }
        while !answer.is_char_boundary(from) {
            from += 1;
        }
    }
    Found::Nothing
}

/// An object that failed to parse only for a number no `f64` holds: that number's path.
fn out_of_range<'a>(error: &serde_json::Error, text: &str) -> Option<Found<'a>> {
    if !error.to_string().starts_with("number out of range") {
        return None;
    }
    crate::json::out_of_range(text).map(Found::OutOfRange)
}

/// The byte offset of serde_json's 1-based line and column in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column).min(text.len())
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
    fn a_broken_outer_object_does_not_yield_its_inner_object() {
        let answer = r#"Best pick: {"venue": "Lakeview", "backup": {"venue": "Basement"}, "notes": Available}"#;
        let e = extract_json(answer, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutputNotJson);
    }

    #[test]
    fn a_quote_in_the_prose_does_not_hide_depth() {
        let answer = format!(
            "Note: a 5\" screen. {}1{}",
            "{\"a\":".repeat(100),
            "}".repeat(100)
        );
        let e = extract_json(&answer, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep { limit: 64 });
        let answer = format!(
            "Note: a 5\" screen. {}1{}",
            "{\"a\":".repeat(60),
            "}".repeat(60)
        );
        assert!(extract_json(&answer, &Limits::default()).is_ok());
    }

    #[test]
    fn many_nested_openings_are_read_once() {
        // 64 openings before an unterminated string: the first failed parse skips them all.
        let answer = format!("{}\"{}", "{\"k\":".repeat(64), "x".repeat(100_000));
        let e = extract_json(&answer, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutputNotJson);
    }

    #[test]
    fn deep_answer_is_refused_without_recursion() {
        let deep = "{\"a\":".repeat(50_000);
        let e = extract_json(&deep, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep { limit: 64 });
    }
}
