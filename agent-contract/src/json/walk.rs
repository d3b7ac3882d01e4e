//! Serializing JSON text as it was written (`Walk`).

use super::tape::{RawToken, Text, dedupe};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};
use std::borrow::Cow;

/// Serializes JSON text: objects in document order (a repeated key keeps its first place and
/// its last value), strings decoded, numbers handed over as their text (serde_json's raw-value
/// token), so a serde_json serializer writes them verbatim and `|markdown` shows them as
/// written. The text is one JSON value that serde_json already read (a slice of a call, a
/// `RawValue`); it is scanned once into a borrowed tree, not re-read level by level.
pub(crate) struct Walk<'a>(pub(crate) &'a str);

impl Serialize for Walk<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut scan = Scan {
            text: self.0,
            at: 0,
        };
        let node = scan.value(0).map_err(ser::Error::custom)?;
        scan.space();
        if scan.at != self.0.len() {
            return Err(ser::Error::custom(scan.error("trailing characters")));
        }
        node.serialize(serializer)
    }
}

/// One JSON value borrowed from its text.
enum Node<'a> {
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    Array(Vec<Node<'a>>),
    Str(Cow<'a, str>),
    /// A number as written.
    Number(&'a str),
    Bool(bool),
    Null,
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
            Self::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Self::Str(text) => serializer.serialize_str(text),
            Self::Number(text) => RawToken(text).serialize(serializer),
            Self::Bool(b) => serializer.serialize_bool(*b),
            Self::Null => serializer.serialize_unit(),
        }
    }
}

/// Nesting [`Scan`] follows at most: serde_json's own limit, which the text already passed.
pub(crate) const SCAN_DEPTH: usize = 128;

/// A one-pass reader of JSON text into [`Node`]s. It expects JSON serde_json accepted, and
/// answers anything else with an error (never a panic).
pub(crate) struct Scan<'a> {
    pub(crate) text: &'a str,
    pub(crate) at: usize,
}

impl<'a> Scan<'a> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {} of a JSON value", self.at)
    }

    pub(crate) fn space(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips whitespace, then `byte` if it is next.
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let next = self.text.as_bytes().get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    fn value(&mut self, depth: usize) -> Result<Node<'a>, String> {
        if depth > SCAN_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        self.space();
        let rest = &self.text[self.at..];
        match rest.as_bytes().first() {
            Some(b'{') => {
                self.at += 1;
                let mut entries = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.space();
                        let key = self.string()?;
                        if !self.eat(b':') {
                            return Err(self.error("expected `:`"));
                        }
                        entries.push((key, self.value(depth + 1)?));
                        if self.eat(b',') {
                            continue;
                        }
                        if self.eat(b'}') {
                            break;
                        }
                        return Err(self.error("expected `,` or `}`"));
                    }
                }
                dedupe(&mut entries);
                Ok(Node::Object(entries))
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b',') {
                            continue;
                        }
                        if self.eat(b']') {
                            break;
                        }
                        return Err(self.error("expected `,` or `]`"));
                    }
                }
                Ok(Node::Array(items))
            }
            Some(b'"') => self.string().map(Node::Str),
            Some(b'-' | b'0'..=b'9') => {
                let len = rest
                    .bytes()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(rest.len());
                self.at += len;
                Ok(Node::Number(&rest[..len]))
            }
            _ => {
                let (node, len) = if rest.starts_with("true") {
                    (Node::Bool(true), 4)
                } else if rest.starts_with("false") {
                    (Node::Bool(false), 5)
                } else if rest.starts_with("null") {
                    (Node::Null, 4)
                } else {
                    return Err(self.error("expected a JSON value"));
                };
                self.at += len;
                Ok(node)
            }
        }
    }

    /// A string at `self.at`: borrowed when it has no escape, else decoded by serde_json.
    fn string(&mut self) -> Result<Cow<'a, str>, String> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        if bytes.get(start) != Some(&b'"') {
            return Err(self.error("expected a string"));
        }
        let mut at = start + 1;
        let mut escaped = false;
        loop {
            let Some(found) = memchr::memchr2(b'"', b'\\', &bytes[at..]) else {
                return Err(self.error("unterminated string"));
            };
            at += found;
            if bytes[at] == b'"' {
                break;
            }
            escaped = true;
            at += 2;
            if at > bytes.len() {
                return Err(self.error("unterminated string"));
            }
        }
        self.at = at + 1;
        if escaped {
            let Text(text) =
                serde_json::from_str(&self.text[start..=at]).map_err(|e| e.to_string())?;
            Ok(Cow::Owned(text.into_owned()))
        } else {
            Ok(Cow::Borrowed(&self.text[start + 1..at]))
        }
    }
}
