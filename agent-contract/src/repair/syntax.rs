//! The tolerant reader: one JSON value as models write it, out as strict JSON.
//!
//! It knows JSON's structure and four slips: a trailing comma, a comment, a single-quoted
//! string, a key written as a bare identifier. Every other byte is copied as written, so what
//! it cannot tell apart (`True`, `NaN`, `undefined`, a missing quote) stays broken and the
//! strict read that follows refuses it. No recursion: an explicit stack, within
//! `max_depth`; one pass over the text.

use super::record::{Repair, RepairKind, Repairs, pointer_segment};
use crate::limits::Limits;

/// The strict text of the value at the start of a text, and what was fixed to get it.
pub(super) struct Fixed {
    /// Strict JSON (if serde_json agrees: the reader checks structure, not scalars).
    pub(super) text: String,
    /// Bytes of the source read, up to the end of the value.
    pub(super) end: usize,
    pub(super) fixes: Vec<Repair>,
}

/// A container being read.
enum Frame {
    /// An object, and the key whose value is being read (for paths).
    Object(Option<String>),
    /// An array, and the index of the item being read.
    Array(usize),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A value.
    Value,
    /// A value or `]` (just after `[`).
    ItemOrClose,
    /// A key or `}` (just after `{`).
    KeyOrClose,
    /// A key (after a comma).
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or the container's close, after a value.
    Next,
}

struct Reader<'a> {
    src: &'a str,
    bytes: &'a [u8],
    at: usize,
    out: String,
    stack: Vec<Frame>,
    fixes: Vec<Repair>,
    repairs: Repairs,
    limits: &'a Limits,
}

/// Reads the value `src` opens with (after whitespace and comments); `None` when its
/// structure is broken beyond the four slips, a slip's kind is switched off, or it is past
/// the limits (depth, number of fixes).
pub(super) fn strict(src: &str, repairs: Repairs, limits: &Limits) -> Option<Fixed> {
    let mut reader = Reader {
        src,
        bytes: src.as_bytes(),
        at: 0,
        out: String::with_capacity(src.len() + 16),
        stack: Vec::new(),
        fixes: Vec::new(),
        repairs,
        limits,
    };
    reader.run()?;
    Some(Fixed {
        text: reader.out,
        end: reader.at,
        fixes: reader.fixes,
    })
}

impl Reader<'_> {
    fn run(&mut self) -> Option<()> {
        let mut want = Want::Value;
        loop {
            self.space()?;
            let byte = *self.bytes.get(self.at)?;
            want = match want {
                Want::Value | Want::ItemOrClose => {
                    if want == Want::ItemOrClose && byte == b']' {
                        self.close()?
                    } else {
                        self.value(byte)?
                    }
                }
                Want::KeyOrClose | Want::Key => {
                    if want == Want::KeyOrClose && byte == b'}' {
                        self.close()?
                    } else {
                        self.key(byte)?;
                        Want::Colon
                    }
                }
                Want::Colon => {
                    if byte != b':' {
                        return None;
                    }
                    self.copy(1);
                    Want::Value
                }
                Want::Next => match (byte, self.stack.last()?) {
                    (b',', frame) => {
                        let object = matches!(frame, Frame::Object(_));
                        let after = self.skip_quietly(self.at + 1)?;
                        let closes = self.bytes.get(after).copied() == Some(closer(object));
                        if closes {
                            self.fix(RepairKind::TrailingComma, ",", "")?;
                            self.at += 1;
                            Want::Next
                        } else {
                            self.copy(1);
                            match self.stack.last_mut()? {
                                Frame::Object(_) => Want::Key,
                                Frame::Array(index) => {
                                    *index += 1;
                                    Want::Value
                                }
                            }
                        }
                    }
                    (b'}', Frame::Object(_)) | (b']', Frame::Array(_)) => self.close()?,
                    _ => return None,
                },
            };
            if want == Want::Next && self.stack.is_empty() {
                return Some(());
            }
        }
    }

    /// A value starting with `byte`: what to read next.
    fn value(&mut self, byte: u8) -> Option<Want> {
        match byte {
            b'{' | b'[' => {
                if self.stack.len() >= self.limits.max_depth {
                    return None;
                }
                self.copy(1);
                Some(if byte == b'{' {
                    self.stack.push(Frame::Object(None));
                    Want::KeyOrClose
                } else {
                    self.stack.push(Frame::Array(0));
                    Want::ItemOrClose
                })
            }
            b'"' => {
                let end = self.double_quoted()?;
                self.copy(end - self.at);
                Some(Want::Next)
            }
            b'\'' => {
                self.single_quoted()?;
                Some(Want::Next)
            }
            _ => {
                // A number or a literal, as written: serde_json decides.
                let len = self.bytes[self.at..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
                    .count();
                if len == 0 {
                    return None;
                }
                self.copy(len);
                Some(Want::Next)
            }
        }
    }

    /// A key starting with `byte`, kept on its frame for paths.
    fn key(&mut self, byte: u8) -> Option<()> {
        let key = match byte {
            b'"' => {
                let end = self.double_quoted()?;
                let key = serde_json::from_str::<String>(&self.src[self.at..end]).ok()?;
                self.copy(end - self.at);
                key
            }
            b'\'' => self.single_quoted()?,
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
                let len = self.bytes[self.at..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
                    .count();
                let key = &self.src[self.at..self.at + len];
                let quoted = format!("\"{key}\"");
                self.fix(RepairKind::UnquotedKey, key, &quoted)?;
                self.out.push_str(&quoted);
                self.at += len;
                key.to_owned()
            }
            _ => return None,
        };
        if let Some(Frame::Object(slot)) = self.stack.last_mut() {
            *slot = Some(key);
        }
        Some(())
    }

    /// Closes the innermost container (its closer is at `at`).
    fn close(&mut self) -> Option<Want> {
        self.stack.pop()?;
        self.copy(1);
        Some(Want::Next)
    }

    /// The end of the double-quoted string at `at` (past its closing quote).
    fn double_quoted(&self) -> Option<usize> {
        let mut i = self.at + 1;
        while let Some(&b) = self.bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    /// The single-quoted string at `at`, written double-quoted; returns what it holds.
    fn single_quoted(&mut self) -> Option<String> {
        let body = &self.src[self.at + 1..];
        let mut written = String::from("\"");
        let mut chars = body.char_indices();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '\'' => break i,
                '\\' => match chars.next()? {
                    (_, '\'') => written.push('\''),
                    (_, other) => {
                        written.push('\\');
                        written.push(other);
                    }
                },
                '"' => written.push_str("\\\""),
                c => written.push(c),
            }
        };
        written.push('"');
        let held = serde_json::from_str::<String>(&written).ok()?;
        let before = &self.src[self.at..self.at + end + 2];
        self.fix(RepairKind::SingleQuotes, before, &written)?;
        self.out.push_str(&written);
        self.at += end + 2;
        Some(held)
    }

    /// Whitespace (copied) and comments (removed, each a fix), up to the next token.
    fn space(&mut self) -> Option<()> {
        loop {
            let spaces = self.bytes[self.at..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            self.copy(spaces);
            let end = match self.comment_end(self.at) {
                Some(end) => end?,
                None => return Some(()),
            };
            let comment = &self.src[self.at..end];
            self.fix(RepairKind::Comment, comment.trim_end(), "")?;
            self.at = end;
        }
    }

    /// Past whitespace and comments from `from`, recording nothing.
    fn skip_quietly(&self, mut from: usize) -> Option<usize> {
        loop {
            while matches!(self.bytes.get(from), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                from += 1;
            }
            match self.comment_end(from) {
                Some(end) => from = end?,
                None => return Some(from),
            }
        }
    }

    /// The end of the comment at `from`: `None` when there is none, `Some(None)` when it is
    /// not closed. A line comment ends before its newline, which is copied as whitespace.
    fn comment_end(&self, from: usize) -> Option<Option<usize>> {
        let rest = self.bytes.get(from..)?;
        if rest.starts_with(b"//") {
            let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            return Some(Some(from + len));
        }
        if rest.starts_with(b"/*") {
            let close = memchr::memmem::find(&rest[2..], b"*/");
            return Some(close.map(|at| from + 2 + at + 2));
        }
        None
    }

    fn copy(&mut self, len: usize) {
        self.out.push_str(&self.src[self.at..self.at + len]);
        self.at += len;
    }

    /// Records a fix of `kind` in the innermost container; `None` when the kind is switched
    /// off or the fixes are past the limit.
    fn fix(&mut self, kind: RepairKind, before: &str, after: &str) -> Option<()> {
        if !self.repairs.allows(kind) || self.fixes.len() >= self.limits.max_repairs {
            return None;
        }
        let path = self.container();
        self.fixes
            .push(Repair::new(path, kind, before, after, self.limits));
        Some(())
    }

    /// The JSON pointer of the innermost container.
    fn container(&self) -> String {
        let mut path = String::new();
        let Some((_, outer)) = self.stack.split_last() else {
            return path;
        };
        for frame in outer {
            match frame {
                Frame::Object(key) => pointer_segment(&mut path, key.as_deref().unwrap_or("")),
                Frame::Array(index) => pointer_segment(&mut path, &index.to_string()),
            }
        }
        path
    }
}

fn closer(object: bool) -> u8 {
    if object { b'}' } else { b']' }
}
