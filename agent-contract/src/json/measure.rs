//! Scanners that measure JSON before or without parsing it: the depth and value count of text,
//! the depth of a parsed value. Each is one pass with no recursion, so hostile input (100,000
//! levels deep) costs time in its size and no stack.

use serde_json::Value;

/// Nesting depth of JSON text, found by a byte scan with no recursion, so a 100,000-deep input
/// costs one pass and no stack. Brackets inside strings are skipped. Invalid JSON still gets a
/// depth: the parser reports its own error afterwards.
#[doc(hidden)]
pub fn text_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in outside_strings(text) {
        match b {
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

/// The bytes of JSON text that stand outside strings, the opening `"` of each string
/// included (so a scan sees where a string value starts); what a string holds is skipped.
fn outside_strings(text: &str) -> impl Iterator<Item = u8> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    text.bytes().filter(move |&b| {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            return false;
        }
        in_string = b == b'"';
        true
    })
}

/// Whether JSON text would hold more than `max_values` values or nest deeper than
/// `max_depth`, found by a byte scan that builds nothing, so a call that would cost far more
/// as a parsed tree than as text is refused before it is parsed. Invalid JSON gets an answer
/// too; the parser reports its own error afterwards.
///
/// A value is the root, each object member's value (one per `:`), and each array element.
#[doc(hidden)]
pub fn text_exceeds(text: &str, max_values: usize, max_depth: usize) -> Option<Exceeded> {
    count_values(text, max_values, max_depth).err()
}

/// How many values JSON text holds (see [`text_exceeds`]), counting no further than `max + 1`.
pub(crate) fn text_values(text: &str, max: usize) -> usize {
    count_values(text, max, usize::MAX).unwrap_or(max.saturating_add(1))
}

/// The values of JSON text, counted in one byte scan that stops at the first bound it breaks.
fn count_values(text: &str, max_values: usize, max_depth: usize) -> Result<usize, Exceeded> {
    let mut values = 1usize;
    // One bit per open container: is it an array?
    let mut arrays: Vec<bool> = Vec::new();
    let mut element_next = false;
    for b in outside_strings(text) {
        if b.is_ascii_whitespace() {
            continue;
        }
        if element_next {
            element_next = false;
            if b != b']' {
                values += 1;
            }
        }
        match b {
            b'[' | b'{' => {
                arrays.push(b == b'[');
                element_next = b == b'[';
                if arrays.len() > max_depth {
                    return Err(Exceeded::Depth);
                }
            }
            b']' | b'}' => {
                arrays.pop();
            }
            b',' => element_next = arrays.last() == Some(&true),
            b':' => values += 1,
            _ => {}
        }
        if values > max_values {
            return Err(Exceeded::Values);
        }
    }
    Ok(values)
}

/// What [`Scanned::flaw`] finds wrong with a value's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flaw {
    /// Nested deeper than the room it had.
    TooDeep,
    /// A number no `f64` holds (`1e400`).
    OutOfRange,
}

/// What one pass over a call's text found about one top-level entry's value: its nesting and
/// whether it holds a number no `f64` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// How deep its arrays and objects nest (0 for a scalar).
    pub(crate) depth: usize,
    /// Whether one of its numbers is out of a double's range.
    pub(crate) out_of_range: bool,
}

impl Scanned {
    /// Whether the value fits in `room` levels with every number a finite double (a number out
    /// of range reported first, as parsing would).
    pub(crate) fn flaw(self, room: usize) -> Result<(), Flaw> {
        if self.out_of_range {
            Err(Flaw::OutOfRange)
        } else if self.depth > room {
            Err(Flaw::TooDeep)
        } else {
            Ok(())
        }
    }
}

/// Which bound [`text_exceeds`] found broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum Exceeded {
    /// More values than allowed.
    Values,
    /// Deeper nesting than allowed.
    Depth,
}

/// Nesting depth of an already parsed value, walked with an explicit stack.
///
/// Stops early once `limit` is exceeded, so the cost is bounded by the part of the value that
/// fits within the limit.
#[doc(hidden)]
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
