//! Explicit limits on untrusted input.
//!
//! Tool-call arguments are written by a model that can be steered by whatever it read, so every
//! dimension that costs memory, stack or time has a bound, and crossing it is a retry error.

use crate::retry::{ErrorKind, PathSegment, RetryError};
use crate::truncate::truncate;
use serde_json::Value;

/// Bounds applied to every tool call before and while it is checked.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted kwargs text (or answer), in bytes (default 4 MiB; tool calls are
    /// rarely above 1 MiB).
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (default 64).
    pub max_depth: usize,
    /// Most violations listed in a retry error's `errors` (default 20).
    pub max_errors: usize,
    /// Most bytes of an offending value echoed in any message (default 200).
    pub max_echo_bytes: usize,
    /// Most caller keys listed in `provided_fields` (default 100), so a call with a million
    /// small keys does not get them all echoed back.
    pub max_listed_fields: usize,
    /// Most JSON values (every object, array, string, number, boolean and null) in one call
    /// or answer (default 250,000): what validating and rendering cost grows with.
    pub max_values: usize,
    /// Largest rendered user prompt, in bytes (default 8 MiB): nesting indents every line, so
    /// a prompt can outgrow the call it came from.
    pub max_prompt_bytes: usize,
    /// Most fixes one lossless repair of an answer or a call may make (default 32): a value
    /// that needs more is no slip of the pen, and goes back to its writer.
    pub max_repairs: usize,
    /// Largest media value (an image, a document, audio) of a call, in decoded bytes
    /// (default 2 MiB).
    pub max_media_bytes: usize,
    /// The URL schemes a media field may name (default `https` alone). `file` is refused
    /// whatever this says.
    pub media_schemes: &'static [&'static str],
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 4 * 1024 * 1024,
            max_depth: 64,
            max_errors: 20,
            max_echo_bytes: 200,
            max_listed_fields: 100,
            max_values: 250_000,
            max_prompt_bytes: 8 * 1024 * 1024,
            max_repairs: 32,
            max_media_bytes: 2 * 1024 * 1024,
            media_schemes: &["https"],
        }
    }
}

/// Each setter returns the limits with one bound changed, so they read as one chain from
/// [`Limits::default`] (bounds added later break no caller).
impl Limits {
    /// These limits with [`max_bytes`](Self::max_bytes) set.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// These limits with [`max_depth`](Self::max_depth) set.
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// These limits with [`max_errors`](Self::max_errors) set.
    pub fn with_max_errors(mut self, max_errors: usize) -> Self {
        self.max_errors = max_errors;
        self
    }

    /// These limits with [`max_echo_bytes`](Self::max_echo_bytes) set.
    pub fn with_max_echo_bytes(mut self, max_echo_bytes: usize) -> Self {
        self.max_echo_bytes = max_echo_bytes;
        self
    }

    /// These limits with [`max_listed_fields`](Self::max_listed_fields) set.
    pub fn with_max_listed_fields(mut self, max_listed_fields: usize) -> Self {
        self.max_listed_fields = max_listed_fields;
        self
    }

    /// These limits with [`max_values`](Self::max_values) set.
    pub fn with_max_values(mut self, max_values: usize) -> Self {
        self.max_values = max_values;
        self
    }

    /// These limits with [`max_prompt_bytes`](Self::max_prompt_bytes) set.
    pub fn with_max_prompt_bytes(mut self, max_prompt_bytes: usize) -> Self {
        self.max_prompt_bytes = max_prompt_bytes;
        self
    }

    /// These limits with [`max_repairs`](Self::max_repairs) set.
    pub fn with_max_repairs(mut self, max_repairs: usize) -> Self {
        self.max_repairs = max_repairs;
        self
    }

    /// These limits with [`max_media_bytes`](Self::max_media_bytes) set.
    pub fn with_max_media_bytes(mut self, max_media_bytes: usize) -> Self {
        self.max_media_bytes = max_media_bytes;
        self
    }

    /// These limits with [`media_schemes`](Self::media_schemes) set.
    pub fn with_media_schemes(mut self, media_schemes: &'static [&'static str]) -> Self {
        self.media_schemes = media_schemes;
        self
    }
}

/// Checks a parsed value's shape in one walk with an explicit stack (no recursion): nesting
/// within `max_depth` (counting from `outer_depth`, for a value found inside another), at most
/// `max_values` values, and only finite numbers (`1e400` is no `f64`). The walk stops at the
/// first problem, so its cost is bounded by the limits, not by the value.
#[doc(hidden)]
pub fn check_shape(value: &Value, limits: &Limits, outer_depth: usize) -> Result<(), RetryError> {
    let Some(room) = limits.max_depth.checked_sub(outer_depth) else {
        return Err(too_deep(limits));
    };
    let mut count = 0usize;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        count += 1;
        if count > limits.max_values {
            return Err(too_many_values(limits));
        }
        let level = depth + 1;
        match v {
            Value::Array(_) | Value::Object(_) if level > room => return Err(too_deep(limits)),
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, level))),
            Value::Object(map) => stack.extend(map.values().map(|c| (c, level))),
            Value::Number(n) if !is_finite(n) => return Err(non_finite(value, limits)),
            _ => {}
        }
    }
    Ok(())
}

/// A rendered prompt, if it is within `max_prompt_bytes`; else the retry error for the caller
/// whose data made it that large.
#[doc(hidden)]
pub fn bounded_prompt(prompt: String, limits: &Limits) -> Result<String, RetryError> {
    if prompt.len() <= limits.max_prompt_bytes {
        return Ok(prompt);
    }
    let kind = ErrorKind::PromptTooLarge {
        size: prompt.len(),
        limit: limits.max_prompt_bytes,
    };
    let message = kind.to_string();
    Err(RetryError::call(
        kind,
        message,
        "Send less data, or less deeply nested data: summarize what the agent does not need",
    ))
}

/// Whether a number is a finite `f64` (integers within i64/u64 always are).
fn is_finite(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(f64::is_finite)
}

/// The retry error for nesting past the limit.
pub(crate) fn too_deep(limits: &Limits) -> RetryError {
    let kind = ErrorKind::TooDeep {
        limit: limits.max_depth,
    };
    let message = kind.to_string();
    RetryError::call(kind, message, "Flatten the data: nest it less deeply")
}

pub(crate) fn too_many_values(limits: &Limits) -> RetryError {
    let kind = ErrorKind::TooManyValues {
        limit: limits.max_values,
    };
    let message = kind.to_string();
    RetryError::call(
        kind,
        message,
        "Send less data: summarize or drop what the agent does not need",
    )
}

/// The retry error for the first non-finite number, naming its path (found by a second walk,
/// on the error path only).
fn non_finite(value: &Value, limits: &Limits) -> RetryError {
    let mut stack: Vec<(&Value, Vec<PathSegment>)> = vec![(value, Vec::new())];
    let mut path = Vec::new();
    while let Some((v, at)) = stack.pop() {
        match v {
            Value::Number(n) if !is_finite(n) => {
                path = at;
                break;
            }
            Value::Array(items) => stack.extend(items.iter().enumerate().rev().map(|(i, c)| {
                let mut p = at.clone();
                p.push(PathSegment::Index(i));
                (c, p)
            })),
            Value::Object(map) => stack.extend(map.iter().rev().map(|(k, c)| {
                let mut p = at.clone();
                p.push(PathSegment::Key(
                    truncate(k, limits.max_echo_bytes).into_owned(),
                ));
                (c, p)
            })),
            _ => {}
        }
    }
    out_of_range_error(path, limits)
}

/// The retry error for a number no `f64` holds (`1e400`), at `path`.
pub(crate) fn out_of_range_error(path: Vec<PathSegment>, limits: &Limits) -> RetryError {
    let path: Vec<PathSegment> = path
        .into_iter()
        .map(|s| match s {
            PathSegment::Key(k) => {
                PathSegment::Key(truncate(&k, limits.max_echo_bytes).into_owned())
            }
            index => index,
        })
        .collect();
    let shown: Vec<String> = path.iter().map(ToString::to_string).collect();
    let message = format!(
        "the number at `/{}` is out of range: a JSON number must be a finite double",
        shown.join("/")
    );
    let mut error = RetryError::call(
        ErrorKind::NumberOutOfRange,
        message,
        "Send the number within ±1.7e308, or as a string if the contract takes one",
    );
    error.path = path.clone();
    if let Some(first) = error.errors.first_mut() {
        first.path = path;
    }
    error
}
