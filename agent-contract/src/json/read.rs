//! The one reader of JSON text: one pass, with no recursion, that checks JSON's grammar as
//! serde_json does and writes the [`Tape`] of every document serde_json accepts: whitespace runs
//! stepped over eight bytes at a time, strings sixteen, in branch-free code the compiler turns
//! into vector compares; escaped and repeated keys resolved as serde_json's map resolves them.

use super::measure::{Flaw, Scanned};
use super::tape::{Kind, TAPE_KEYS, Tape, TapeValue, TapeWalk, Text, Tok, dedupe};
use serde::ser::{self, Serialize, Serializer};
use std::borrow::Cow;

/// How deep the reader follows arrays and objects: serde_json's own limit, which any text it
/// read already passed.
pub(crate) const SCAN_DEPTH: usize = 128;

/// One entry of a top-level object, read by [`object_entries`]: its key (decoded when it holds
/// an escape), its value's text, what [`scan_value`](super::scan_value) would find in it, and
/// where its value stands on the call's tape.
pub(crate) type TopEntry<'a> = (Cow<'a, str>, &'a str, Scanned, u32);

/// The entries of `text`, if it is one JSON object: each key, its value's text and what
/// [`scan_value`](super::scan_value) would find in it, in one pass that checks JSON's grammar
/// as serde_json does, and writes the values' [`Tape`]. A repeated top-level key is left to
/// the caller (each is an entry).
///
/// `None` means "not one JSON object": not an object, not JSON, or nesting past 128 levels.
/// The caller then reads the text with serde_json, which writes the error. So this pass only
/// ever accepts what serde_json accepts: a string's bytes below 0x20, an escape other than
/// JSON's, a number outside JSON's grammar, anything but whitespace after the object all give
/// `None`.
pub(crate) fn object_entries(text: &str) -> Option<(Vec<TopEntry<'_>>, Tape)> {
    u32::try_from(text.len()).ok()?;
    let bytes = text.as_bytes();
    let mut at = space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = space(bytes, at + 1);
    let mut entries = Vec::with_capacity(8);
    // A part takes at least two bytes of text (`0,`); most take more: room for most calls
    // without regrowing, never more than the text is long.
    let mut pass = Pass::new(text, Tape::buffer(text.len() / 8));
    if bytes.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            let (end, escaped) = string_end(bytes, at)?;
            let key = if escaped {
                Cow::Owned(decoded(&text[at..end])?)
            } else {
                Cow::Borrowed(&text[at + 1..end - 1])
            };
            at = colon(bytes, end)?;
            let root = pass.toks.len() as u32;
            let (end, scanned) = pass.value(at)?;
            entries.push((key, &text[at..end], scanned, root));
            at = space(bytes, end);
            match bytes.get(at) {
                Some(b',') => at = space(bytes, at + 1),
                Some(b'}') => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (space(bytes, at) == bytes.len()).then(|| (entries, pass.tape()))
}

impl Tape {
    /// The tape of `text`, one JSON value; `None` for text that is not one (or nests past
    /// [`SCAN_DEPTH`]).
    pub(crate) fn read(text: &str) -> Option<Tape> {
        u32::try_from(text.len()).ok()?;
        let bytes = text.as_bytes();
        let mut pass = Pass::new(text, Vec::with_capacity(text.len() / 8));
        let (end, _) = pass.value(space(bytes, 0))?;
        (space(bytes, end) == bytes.len()).then(|| pass.tape())
    }
}

/// What the one pass finds in the text of one JSON value that serde_json already read (so
/// it nests at most [`SCAN_DEPTH`] levels): whether it fits in `room` levels, its numbers
/// finite doubles.
pub(crate) fn scan_value(text: &str, room: usize) -> Result<(), Flaw> {
    let mut pass = Pass::new(text, Vec::new());
    match pass.value(space(text.as_bytes(), 0)) {
        Some((_, scanned)) if u32::try_from(text.len()).is_ok() => scanned.flaw(room),
        _ => Err(Flaw::TooDeep),
    }
}

/// Serializes JSON text as written: objects in document order (a repeated key keeps its first
/// place and its last value), strings decoded, numbers handed over as their text (serde_json's
/// raw-value token), so a serde_json serializer writes them verbatim and `|markdown` shows them
/// as written. The text is read once into its tape, which [`TapeWalk`] writes.
pub(crate) struct Walk<'a>(pub(crate) &'a str);

impl Serialize for Walk<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tape = Tape::read(self.0).ok_or_else(|| ser::Error::custom("not one JSON value"))?;
        TapeWalk(TapeValue::on(self.0, &tape, 0)).serialize(serializer)
    }
}

/// The string a JSON string's text (with its quotes) holds, decoded by serde_json; `None` for
/// one it refuses (a lone surrogate).
fn decoded(quoted: &str) -> Option<String> {
    serde_json::from_str::<Text<'_>>(quoted)
        .ok()
        .map(|Text(text)| text.into_owned())
}

/// The first byte at or after `at` that is not JSON whitespace. After a whitespace byte,
/// spaces are stepped over eight at a time: pretty-printed JSON indents each line with a run
/// of them.
fn space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
        while let Some(word) = word_at(bytes, at) {
            let other = word ^ (ONES * u64::from(b' '));
            if other != 0 {
                // The first byte that is not a space (little-endian: the lowest).
                at += (other.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
    }
    at
}

const ONES: u64 = u64::from_ne_bytes([1; 8]);

/// The eight bytes at `at` as a little-endian word (the first byte lowest), if there are eight.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// Where a string's content needs a look, in its first 32 bytes from `at`: the first `"`,
/// `\\` or byte below 0x20, found sixteen bytes at a time (most keys and many values are
/// short, where `memchr`'s setup costs more than their bytes). `Err` with where to search on
/// when there is none in those bytes or fewer than sixteen are left.
fn short_stop(bytes: &[u8], mut at: usize) -> Result<usize, usize> {
    for _ in 0..2 {
        let Some(chunk) = bytes.get(at..at + 16).and_then(|c| c.try_into().ok()) else {
            return Err(at);
        };
        let stops = stops(chunk);
        if stops != 0 {
            return Ok(at + (stops.trailing_zeros() / 8) as usize);
        }
        at += 16;
    }
    Err(at)
}

/// The bytes of `chunk` a string stops at (`"`, `\\`, below 0x20) as `0xFF`, the others as
/// `0`, the first lowest: written byte by byte without a branch, so that it compiles to a few
/// vector instructions (compares, an `or`) on every target that has them.
#[inline(always)]
fn stops(chunk: &[u8; 16]) -> u128 {
    let mut marks = [0u8; 16];
    for (mark, &b) in marks.iter_mut().zip(chunk) {
        *mark = if (b == b'"') | (b == b'\\') | (b < 0x20) {
            0xFF
        } else {
            0
        };
    }
    u128::from_le_bytes(marks)
}

/// After a key ending before `at`: whitespace, `:`, whitespace; where the value starts.
fn colon(bytes: &[u8], at: usize) -> Option<usize> {
    // The common forms, `"key": value` and `"key":value`, read without a whitespace loop.
    let blank = |b: &u8| matches!(b, b' ' | b'\n' | b'\t' | b'\r');
    match bytes.get(at..at + 3) {
        Some([b':', b' ', next]) if !blank(next) => return Some(at + 2),
        Some([b':', next, _]) if !blank(next) => return Some(at + 1),
        _ => {}
    }
    let at = space(bytes, at);
    (bytes.get(at) == Some(&b':')).then(|| space(bytes, at + 1))
}

/// The end of the string starting at `at` (one past its closing quote), and whether it holds
/// an escape; `None` if there is no string there or it breaks JSON's rules.
#[inline(always)]
fn string_end(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    // Most strings end, unescaped, within sixteen bytes: decided here, inline, with no call.
    if bytes.get(at) == Some(&b'"')
        && let Some(chunk) = bytes.get(at + 1..at + 17).and_then(|c| c.try_into().ok())
    {
        let stops = stops(chunk);
        if stops == 0 {
            // Sixteen bytes of content: the search goes on after them.
            return string_rest(bytes, at + 17);
        }
        let stop = at + 1 + (stops.trailing_zeros() / 8) as usize;
        if bytes[stop] == b'"' {
            return Some((stop + 1, false));
        }
        return string_rest(bytes, stop);
    }
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    string_rest(bytes, at + 1)
}

/// [`string_end`] from `at`, inside a string with no escape before `at`: for a string with an
/// escape, a control character or more than sixteen bytes, and near the text's end.
fn string_rest(bytes: &[u8], mut at: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        at = match short_stop(bytes, at) {
            Ok(stop) => stop,
            Err(on) => {
                let found = memchr::memchr2(b'"', b'\\', bytes.get(on..)?)?;
                // No control character may stand in a string; folded, not searched, so it
                // vectorizes.
                if bytes[on..on + found]
                    .iter()
                    .fold(false, |acc, &b| acc | (b < 0x20))
                {
                    return None;
                }
                on + found
            }
        };
        match bytes[at] {
            b'"' => return Some((at + 1, escaped)),
            b'\\' => {}
            // A control character.
            _ => return None,
        }
        escaped = true;
        at += match bytes.get(at + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
            b'u' if bytes.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
            _ => return None,
        };
    }
}

/// The end of the number starting at `at` in JSON's grammar, and whether it is out of a
/// double's range (only an exponent or more than 300 digits can be, as in [`scan_value`]).
fn number_end(text: &str, at: usize) -> Option<(usize, bool)> {
    let bytes = text.as_bytes();
    let digits = |mut at: usize| {
        let start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        (at > start).then_some(at)
    };
    let start = at;
    let mut at = at + usize::from(bytes.get(at) == Some(&b'-'));
    at = match bytes.get(at) {
        Some(b'0') => at + 1,
        Some(b'1'..=b'9') => digits(at)?,
        _ => return None,
    };
    if bytes.get(at) == Some(&b'.') {
        at = digits(at + 1)?;
    }
    let mut exponent = false;
    if let Some(b'e' | b'E') = bytes.get(at) {
        exponent = true;
        at += 1;
        at += usize::from(matches!(bytes.get(at), Some(b'+' | b'-')));
        at = digits(at)?;
    }
    let out_of_range =
        (exponent || at - start > 300) && serde_json::from_str::<f64>(&text[start..at]).is_err();
    Some((at, out_of_range))
}

/// An open container, while the one pass reads it.
#[derive(Clone, Copy)]
struct Open {
    /// Its place on the tape.
    tok: usize,
    /// Where its keys start among the pass's keys.
    keys: usize,
    /// How many parts it has so far.
    len: u32,
    /// Whether one of its keys may repeat another: a key seen twice, an escaped key (which
    /// may spell another differently), or more than [`TAPE_KEYS`] keys (past which keys are
    /// not compared one by one). The object is then resolved when it closes.
    check: bool,
}

/// The one pass's state: the tape written so far, the keys of the objects open now (to find
/// a repeated one), and the open containers.
struct Pass<'a> {
    text: &'a str,
    toks: Vec<Tok>,
    /// The escaped keys, decoded (see [`Tape::keys`]).
    decoded: Vec<Box<str>>,
    keys: Vec<&'a [u8]>,
    open: Vec<Open>,
}

impl<'a> Pass<'a> {
    fn new(text: &'a str, toks: Vec<Tok>) -> Self {
        Self {
            text,
            toks,
            decoded: Vec::new(),
            // Room for the keys and containers open at once in most calls, allocated once.
            keys: Vec::with_capacity(32),
            open: Vec::with_capacity(16),
        }
    }

    fn tape(self) -> Tape {
        Tape {
            toks: self.toks,
            keys: self.decoded,
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) {
        let next = self.toks.len() as u32 + 1;
        // Every offset fits: the text's length was checked against `u32`.
        self.toks.push(Tok {
            kind,
            start: start as u32,
            end: end as u32,
            len: 0,
            next,
        });
    }

    /// After `{` or `,` in the innermost open object: its next key, `:` and where the value
    /// starts. A key that may repeat another marks its object for [`Pass::resolve`].
    fn key(&mut self, at: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let (end, escaped) = string_end(bytes, at)?;
        // Compared as bytes: a slice of the text's bytes needs no test for char boundaries.
        let key = &bytes[at + 1..end - 1];
        let open = self.open.last_mut()?;
        let mut tok = Tok {
            kind: Kind::Str,
            start: at as u32,
            end: end as u32,
            len: 0,
            next: self.toks.len() as u32 + 1,
        };
        if escaped {
            open.check = true;
            tok.kind = Kind::Escaped;
            tok.len = self.decoded.len() as u32;
            self.decoded
                .push(decoded(&self.text[at..end])?.into_boxed_str());
        } else if !open.check
            && (self.keys.len() - open.keys >= TAPE_KEYS || self.keys[open.keys..].contains(&key))
        {
            open.check = true;
        }
        self.keys.push(key);
        self.toks.push(tok);
        colon(bytes, end)
    }

    /// The end of the JSON value starting at `at` (no whitespace before it), with what
    /// [`scan_value`](super::scan_value) would find in it. One loop and a stack of open
    /// containers, no recursion; past [`SCAN_DEPTH`] levels it gives up (`None`).
    fn value(&mut self, mut at: usize) -> Option<(usize, Scanned)> {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut scanned = Scanned {
            depth: 0,
            out_of_range: false,
        };
        self.open.clear();
        self.keys.clear();
        loop {
            // A value starts at `at`.
            match *bytes.get(at)? {
                open @ (b'{' | b'[') => {
                    if self.open.len() == SCAN_DEPTH {
                        return None;
                    }
                    let object = open == b'{';
                    self.open.push(Open {
                        tok: self.toks.len(),
                        keys: self.keys.len(),
                        len: 0,
                        check: false,
                    });
                    let kind = if object { Kind::Object } else { Kind::Array };
                    self.push(kind, at, at);
                    scanned.depth = scanned.depth.max(self.open.len());
                    at = space(bytes, at + 1);
                    let close = if object { b'}' } else { b']' };
                    if bytes.get(at) == Some(&close) {
                        at += 1;
                        self.close(at)?;
                    } else {
                        if object {
                            at = self.key(at)?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    let (end, escaped) = string_end(bytes, at)?;
                    let kind = if escaped { Kind::Escaped } else { Kind::Str };
                    self.push(kind, at, end);
                    at = end;
                }
                b'-' | b'0'..=b'9' => {
                    let (end, out) = number_end(text, at)?;
                    scanned.out_of_range |= out;
                    self.push(Kind::Number, at, end);
                    at = end;
                }
                b't' if bytes[at..].starts_with(b"true") => {
                    self.push(Kind::True, at, at + 4);
                    at += 4;
                }
                b'f' if bytes[at..].starts_with(b"false") => {
                    self.push(Kind::False, at, at + 5);
                    at += 5;
                }
                b'n' if bytes[at..].starts_with(b"null") => {
                    self.push(Kind::Null, at, at + 4);
                    at += 4;
                }
                _ => return None,
            }
            // After a value: close containers until one takes another value.
            loop {
                let Some(last) = self.open.last_mut() else {
                    return Some((at, scanned));
                };
                last.len += 1;
                let object = self.toks[last.tok].kind == Kind::Object;
                at = space(bytes, at);
                match (bytes.get(at)?, object) {
                    (b',', _) => {
                        at = space(bytes, at + 1);
                        if object {
                            at = self.key(at)?;
                        }
                        break;
                    }
                    (b'}', true) | (b']', false) => {
                        at += 1;
                        self.close(at)?;
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Closes the innermost open container, which ends before `end`.
    fn close(&mut self, end: usize) -> Option<()> {
        let open = self.open.pop()?;
        self.keys.truncate(open.keys);
        let next = self.toks.len() as u32;
        let tok = &mut self.toks[open.tok];
        (tok.end, tok.len, tok.next) = (end as u32, open.len, next);
        if open.check {
            self.resolve(open.tok);
        }
        Some(())
    }

    /// An object just closed whose keys may repeat: each key kept once, as serde_json's map
    /// keeps it (its first place, its last value). When one repeats, the object's parts (the
    /// last on the tape) are written again in that order.
    fn resolve(&mut self, object: usize) {
        let (text, toks, decoded) = (self.text, &self.toks, &self.decoded);
        let key = |at: usize| -> &str {
            let tok = toks[at];
            match tok.kind {
                Kind::Str => &text[tok.start as usize + 1..tok.end as usize - 1],
                _ => decoded.get(tok.len as usize).map_or("", |key| key),
            }
        };
        // Each entry: its key, and its key's and value's parts.
        let mut entries = Vec::with_capacity(toks[object].len as usize);
        let mut at = object + 1;
        for _ in 0..toks[object].len {
            let end = toks[at + 1].next as usize;
            entries.push((key(at), (at, at + 1..end)));
            at = end;
        }
        let len = entries.len();
        dedupe(&mut entries);
        if entries.len() == len {
            return;
        }
        let parts: Vec<_> = entries.into_iter().map(|(_, parts)| parts).collect();
        let base = object + 1;
        let mut written = Vec::with_capacity(self.toks.len() - base);
        for (key, value) in &parts {
            written.push(Tok {
                next: (base + written.len()) as u32 + 1,
                ..self.toks[*key]
            });
            // `next` counts from the tape's start: moved by as much as the value moves.
            let to = (base + written.len()) as u32;
            let from = value.start as u32;
            written.extend(self.toks[value.clone()].iter().map(|tok| Tok {
                next: tok.next - from + to,
                ..*tok
            }));
        }
        self.toks.truncate(base);
        self.toks.extend(written);
        let next = self.toks.len() as u32;
        let tok = &mut self.toks[object];
        (tok.len, tok.next) = (parts.len() as u32, next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::TapeValue;
    use crate::json::{Exceeded, Flaw, text_depth, text_exceeds, value_depth_exceeds};
    use proptest::prelude::*;
    use serde::Deserialize;
    use serde_json::Value;

    /// Each entry: key, value text, and the depth/number verdict with 0 to 3 levels of room.
    type Read = Option<Vec<(String, String, Vec<Result<(), Flaw>>)>>;

    /// What serde_json reads of `text` as the call's entries, and of each value with 0 to 3
    /// levels of room: a number no `f64` holds first, then nesting past the room.
    fn by_serde_json(text: &str) -> Read {
        let entries = crate::json::entries(text).ok()?;
        Some(
            entries
                .into_iter()
                .map(|(key, raw)| {
                    let out = crate::json::out_of_range(raw.get()).is_some();
                    // The depth of the text, as the call's checks measure it: a repeated
                    // key's dropped value counts, though the `Value` no longer holds it.
                    let depth = text_depth(raw.get());
                    let flaws = (0..4)
                        .map(|room| match () {
                            _ if out => Err(Flaw::OutOfRange),
                            _ if depth > room => Err(Flaw::TooDeep),
                            _ => Ok(()),
                        })
                        .collect();
                    (key.into_owned(), raw.get().to_owned(), flaws)
                })
                .collect(),
        )
    }

    /// A string's end found byte by byte, as JSON's grammar says.
    fn string_end_by_bytes(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
        let mut at = at + 1;
        let mut escaped = false;
        loop {
            match *bytes.get(at)? {
                b'"' => return Some((at + 1, escaped)),
                b'\\' => {
                    escaped = true;
                    at += match bytes.get(at + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        b'u' if bytes.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
                        _ => return None,
                    };
                }
                0..0x20 => return None,
                _ => at += 1,
            }
        }
    }

    #[test]
    fn stops_marks_each_byte_a_string_stops_at() {
        for b in 0..=255u8 {
            for at in 0..16 {
                let mut chunk = [b'a'; 16];
                chunk[at] = b;
                let stop = b == b'"' || b == b'\\' || b < 0x20;
                for (i, &mark) in stops(&chunk).to_le_bytes().iter().enumerate() {
                    let expected = if i == at && stop { 0xFF } else { 0 };
                    assert_eq!(mark, expected, "byte {b:#x} at {at}, mark {i}");
                }
            }
        }
    }

    #[test]
    fn a_string_ends_where_its_bytes_say_at_every_offset() {
        // Each byte that stops a string, each byte beside one, at every offset around the
        // sixteen-byte chunks (the first read inline) and the 32 bytes searched chunk by
        // chunk; with and without text after the string.
        let stops = [
            b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xff, b'n',
        ];
        for len in 0..64 {
            for &stop in &stops {
                for tail in [&b"\""[..], b"\\n\"", b"\\u00e9\"", b"\\x\"", b"", b"\" , 1"] {
                    let mut bytes = vec![b'"'];
                    bytes.extend(std::iter::repeat_n(b'a', len));
                    bytes.push(stop);
                    bytes.extend_from_slice(tail);
                    assert_eq!(
                        string_end(&bytes, 0),
                        string_end_by_bytes(&bytes, 0),
                        "{:?}",
                        String::from_utf8_lossy(&bytes)
                    );
                }
            }
        }
    }

    #[test]
    fn whitespace_is_stepped_over_at_every_length() {
        for len in 0..40 {
            for first in [" ", "\n", "\r\n", "\t"] {
                for after in ["", "x", "\t}", " \n ]"] {
                    let text = format!("{first}{}{after}", " ".repeat(len));
                    let expected =
                        text.len() - text.trim_start_matches([' ', '\n', '\t', '\r']).len();
                    assert_eq!(space(text.as_bytes(), 0), expected, "{text:?}");
                    assert_eq!(space(text.as_bytes(), text.len()), text.len());
                }
            }
            // Whatever byte ends the run, at whatever place in a word, it is not stepped over.
            for stop in (0..0x80u8).filter(|b| !b" \n\t\r".contains(b)) {
                let mut bytes = vec![b' '; len + 1];
                bytes.push(stop);
                bytes.extend_from_slice(b"\x01\x01\x01\x01\x01\x01\x01\x01");
                assert_eq!(space(&bytes, 0), len + 1, "{len} spaces, then {stop:#04x}");
            }
        }
    }

    #[test]
    fn a_colon_and_the_blanks_beside_it_are_read_in_every_form() {
        // The common `": "` is read without the whitespace loop; every other form with it.
        for before in ["", " ", "\n", "\t "] {
            for after in ["", " ", "  ", " \n", "\n", "\t", " \r\n ", "\r"] {
                for value in ["1", "\"v\"", "{}", "[true]", "x", ""] {
                    let key_end = 3;
                    let text = format!("\"k\"{before}:{after}{value}");
                    let expected = text.find(':').map(|colon| {
                        colon + 1 + text[colon + 1..].len()
                            - text[colon + 1..]
                                .trim_start_matches([' ', '\n', '\t', '\r'])
                                .len()
                    });
                    let expected =
                        expected.filter(|_| text[key_end..].trim_start().starts_with(':'));
                    assert_eq!(colon(text.as_bytes(), key_end), expected, "{text:?}");
                }
            }
        }
        // No colon: no value.
        assert_eq!(colon(b"\"k\" 1", 3), None);
        assert_eq!(colon(b"\"k\"", 3), None);
    }

    /// Checks the part of `toks` at `at` and what it holds, and returns where the part after
    /// it starts: every part's `next` is that place (a scalar's and a key's the part after it,
    /// a container's the part after its last), and a container holds `len` entries or items.
    fn well_formed(toks: &[Tok], at: usize) -> usize {
        let tok = toks[at];
        let end = match tok.kind {
            Kind::Object => (0..tok.len).fold(at + 1, |key, _| {
                assert_eq!(toks[key].next as usize, key + 1, "the key at {key}");
                well_formed(toks, key + 1)
            }),
            Kind::Array => (0..tok.len).fold(at + 1, |item, _| well_formed(toks, item)),
            _ => at + 1,
        };
        assert_eq!(tok.next as usize, end, "the part at {at}");
        end
    }

    /// The same from [`object_entries`], repeated keys resolved as serde_json does.
    fn by_one_pass(text: &str) -> Read {
        let (entries, tape) = object_entries(text)?;
        // The tape holds the entries' values one after the other, each well formed.
        let ends = entries.iter().skip(1).map(|e| e.3 as usize);
        for (entry, next) in entries.iter().zip(ends.chain([tape.toks.len()])) {
            assert_eq!(well_formed(&tape.toks, entry.3 as usize), next, "{text}");
        }
        // Each value the tape covers is written from it as from its own text.
        for &(_, value, _, at) in &entries {
            let on_tape = crate::json::TapeValue::on(text, &tape, at as usize);
            assert_eq!(
                crate::json::written(on_tape),
                serde_json::to_string(&crate::json::Walk(value)).ok(),
                "{value}"
            );
            // And a type reads from it what serde_json reads from the text: every part's
            // place in the text is right, scalars' included.
            assert_eq!(
                Value::deserialize(on_tape).ok(),
                serde_json::from_str::<Value>(value).ok(),
                "{value}"
            );
        }
        let mut entries: Vec<(Cow<'_, str>, (&str, Scanned))> = entries
            .into_iter()
            .map(|(key, value, scanned, _)| (key, (value, scanned)))
            .collect();
        crate::json::dedupe(&mut entries);
        Some(
            entries
                .into_iter()
                .map(|(key, (value, scanned))| {
                    let flaws = (0..4).map(|room| scanned.flaw(room)).collect();
                    (key.into_owned(), value.to_owned(), flaws)
                })
                .collect(),
        )
    }

    #[test]
    fn one_pass_reads_what_serde_json_reads() {
        for text in [
            "{}",
            " {\n} \n",
            r#"{"task": "t", "a": 1, "b": [1, {"c": [[]]}], "d": {}, "e": "x\"\\\/\n\u00e9"}"#,
            r#"{"n": -0.5e+3, "m": 0, "z": 1E400, "big": 1e308, "a": 1, "a": [true, false, null]}"#,
            "{\n  \"k\": {\"é\": \"ü\"},\n\t\"l\": []\r\n}",
            r#"{"a\n": 1, "b": {"\u0063": 1, "c": 2, "d\"": {"e": 1, "e": [2]}}}"#,
        ] {
            assert!(object_entries(text).is_some(), "{text}");
            assert_eq!(by_one_pass(text), by_serde_json(text), "{text}");
        }
        let at = |text| by_one_pass(text).unwrap()[0].2.clone();
        assert_eq!(
            at(r#"{"a": [[1]]}"#),
            [Err(Flaw::TooDeep), Err(Flaw::TooDeep), Ok(()), Ok(())]
        );
        assert_eq!(at(r#"{"a": [1e999]}"#), [Err(Flaw::OutOfRange); 4]);
        // A repeated key's dropped value still counts: its text nests two levels deep, though
        // the value kept (`null`) nests one. Found by `one_pass_agrees_on_objects_one_byte_off`.
        let repeated = r#"{"a": {"": {"b": 1}, "": null}}"#;
        assert_eq!(by_one_pass(repeated), by_serde_json(repeated));
        assert_eq!(
            at(repeated),
            [Err(Flaw::TooDeep), Err(Flaw::TooDeep), Ok(()), Ok(())]
        );
        // Past a double's range without an exponent: 400 digits are, 309 are not.
        let (out, fits) = (Err(Flaw::OutOfRange), Ok(()));
        for (digits, flaws) in [
            (400, [out; 4]),
            (309, [Err(Flaw::TooDeep), fits, fits, fits]),
        ] {
            let text = format!(r#"{{"a": [1{}]}}"#, "0".repeat(digits - 1));
            assert_eq!(by_one_pass(&text), by_serde_json(&text), "{digits} digits");
            assert_eq!(by_one_pass(&text).unwrap()[0].2, flaws, "{digits} digits");
        }
    }

    /// A repeated key is found whatever follows its closing quote: the key compared is the
    /// string's content alone, not the blank or `:` after it.
    #[test]
    fn a_repeated_key_is_found_whatever_follows_it() {
        for text in [
            r#"{"v": {"a": 1, "a" : 2}}"#,
            "{\"v\": {\"a\":1,\"a\"\n:2}}",
            r#"{"v": {"a" :1, "a": 2}}"#,
            r#"{"v": {"a"  : 1, "a"	: 2}}"#,
        ] {
            let (entries, tape) = object_entries(text).unwrap();
            let v = TapeValue::on(text, &tape, entries[0].3 as usize);
            assert_eq!(v.len(), 1, "{text}");
            assert_eq!(
                crate::json::written(v).as_deref(),
                Some(r#"{"a":2}"#),
                "{text}"
            );
        }
    }

    /// A repeated key is found whatever its length and wherever it stands, and keys that share
    /// their first eight bytes, or one that begins another, are not taken for one another: the
    /// tape's object holds each key once.
    #[test]
    fn a_repeated_key_is_found_at_every_length() {
        for len in 0..14 {
            let key = "abcdefghijklmn"[..len].to_owned();
            let longer = format!("{key}x");
            let other = format!("{}y", &key[..len.saturating_sub(1)]);
            for (first, second, repeated) in [
                (&key, &key, true),
                (&key, &longer, false),
                (&longer, &key, false),
                (&other, &key, false),
            ] {
                for tail in ["", ", \"z\": 3"] {
                    let text = format!(r#"{{"v": {{"{first}": 1, "{second}": 2{tail}}}}}"#);
                    let (entries, tape) = object_entries(&text).unwrap();
                    let object = TapeValue::on(&text, &tape, entries[0].3 as usize);
                    let keys = 2 + usize::from(!tail.is_empty()) - usize::from(repeated);
                    assert_eq!(object.len(), keys, "{text}");
                    assert_eq!(by_one_pass(&text), by_serde_json(&text), "{text}");
                }
            }
        }
    }

    /// Every value has its tape, objects past `TAPE_KEYS` keys and escaped or repeated keys
    /// included: the call's tape and an untyped value's own (the same reader) give what
    /// serde_json reads. A key repeats only within its own object.
    #[test]
    fn every_value_has_its_tape() {
        use crate::json::{Captured, RawJson, TAPE_KEYS};
        let keys = |n: usize| {
            (0..n)
                .map(|i| format!("\"k{i}\": {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let values = [
            format!("{{{}}}", keys(TAPE_KEYS)),
            format!("{{{}}}", keys(TAPE_KEYS + 1)),
            format!("[1, {{{}}}]", keys(TAPE_KEYS + 1)),
            format!("{{\"a\": {{{}}}, \"b\": 1}}", keys(TAPE_KEYS)),
            format!(
                "{{\"a\": {{{}}}, {}}}",
                keys(TAPE_KEYS),
                keys(TAPE_KEYS - 1)
            ),
            format!("{{\"a\": {{{}}}, {}}}", keys(2), keys(TAPE_KEYS)),
            // Repeated past `TAPE_KEYS` keys, where keys are compared when the object closes.
            format!("{{{}, \"k3\": \"last\", \"k40\": [1]}}", keys(TAPE_KEYS + 9)),
            // Repeated keys inside a repeated key's values, both moved when their objects close.
            r#"{"a": {"x": 1, "x": [2, {"y": 1, "y": 2}]}, "b": 0, "a": {"z": {"q": 1, "q": 3}}, "c": [{"d": 1, "d": {}}]}"#.to_owned(),
            r#"{"\u0061": 1, "a": 2, "\u0062": {"c": 1}, "b": {"c\u0000": 2}}"#.to_owned(),
            r#"{"a\"b": 1}"#.to_owned(),
            r#"{"b": {"a\u0062": 1}}"#.to_owned(),
            r#"{"a": 1, "a": 2}"#.to_owned(),
            r#"{"a": {"b": 1, "b": 2}}"#.to_owned(),
            r#"{"a": {"a": 1}, "b": {"a": 2}}"#.to_owned(),
            r#"[{"a": 1}, {"a": 2}]"#.to_owned(),
            r#"{"a": {"b": 1}, "b": 2}"#.to_owned(),
            r#"["a\n", {"k": "v"}]"#.to_owned(),
        ];
        for value in values {
            let text = format!(r#"{{"v": {value}}}"#);
            let (entries, tape) = object_entries(&text).unwrap();
            assert_eq!(well_formed(&tape.toks, 0), tape.toks.len(), "{value}");
            let on_call = TapeValue::on(&text, &tape, entries[0].3 as usize);
            let expected = serde_json::from_str::<Value>(&value).unwrap();
            assert_eq!(on_call.to_value().unwrap(), expected, "{value}");
            let raw: RawJson = serde_json::from_str(&value).unwrap();
            let own = raw.value().unwrap();
            assert_eq!(own.to_value().unwrap(), expected, "{value}");
            assert_eq!(crate::json::written(own), crate::json::written(on_call));
        }
    }

    #[test]
    fn one_pass_leaves_everything_else_to_serde_json() {
        let deep = format!(r#"{{"a": {}1{}}}"#, "[".repeat(129), "]".repeat(129));
        assert!(serde_json::from_str::<serde::de::IgnoredAny>(&deep).is_ok());
        for text in [
            "[1]",
            "1",
            "",
            "{",
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": -}"#,
            r#"{"a": 1e}"#,
            r#"{"a": .5}"#,
            r#"{"a": +1}"#,
            "{\"a\": \"\u{1}\"}",
            // Two control characters in one stretch: each alone refuses the string.
            "{\"a\": \"\u{1}\u{1f}\"}",
            "{\"a\": \"x\u{1}y\u{1}\"}",
            r#"{"a": "\q"}"#,
            r#"{"a": "\u12g4"}"#,
            r#"{"a": "open}"#,
            r#"{"a": [1,]}"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{"a": tru}"#,
            r#"{"a": nul}"#,
            r#"{"a": {"b": 1]}"#,
            r#"{"a": [1}"#,
            r#"{"a": {"b"}}"#,
            r#"{"a": {1: 2}}"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1}}"#,
            r#"{a: 1}"#,
            &deep,
        ] {
            assert!(object_entries(text).is_none(), "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Text made of JSON's pieces, well formed or not: whenever the one pass reads it,
        /// serde_json reads the same entries, and the depth and number checks agree.
        #[test]
        fn one_pass_never_reads_what_serde_json_does_not(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", ",", ":", " ", "\n", "\"k\"", "\"a\"", "\"x\\\"y\"",
                "\"\\u00e9\"", "\"\\ud800\"", "1", "-0.5e3", "1e400", "01", "0", "-", "2.",
                "true", "null", "nul", "\"\u{1}\"", "\"", "\\",
            ]), 0..24),
            open in any::<bool>(),
        ) {
            let mut text = String::from(if open { "{\"k\":" } else { "" });
            text.extend(pieces);
            if let Some(read) = by_one_pass(&text) {
                prop_assert_eq!(Some(read), by_serde_json(&text), "{}", text);
            }
        }

        /// An object serde_json wrote, with one byte changed, dropped or added: whenever the
        /// one pass still reads it, serde_json reads the same.
        #[test]
        fn one_pass_agrees_on_objects_one_byte_off(
            value in proptest::collection::btree_map("[a-z]{1,3}", json_value(), 1..5),
            at in any::<proptest::sample::Index>(),
            byte in proptest::sample::select(b"{}[],:\" \\/u0123456789aefElnrstx.-+\n\t\x01".to_vec()),
            edit in 0..3u8,
        ) {
            let mut bytes = serde_json::to_vec(&value).unwrap();
            let at = at.index(bytes.len());
            match edit {
                0 => bytes[at] = byte,
                1 => { bytes.remove(at); }
                _ => bytes.insert(at, byte),
            }
            if let Ok(text) = String::from_utf8(bytes)
                && let Some(read) = by_one_pass(&text)
            {
                prop_assert_eq!(Some(read), by_serde_json(&text), "{}", text);
            }
        }

        /// Every object serde_json writes, compact or pretty, is read in the one pass.
        #[test]
        fn one_pass_reads_every_object_serde_json_writes(
            value in proptest::collection::btree_map("[a-z]{1,3}", json_value(), 0..6),
            pretty in any::<bool>(),
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            prop_assert!(object_entries(&text).is_some(), "{}", text);
            prop_assert_eq!(by_one_pass(&text), by_serde_json(&text));
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(".{0,3}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

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
    fn values_and_depth_of_text() {
        let count = |text: &str, max: usize| text_exceeds(text, max, 64);
        // The root; the values of a, b, c, d and e; 1 and 2; the object in c.
        let text = r#"{"a": 1, "b": [1, 2], "c": [{"d": "x:,["}], "e": []}"#;
        assert_eq!(count(text, 9), None);
        assert_eq!(count(text, 8), Some(Exceeded::Values));
        assert_eq!(count("[]", 1), None);
        assert_eq!(count("[[], []]", 2), Some(Exceeded::Values));
        assert_eq!(text_exceeds("[[[1]]]", 100, 2), Some(Exceeded::Depth));
        assert_eq!(text_exceeds("[[[1]]]", 100, 3), None);
    }

    /// The text scan and the parsed value agree on the count, on every fixture and schema of
    /// the project's tests.
    #[test]
    fn the_text_count_is_the_parsed_count() {
        fn parsed(v: &Value) -> usize {
            1 + match v {
                Value::Array(a) => a.iter().map(parsed).sum(),
                Value::Object(o) => o.values().map(parsed).sum(),
                _ => 0,
            }
        }
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../schemas");
        let mut texts = vec![r#"{"a": "\\\"[", "b": [[], {}, [1, {"c": null}]]}"#.to_owned()];
        for dir in std::fs::read_dir(root).unwrap() {
            for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
                texts.push(std::fs::read_to_string(file.unwrap().path()).unwrap());
            }
        }
        for text in texts {
            let n = parsed(&serde_json::from_str(&text).unwrap());
            assert_eq!(text_exceeds(&text, n, 64), None, "{text}");
            assert_eq!(
                text_exceeds(&text, n - 1, 64),
                Some(Exceeded::Values),
                "{text}"
            );
        }
    }

    #[test]
    fn value_depth() {
        let v: Value = serde_json::from_str(r#"{"a": [[1]]}"#).unwrap();
        assert!(!value_depth_exceeds(&v, 3));
        assert!(value_depth_exceeds(&v, 2));
    }
}
