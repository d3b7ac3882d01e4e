//! Explicit limits on untrusted input.
//!
//! Tool-call arguments are written by a model that can be steered by whatever it read, so every
//! dimension that costs memory, stack or time has a bound, and crossing it is a retry error.

use serde_json::Value;

/// Bounds applied to every tool call before and while it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted kwargs text, in bytes (default 16 MiB).
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
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 64,
            max_errors: 20,
            max_echo_bytes: 200,
            max_listed_fields: 100,
        }
    }
}

/// Nesting depth of JSON text, found by a byte scan with no recursion, so a 100,000-deep input
/// costs one pass and no stack. Brackets inside strings are skipped. Invalid JSON still gets a
/// depth: the parser reports its own error afterwards.
pub fn text_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Nesting depth of an already parsed value, walked with an explicit stack.
///
/// Stops early once `limit` is exceeded, so the cost is bounded by the part of the value that
/// fits within the limit.
pub fn value_depth_exceeds(value: &Value, limit: usize) -> bool {
    let compound = |v: &&Value| matches!(v, Value::Array(_) | Value::Object(_));
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        let level = depth + 1;
        match v {
            Value::Array(_) | Value::Object(_) if level > limit => return true,
            Value::Array(items) => stack.extend(items.iter().filter(compound).map(|c| (c, level))),
            Value::Object(map) => stack.extend(map.values().filter(compound).map(|c| (c, level))),
            _ => {}
        }
    }
    false
}

/// Cuts `text` to at most `max` bytes on a char boundary, marking the cut with `…`.
pub fn truncate(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_of_text_ignores_brackets_in_strings() {
        assert_eq!(text_depth(r#"{"a": "[[[{{{", "b": [1, [2]]}"#), 3);
        assert_eq!(text_depth(r#"{"a": "\"[["}"#), 1);
        assert_eq!(text_depth("42"), 0);
    }

    #[test]
    fn deep_text_is_measured_without_recursion() {
        let text = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(text_depth(&text), 100_000);
    }

    #[test]
    fn value_depth() {
        let v: Value = serde_json::from_str(r#"{"a": [[1]]}"#).unwrap();
        assert!(!value_depth_exceeds(&v, 3));
        assert!(value_depth_exceeds(&v, 2));
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h…");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
