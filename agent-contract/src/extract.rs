//! Finding the JSON in a model's answer: plain JSON, a fenced block, or JSON inside prose, so
//! an answer wrapped in explanation still parses.
//!
//! The rule, which [`Locate`] follows on an answer that is still arriving:
//! 1. an answer that opens (after whitespace) with `{` is that object; the text after it is
//!    ignored, and an object that does not parse means the answer holds no JSON;
//! 2. else the first ```` ``` ```` fence whose body opens with `{` holds it, on the same terms;
//! 3. else the first `{` in the prose from which an object parses.
//!
//! Rules 1 and 2 commit to the first object: once it is read, nothing the model writes after
//! it changes which object is the answer, so a prefix check can decide on it as it streams.
//! An object with a key written twice does not parse (serde_json would keep the last value
//! silently, and the text kept as written would say otherwise).

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
        Found::Duplicate(key) => return Err(duplicate_key(&key, limits)),
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
    /// An object with this key twice.
    Duplicate(String),
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

/// The retry error of an object with `key` twice.
pub(crate) fn duplicate_key(key: &str, limits: &Limits) -> RetryError {
    let key = crate::truncate::truncate(key, limits.max_echo_bytes);
    RetryError::call(
        ErrorKind::OutputNotJson,
        format!("the answer's JSON object has the key `{key}` more than once"),
        "Answer with one JSON object that writes each key once",
    )
}

fn find(answer: &str) -> Found<'_> {
    let trimmed = answer.trim_start();
    if trimmed.starts_with('{') {
        return first_object(trimmed);
    }
    if let Some(found) = fenced(answer) {
        return found;
    }
    embedded(answer)
}

/// The object `text` opens with (text after it ignored), or why there is none.
fn first_object(text: &str) -> Found<'_> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Unique>();
    match values.next() {
        Some(Ok(Unique(value @ Value::Object(_)))) => {
            Found::Object(value, &text[..values.byte_offset()])
        }
        Some(Err(e)) => failure(&e, text).unwrap_or(Found::Nothing),
        _ => Found::Nothing,
    }
}

/// Where the rule looks for the answer's object, as offsets of a `{` in `answer`: the
/// answer's start, or the first fence whose body opens with one, or (at most
/// [`MAX_CANDIDATES`]) each `{` in the prose. What repair reads with its tolerant reader
/// when no object parses there.
pub(crate) fn candidates(answer: &str) -> Vec<usize> {
    let offset = |part: &str| answer.len() - part.len();
    let trimmed = answer.trim_start();
    if trimmed.starts_with('{') {
        return vec![offset(trimmed)];
    }
    let mut rest = answer;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let opened = body.trim_start();
        if opened.starts_with('{') {
            return vec![offset(opened)];
        }
        let Some(close) = body.find("```") else {
            break;
        };
        rest = &body[close + 3..];
    }
    answer
        .match_indices('{')
        .map(|(at, _)| at)
        .take(MAX_CANDIDATES)
        .collect()
}

/// The first ``` fence whose body opens with `{` (after whitespace): its object.
fn fenced(answer: &str) -> Option<Found<'_>> {
    let mut rest = answer;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        let opened = body.trim_start();
        if opened.starts_with('{') {
            return Some(first_object(opened));
        }
        let close = body.find("```")?;
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
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Unique>();
        match values.next().unwrap_or(Ok(Unique(Value::Null))) {
            Ok(Unique(value)) => return Found::Object(value, &rest[..values.byte_offset()]),
            Err(e) => {
                if let Some(found) = failure(&e, rest) {
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

/// What a failed parse of an object means when it is not a plain syntax error: too deep, a
/// key twice, a number out of range.
fn failure<'a>(error: &serde_json::Error, text: &str) -> Option<Found<'a>> {
    let message = error.to_string();
    if message.starts_with("recursion limit exceeded") {
        return Some(Found::TooDeep);
    }
    if let Some(key) = message.strip_prefix(DUPLICATE) {
        let key = key.split(DUPLICATE_END).next().unwrap_or_default();
        return Some(Found::Duplicate(key.to_owned()));
    }
    out_of_range(error, text)
}

const DUPLICATE: &str = "duplicate key \u{1}";
const DUPLICATE_END: char = '\u{2}';

/// A JSON value whose objects have no key twice (a `Value` otherwise).
struct Unique(Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "{DUPLICATE}{key}{DUPLICATE_END}"
                )));
            }
            let Unique(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
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

/// Where an answer that is still arriving holds its JSON object: rules 1 and 2 of the module
/// docs, followed delta by delta. The object's text starts at the `{` that [`Locate::json`]
/// first returns; an answer in prose (rule 3) has no committed object while it streams.
#[derive(Debug, Default)]
pub(crate) struct Locate {
    place: Place,
    /// Bytes of the answer read before the current delta.
    offset: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Whitespace before anything.
    #[default]
    Start,
    /// Prose, with the backticks of a fence seen in a row.
    Prose(u8),
    /// A fence's info line (```` ```json ````).
    FenceInfo,
    /// Whitespace at the start of a fence's body.
    FenceStart,
    /// A fence whose body is not an object, with the backticks of its close seen in a row.
    FenceOther(u8),
    /// The object: everything from here on is its text.
    Json,
}

impl Locate {
    /// The part of `delta` that belongs to the answer's object (from its `{` on, and all of
    /// each later delta), with its offset in the whole answer; `None` while no object is
    /// committed to.
    pub(crate) fn json<'a>(&mut self, delta: &'a str) -> Option<(usize, &'a str)> {
        let base = self.offset;
        self.offset += delta.len();
        if self.place == Place::Json {
            return Some((base, delta));
        }
        for (i, c) in delta.char_indices() {
            self.place = match (self.place, c) {
                (Place::Start | Place::FenceStart, '{') => {
                    self.place = Place::Json;
                    return Some((base + i, &delta[i..]));
                }
                (Place::Start, c) if c.is_whitespace() => Place::Start,
                (Place::FenceStart, c) if c.is_whitespace() => Place::FenceStart,
                (Place::Start | Place::Prose(_), '`') => match self.place {
                    Place::Prose(2) => Place::FenceInfo,
                    Place::Prose(n) => Place::Prose(n + 1),
                    _ => Place::Prose(1),
                },
                (Place::Start | Place::Prose(_), _) => Place::Prose(0),
                (Place::FenceInfo, '\n') => Place::FenceStart,
                (Place::FenceInfo, _) => Place::FenceInfo,
                (Place::FenceStart | Place::FenceOther(_), '`') => match self.place {
                    Place::FenceOther(2) => Place::Prose(0),
                    Place::FenceOther(n) => Place::FenceOther(n + 1),
                    _ => Place::FenceOther(1),
                },
                (Place::FenceStart | Place::FenceOther(_), _) => Place::FenceOther(0),
                (Place::Json, _) => unreachable!("returned above"),
            };
        }
        None
    }
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
    fn the_first_object_of_an_answer_that_opens_with_one_or_of_a_fence_is_the_answer() {
        // What a model writes after its object does not change which object is the answer.
        assert_eq!(
            get("{\"a\": 1} or ```json\n{\"a\": 2}\n```"),
            serde_json::json!({"a": 1})
        );
        let e = extract_json("{\"a\": oops} ```json\n{\"a\": 2}\n```", &Limits::default());
        assert_eq!(e.unwrap_err().kind, ErrorKind::OutputNotJson);
        // A fence's object is read as JSON: a fence inside one of its strings is text.
        assert_eq!(
            get("Here:\n```json\n{\"a\": \"x ``` y\"} trailing\n```"),
            serde_json::json!({"a": "x ``` y"})
        );
        // A fence that holds no object is skipped.
        assert_eq!(
            get("```sh\nls\n```\n```\n{\"a\": 3}\n```"),
            serde_json::json!({"a": 3})
        );
    }

    #[test]
    fn a_key_written_twice_is_refused() {
        for answer in [
            "{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}}",
            "Here: {\"b\": {\"c\": 1, \"c\": 2}}",
        ] {
            let e = extract_json(answer, &Limits::default()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::OutputNotJson);
            assert_eq!(
                e.validation_message,
                "the answer's JSON object has the key `c` more than once"
            );
        }
    }

    #[test]
    fn locate_follows_the_same_rule_delta_by_delta() {
        let answer = "Sure.\n```sh\nls {x}\n```\n``` json \n  {\"a\": 1}";
        let start = answer.rfind('{').unwrap();
        for cut in 0..answer.len() {
            let mut locate = Locate::default();
            let first = locate.json(&answer[..cut]);
            let second = locate.json(&answer[cut..]);
            let found = first.or(second).map(|(at, _)| at);
            assert_eq!(found, Some(start), "cut at {cut}");
        }
        let mut locate = Locate::default();
        assert_eq!(locate.json("I think {\"a\": 1} is right"), None);
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
