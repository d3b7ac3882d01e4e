//! JSON to markdown in the plan generator's format: `- **key**: value` lines, `- [i]:` for compound
//! array items, `*(empty)*` for empty arrays and objects, two spaces per level.
//!
//! It is a serde `Serializer`, so any `Serialize` value (a `serde_json::Value` or a typed
//! input) renders without an intermediate tree. JSON kept as text renders as written (objects
//! in document order, numbers exactly as written): serde_json's `RawValue` from its text, and
//! [`RawJson`] and [`RawObject`], given to [`ToMarkdown`] (what `|markdown` takes), straight
//! from their tape.
//!
//! A value cannot forge the prompt's structure: every following line of a multi-line string or
//! key is indented to its item's content column, and a line that would open a block (heading,
//! list item, rule, fence, quote, HTML block, table row) has that opening escaped.

use crate::json::{Captured, Kind, RawJson, RawObject, TapeValue, TapeWalk, Text, Walk};
use serde::ser::{self, Serialize};
use std::fmt::{self, Write as _};

/// Renders `value` as markdown; no trailing newline, so a template decides the line breaks.
///
/// ```
/// let v: agent_contracts_contract::RawJson =
///     serde_json::from_str(r#"{"name": "a", "tags": ["x"], "ratio": 0.50, "empty": {}}"#).unwrap();
/// assert_eq!(
///     agent_contracts_contract::to_markdown(&v).unwrap(),
///     "- **name**: a\n- **tags**:\n  - x\n- **ratio**: 0.50\n- **empty**: *(empty)*"
/// );
/// ```
pub fn to_markdown<T: Serialize + ?Sized>(value: &T) -> Result<String, MarkdownError> {
    let mut out = String::new();
    write_markdown(&mut out, value)?;
    Ok(out)
}

/// Renders `value` as markdown on one line, for a place inside a line of a template (such as a
/// heading): the line breaks of [`to_markdown`]'s output, with the indentation after them,
/// become single spaces, so the template's text after the value stays on its line and no
/// line of the value can open a block.
///
/// ```
/// let v = serde_json::json!("https://x.y/\n# forged\n");
/// assert_eq!(agent_contracts_contract::__private::to_markdown_line(&v).unwrap(), "https://x.y/ \\# forged");
/// ```
#[doc(hidden)]
pub fn to_markdown_line<T: Serialize + ?Sized>(value: &T) -> Result<String, MarkdownError> {
    let rendered = to_markdown(value)?;
    let mut line = String::with_capacity(rendered.len());
    // Writing into a `String` cannot fail.
    let _ = write_on_one_line(&rendered, &mut line);
    Ok(line)
}

/// Writes `rendered` (markdown from this module) to `out` on one line: each line break and the
/// indentation after it become one space, empty lines none.
pub(crate) fn write_on_one_line<W: fmt::Write + ?Sized>(
    rendered: &str,
    out: &mut W,
) -> fmt::Result {
    let mut first = true;
    for part in rendered.split('\n').map(|l| l.trim_start_matches(' ')) {
        if part.is_empty() {
            continue;
        }
        if !first {
            out.write_char(' ')?;
        }
        out.write_str(part)?;
        first = false;
    }
    Ok(())
}

/// Appends the markdown of `value` to `out`.
pub(crate) fn write_markdown<T: Serialize + ?Sized>(
    out: &mut String,
    value: &T,
) -> Result<(), MarkdownError> {
    let start = out.len();
    value.serialize(Md {
        out,
        start,
        indent: 0,
        slot: Slot::Root,
    })
}

/// A value `{{ value|markdown }}` and `{{ value|inline }}` render: JSON values, strings,
/// numbers, lists and maps, the types a contract generates, and [`RawJson`] and [`RawObject`],
/// which write themselves from their tape (keys and numbers as written) without serde. Any
/// other `Serialize` type takes the serde route with an empty impl:
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Page { url: String }
/// impl agent_contracts_contract::ToMarkdown for Page {}
/// let mut out = String::new();
/// agent_contracts_contract::ToMarkdown::markdown_into(&Page { url: "x".into() }, &mut out).unwrap();
/// assert_eq!(out, "- **url**: x");
/// ```
pub trait ToMarkdown: Serialize {
    /// Appends this value's markdown ([`to_markdown`]'s text) to `out`.
    fn markdown_into(&self, out: &mut String) -> Result<(), MarkdownError> {
        write_markdown(out, self)
    }
}

impl<T: ToMarkdown + ?Sized> ToMarkdown for &T {
    fn markdown_into(&self, out: &mut String) -> Result<(), MarkdownError> {
        (**self).markdown_into(out)
    }
}

impl<T: ToMarkdown + ?Sized> ToMarkdown for Box<T> {
    fn markdown_into(&self, out: &mut String) -> Result<(), MarkdownError> {
        (**self).markdown_into(out)
    }
}

impl<T: ToMarkdown> ToMarkdown for Option<T> {
    fn markdown_into(&self, out: &mut String) -> Result<(), MarkdownError> {
        match self {
            Some(value) => value.markdown_into(out),
            None => write_markdown(out, &()),
        }
    }
}

impl<T: Serialize> ToMarkdown for Vec<T> {}
impl<T: Serialize> ToMarkdown for [T] {}
impl<K: Serialize, V: Serialize, H> ToMarkdown for std::collections::HashMap<K, V, H> where
    H: std::hash::BuildHasher
{
}
impl<K: Serialize, V: Serialize> ToMarkdown for std::collections::BTreeMap<K, V> {}

macro_rules! through_serde {
    ($($t:ty),*) => { $(impl ToMarkdown for $t {})* };
}
through_serde!(
    serde_json::Value, serde_json::Map<String, serde_json::Value>, serde_json::value::RawValue,
    String, str, char, bool, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize,
    f32, f64
);

/// A captured value from its tape (a container's lines by [`TapeLines`]), or from its text
/// when it has none.
fn captured(raw: &impl Captured, out: &mut String) -> Result<(), MarkdownError> {
    let md = Md {
        start: out.len(),
        out,
        indent: 0,
        slot: Slot::Root,
    };
    match raw.value() {
        Some(value) if value.len() > 0 => TapeLines {
            after: false,
            out: md.out,
        }
        .children(value, 0),
        Some(value) => md.tape(value),
        None => Walk(raw.text()).serialize(md),
    }
}

impl ToMarkdown for RawJson {
    fn markdown_into(&self, out: &mut String) -> Result<(), MarkdownError> {
        captured(self, out)
    }
}

impl ToMarkdown for RawObject {
    fn markdown_into(&self, out: &mut String) -> Result<(), MarkdownError> {
        captured(self, out)
    }
}

/// A value that has no markdown form (a map whose keys are not strings or numbers).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot render as markdown: {0}")]
pub struct MarkdownError(String);

impl ser::Error for MarkdownError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

const EMPTY: &str = "*(empty)*";

// The line shapes, each written here once, for the serde writer ([`Md`]) and the tape's
// ([`TapeLines`]) alike; each follows a line's start (a line break and its indentation).

/// An array item's start: `- `.
const ITEM: &str = "- ";
/// The two ends of an entry's key: `- **key**`.
const KEY_OPEN: &str = "- **";
const KEY_CLOSE: &str = "**:";

/// An entry whose value follows on its line: `- **key**: `.
#[inline(always)]
fn key_item(out: &mut String, key: &str) {
    out.push_str(KEY_OPEN);
    out.push_str(key);
    // A tail of known length, stored in place (no `memcpy` call).
    out.push_str("**: ");
}

/// An entry whose value's lines follow: `- **key**:`.
#[inline(always)]
fn key_header(out: &mut String, key: &str) {
    out.push_str(KEY_OPEN);
    out.push_str(key);
    out.push_str(KEY_CLOSE);
}

/// An array item whose value's lines follow: `- [i]:`.
fn index_header(out: &mut String, index: usize) {
    out.push_str("- [");
    push_usize(out, index);
    out.push_str("]:");
}
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Where a value sits: that decides its line's prefix.
#[derive(Clone, Copy)]
enum Slot<'k> {
    Root,
    Key(&'k str),
    Index(usize),
}

/// The serializer for one value at one place.
struct Md<'o> {
    out: &'o mut String,
    /// Where this rendering began in `out`, so the first line gets no leading newline.
    start: usize,
    indent: usize,
    slot: Slot<'o>,
}

impl<'o> Md<'o> {
    #[inline(always)]
    fn begin_line(&mut self) {
        let len = self.out.len();
        if self.indent < LINE_STARTS.len() && len > self.start {
            // The line break and the indentation in one copy of a known length (no `memcpy`
            // call), cut back to the indentation.
            self.out.push_str(LINE_STARTS);
            self.out.truncate(len + 1 + self.indent);
        } else {
            if len > self.start {
                self.out.push('\n');
            }
            push_spaces(self.out, self.indent);
        }
    }

    /// The item's prefix (`- **key**: `, `- `) or nothing at the root; returns where the text
    /// that follows stands.
    fn prefix(&mut self) -> Start {
        self.begin_line();
        match &self.slot {
            Slot::Root => Start::Block,
            Slot::Key(key) if line_end(key).is_none() => {
                // One line, the common case: written as it stands (it is inline).
                key_item(self.out, key);
                Start::Inline
            }
            Slot::Key(key) => {
                // Its lines through `write_text`, between the shape's two ends.
                self.out.push_str(KEY_OPEN);
                match stars_only_first_line(key) {
                    // `- **` and a first line of `*`s would read as `- ***`: a rule.
                    Some(at) => {
                        let escaped = format!("{}\\{}", &key[..at], &key[at..]);
                        write_text(self.out, &escaped, self.indent + 2, Start::Inline);
                    }
                    None => write_text(self.out, key, self.indent + 2, Start::Inline),
                }
                if key.ends_with(['\n', '\r']) {
                    // The `**: ` that closes the key goes on its last (empty) line: indent it
                    // to the item, or it would stand at the margin, outside the list.
                    push_spaces(self.out, self.indent + 2);
                }
                self.out.push_str(KEY_CLOSE);
                self.out.push(' ');
                Start::Inline
            }
            Slot::Index(_) => {
                self.out.push_str(ITEM);
                Start::AfterDash(self.indent + 2)
            }
        }
    }

    fn scalar(mut self, text: &str) -> Result<(), MarkdownError> {
        let start = self.prefix();
        self.text_after_prefix(start, text);
        Ok(())
    }

    fn text_after_prefix(&mut self, start: Start, text: &str) {
        // Only an array item's column depends on its first line: no line search for others.
        let column = match self.slot {
            Slot::Index(_) => self.column(lines(text).next().unwrap_or_default()),
            _ => self.column(""),
        };
        write_text(self.out, text, column, start);
    }

    /// The column of the lines after the first of a text whose first line is `first`.
    fn column(&self, first: &str) -> usize {
        match self.slot {
            Slot::Root => self.indent,
            Slot::Key(_) => self.indent + 2,
            Slot::Index(_) => {
                let blanks = leading_width(first, self.indent + 2);
                // One to three columns of blanks after `- ` move the item's content column.
                self.indent + 2 + if blanks <= 3 { blanks } else { 0 }
            }
        }
    }

    /// A scalar known to hold no line break (a tape's plain string, since JSON escapes every
    /// control character, or a number): what [`Md::string`] writes, without looking for one.
    fn line(mut self, text: &str) -> Result<(), MarkdownError> {
        if text.chars().all(is_blank) {
            return self.string(text);
        }
        let start = self.prefix();
        let opening = first_line_opening(text, self.column(text), start);
        push_escaped(self.out, text, opening);
        Ok(())
    }

    /// A scalar that `write` appends straight to the output, without an intermediate `String`.
    /// Text that needs care (a line break, a block opening) is taken back out and written
    /// through [`write_text`]; numbers and booleans never need it.
    fn scalar_with(
        mut self,
        write: impl FnOnce(&mut String) -> Result<(), MarkdownError>,
    ) -> Result<(), MarkdownError> {
        let start = self.prefix();
        let at = self.out.len();
        write(self.out)?;
        let text = &self.out[at..];
        let column = if matches!(self.slot, Slot::Root) {
            self.indent
        } else {
            self.indent + 2
        };
        if line_end(text).is_some() || first_line_opening(text, column, start).is_some() {
            let text = self.out.split_off(at);
            self.text_after_prefix(start, &text);
        }
        Ok(())
    }

    fn display(self, value: impl fmt::Display) -> Result<(), MarkdownError> {
        // Writing into a String cannot fail.
        self.scalar_with(|out| write!(out, "{value}").map_err(ser::Error::custom))
    }

    fn string(self, text: &str) -> Result<(), MarkdownError> {
        // An empty or blank string shown as is would read like a nested header. An array item
        // whose first line is blank starts with a blank line, and such an item cannot interrupt
        // a paragraph: after its parent's header line, `- ` would be a setext underline and
        // make that line a heading. Both are shown as JSON strings, on one line.
        let blank = |line: &str| line.chars().all(is_blank);
        let first_line_blank = || lines(text).next().is_some_and(blank);
        if blank(text) || (matches!(self.slot, Slot::Index(_)) && first_line_blank()) {
            let quoted = serde_json::to_string(text).map_err(ser::Error::custom)?;
            return self.scalar(&quoted);
        }
        self.scalar(text)
    }

    /// The header line of a compound value: `- **key**:`, `- [i]:` or nothing at the root,
    /// with `*(empty)*` when it has no children.
    fn header(&mut self, empty: bool) {
        match self.slot {
            Slot::Root => {}
            Slot::Key(_) => {
                self.prefix();
                self.out.pop(); // the space after the colon
            }
            Slot::Index(i) => {
                self.begin_line();
                index_header(self.out, i);
            }
        }
        if empty {
            if !matches!(self.slot, Slot::Root) {
                self.out.push(' ');
            }
            self.out.push_str(EMPTY);
        }
    }

    /// The header line of a compound value, written once its first child arrives (or with
    /// `*(empty)*` at the end), so no length is needed up front.
    fn compound(self) -> Compound<'o> {
        let root = matches!(self.slot, Slot::Root);
        Compound {
            child_indent: if root { self.indent } else { self.indent + 2 },
            md: self,
            count: 0,
            header_written: root,
            key: None,
            number: false,
        }
    }
}

impl Md<'_> {
    /// A part of a tape that [`TapeLines`] does not write: a scalar as [`TapeWalk`] through
    /// this serializer writes it, without serde (borrowed from the text, numbers as written).
    fn tape(self, value: TapeValue<'_>) -> Result<(), MarkdownError> {
        let text = match value.kind() {
            Kind::Str => value.unquoted(),
            Kind::Number => value.text(),
            Kind::True => "true",
            Kind::False => "false",
            Kind::Null => "null",
            Kind::Escaped => {
                let Text(text) = serde_json::from_str(value.text()).map_err(ser::Error::custom)?;
                return self.string(&text);
            }
            // An empty one, or one under an escaped key: both rare.
            Kind::Object | Kind::Array => return TapeWalk(value).serialize(self),
        };
        self.line(text)
    }
}

/// The lines of a tape's container's parts, in one loop over the tape (and one call per
/// container), with no writer, slot or `Result` per part: what [`Md`] writes for the same
/// parts. The common lines (`- **key**: value`, `- item`, a container's `- **key**:` or
/// `- [i]:`) are written here; every other part (an escaped or blank string, an item that
/// could open a block, an empty container) through [`Md::tape`].
struct TapeLines<'o> {
    out: &'o mut String,
    /// Whether the first line breaks from text written before these lines.
    after: bool,
}

impl TapeLines<'_> {
    fn children(&mut self, value: TapeValue<'_>, indent: usize) -> Result<(), MarkdownError> {
        let (text, toks, at) = value.on_tape();
        let container = toks[at];
        let object = container.kind == Kind::Object;
        let mut at = at + 1;
        for index in 0..container.len as usize {
            // A plain key holds no line break (JSON escapes them all); an escaped key, decoded,
            // may: its line is written by [`Md`], as a map's key is.
            let (key, plain_key) = if object {
                at += 1;
                (Some(value.key(at - 1)), toks[at - 1].kind == Kind::Str)
            } else {
                (None, true)
            };
            let part = toks[at];
            let scalar = match part.kind {
                Kind::Str => Some(&text[part.start as usize + 1..part.end as usize - 1]),
                Kind::Number | Kind::True | Kind::False | Kind::Null => {
                    Some(&text[part.start as usize..part.end as usize])
                }
                Kind::Object | Kind::Array | Kind::Escaped => None,
            };
            let first = scalar.and_then(|text| text.as_bytes().first().copied());
            match (key, scalar) {
                // Not blank under a key: the key's line and the text as it stands (after `**: `
                // it is inline, so nothing in it can open a block).
                (Some(key), Some(line))
                    if plain_key && first.is_some_and(|b| !is_blank(b.into())) =>
                {
                    self.begin_line(indent);
                    key_item(self.out, key);
                    self.out.push_str(line);
                }
                // An item opening with a letter: not blank, no blanks to move its column, and
                // no block opening ([`first_line_opening`]'s first test).
                (None, Some(line)) if first.is_some_and(|b| b.is_ascii_alphabetic()) => {
                    self.begin_line(indent);
                    self.out.push_str(ITEM);
                    self.out.push_str(line);
                }
                (key, None) if plain_key && part.kind != Kind::Escaped && part.len > 0 => {
                    self.begin_line(indent);
                    match key {
                        Some(key) => key_header(self.out, key),
                        None => index_header(self.out, index),
                    }
                    self.children(value.at(at), indent + 2)?;
                }
                _ => {
                    let slot = match key {
                        Some(key) => Slot::Key(key),
                        None => Slot::Index(index),
                    };
                    let start = self.start();
                    Md {
                        out: &mut *self.out,
                        start,
                        indent,
                        slot,
                    }
                    .tape(value.at(at))?;
                }
            }
            at = part.next as usize;
        }
        Ok(())
    }

    /// Where a [`Md`] writing the next part starts, as it takes it: before the output's end
    /// when a line stands before, so that it breaks a line ([`Md::begin_line`]).
    fn start(&mut self) -> usize {
        if std::mem::replace(&mut self.after, true) {
            0
        } else {
            self.out.len()
        }
    }

    /// A line break (unless this is the rendering's first line) and `indent` spaces, as
    /// [`Md::begin_line`] writes them.
    #[inline(always)]
    fn begin_line(&mut self, indent: usize) {
        let start = self.start();
        Md {
            out: &mut *self.out,
            start,
            indent,
            slot: Slot::Root,
        }
        .begin_line();
    }
}

struct Compound<'o> {
    md: Md<'o>,
    child_indent: usize,
    count: usize,
    header_written: bool,
    /// The pending map key, given by `serialize_key`.
    key: Option<String>,
    /// This "struct" is serde_json's carrier of a number's exact text or of any JSON value's
    /// text (a `RawValue`), which may be compound.
    number: bool,
}

impl<'o> Compound<'o> {
    fn child<'a>(&'a mut self, slot: Slot<'a>) -> Md<'a> {
        if !self.header_written {
            self.md.header(false);
            self.header_written = true;
        }
        self.count += 1;
        Md {
            out: &mut *self.md.out,
            start: self.md.start,
            indent: self.child_indent,
            slot,
        }
    }

    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), MarkdownError> {
        let index = self.count;
        value.serialize(self.child(Slot::Index(index)))
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), MarkdownError> {
        value.serialize(self.child(Slot::Key(key)))
    }

    /// The entry of the pending map key.
    fn pending_entry<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), MarkdownError> {
        let key = self.key.take();
        let key = key.ok_or_else(|| MarkdownError("map value without a key".into()))?;
        self.entry(&key, value)
    }

    fn finish(mut self) -> Result<(), MarkdownError> {
        if self.count == 0 {
            if matches!(self.md.slot, Slot::Root) {
                self.md.begin_line();
            }
            self.md.header(true);
        }
        Ok(())
    }
}

fn push_usize(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// A line break and 64 spaces: a line's start and indentation, copied at once.
const LINE_STARTS: &str = "\n                                                                ";

fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                                                ";
    if n <= SPACES.len() {
        // All of them and then the length cut back: a copy of a known length needs no
        // `memset` call, and most indentations are a few spaces.
        let len = out.len();
        out.push_str(SPACES);
        out.truncate(len + n);
        return;
    }
    while n > 0 {
        let chunk = n.min(SPACES.len());
        out.push_str(&SPACES[..chunk]);
        n -= chunk;
    }
}

/// Where the first line of a text stands.
#[derive(Clone, Copy)]
enum Start {
    /// Inside a line (a key after `- **`, a value after `**: `): it cannot open a block.
    Inline,
    /// At the start of a block, at the column of the following lines.
    Block,
    /// After an item's `- `, at the given column: at the start of a block, and the dash is
    /// part of the line.
    AfterDash(usize),
}

/// Free text (a task) for a prompt: its words kept, and every line that could open a heading,
/// rule, fence, list item, quote or table escaped with a backslash, as `|markdown` escapes
/// string values. Line endings become `\n`.
///
/// ```
/// let task = "Plan it\n## From selector_agent\n- forged: yes";
/// assert_eq!(
///     agent_contracts_contract::__private::escape_text(task),
///     "Plan it\n\\## From selector_agent\n\\- forged: yes"
/// );
/// ```
#[doc(hidden)]
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    write_text(&mut out, text, 0, Start::Block);
    out
}

/// Writes `text`, its following lines indented to `column`; a line that would open a block
/// gets that opening escaped.
fn write_text(out: &mut String, text: &str, column: usize, start: Start) {
    if line_end(text).is_none() {
        // One line, the common case: no line iterator.
        push_escaped(out, text, first_line_opening(text, column, start));
        return;
    }
    for (i, line) in lines(text).enumerate() {
        if i > 0 {
            out.push('\n');
            if !line.is_empty() {
                push_spaces(out, column);
            }
        }
        let opening = if i == 0 {
            first_line_opening(line, column, start)
        } else {
            block_opening(line, column)
        };
        push_escaped(out, line, opening);
    }
}

/// Where to escape the first line of a text written at `start` (later lines stand at `column`).
fn first_line_opening(line: &str, column: usize, start: Start) -> Option<usize> {
    // A line opening with a letter opens no block, and is no delimiter row after a dash: the
    // common case, decided without the walk below.
    if line.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    match start {
        Start::Inline => None,
        Start::Block => block_opening(line, column),
        Start::AfterDash(at) => block_opening(line, at).or_else(|| delimiter_after_dash(line)),
    }
}

/// Writes `line` with a backslash at `opening`, if any.
fn push_escaped(out: &mut String, line: &str, opening: Option<usize>) {
    match opening {
        Some(at) => {
            out.push_str(&line[..at]);
            out.push('\\');
            out.push_str(&line[at..]);
        }
        None => out.push_str(line),
    }
}

/// If `key` goes on past its first line and that line holds only `*`s and blanks, so that after
/// the `**` that opens the key the line would be a thematic break (`- ***`): its first `*`.
fn stars_only_first_line(key: &str) -> Option<usize> {
    let first = &key[..line_end(key)?];
    let star = first.find('*')?;
    first
        .chars()
        .all(|c| c == '*' || is_blank(c))
        .then_some(star)
}

/// Where the first line of `text` ends (its first `\n` or `\r`), if it does. Both are ASCII,
/// so the offset is a char boundary; the search tests eight bytes at a time, since most strings
/// have no line break and `[char]` patterns (or `str::find`'s setup, on short strings) cost more
/// than the text they scan.
fn line_end(text: &str) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // Nonzero when some byte of `word` is zero.
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS != 0;
    let bytes = text.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in words.by_ref() {
        let word = u64::from_ne_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        if has_zero(word ^ (ONES * u64::from(b'\n'))) || has_zero(word ^ (ONES * u64::from(b'\r')))
        {
            break;
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|offset| at + offset)
}

/// Splits on every CommonMark line ending: `\n`, `\r\n` and a lone `\r`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let s = rest?;
        match line_end(s) {
            Some(at) => {
                let skip = if s[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&s[at + skip..]);
                Some(&s[..at])
            }
            None => {
                rest = None;
                Some(s)
            }
        }
    })
}

/// Where to put a backslash so `line`, written at `column`, cannot open a block, if it could.
fn block_opening(line: &str, column: usize) -> Option<usize> {
    // Leading blanks in columns: a tab advances to the next tab stop of the output line, so its
    // width depends on where it stands. A backslash before a blank would stay visible text.
    let spaces = line.len() - line.trim_start_matches([' ', '\t']).len();
    if leading_width(line, column) > 3 {
        // Relative indentation of four or more continues the paragraph or is an indented code
        // block: neither is structure.
        return None;
    }
    let rest = &line[spaces..];
    let first = rest.chars().next()?;
    let after = |n: usize| rest[n..].chars().next();
    let blank_after = |n: usize| after(n).is_none_or(is_blank);
    let only = |c: char| rest.chars().all(|x| x == c || is_blank(x));
    let escape_first = match first {
        '#' => {
            let hashes = rest.len() - rest.trim_start_matches('#').len();
            hashes <= 6 && blank_after(hashes)
        }
        '>' => true,
        // A link reference or footnote definition (its label may go on on the next line).
        '[' => {
            // `]:` anywhere, or no `]` at all; found by `memchr`, where a two-byte needle's
            // search costs a `memcmp` call at each place.
            let bytes = rest.as_bytes();
            let mut closes = memchr::memchr_iter(b']', bytes).peekable();
            closes.peek().is_none() || closes.any(|at| bytes.get(at + 1) == Some(&b':'))
        }
        '-' | '+' | '*' | '_' | '=' => blank_after(1) || only(first) || delimiter_row(rest),
        '`' | '~' => rest.starts_with("```") || rest.starts_with("~~~"),
        '<' => after(1).is_some_and(|c| c.is_ascii_alphabetic() || "/!?".contains(c)),
        '|' | ':' => delimiter_row(rest),
        '0'..='9' => return ordered_marker(rest).map(|at| spaces + at),
        _ => false,
    };
    escape_first.then_some(spaces)
}

/// Width in columns of the leading spaces and tabs of `line` written at `column`: a tab
/// advances to the next tab stop of the output line, so its width depends on where it stands.
fn leading_width(line: &str, column: usize) -> usize {
    let mut width = 0;
    for b in line.bytes() {
        match b {
            b' ' => width += 1,
            b'\t' => width += 4 - (column + width) % 4,
            _ => break,
        }
    }
    width
}

/// `1.` or `1)` followed by a blank: the offset of the `.`/`)` to escape.
fn ordered_marker(rest: &str) -> Option<usize> {
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    // The character after the digits may be any width (`1é`): step over it by chars.
    let mut after = rest[digits..].chars();
    let mark = after.next()?;
    let next = after.next();
    (digits <= 9 && (mark == '.' || mark == ')') && next.is_none_or(is_blank)).then_some(digits)
}

/// Where to escape a line that, after an item's `- `, would make `- |:` a table delimiter row
/// under its parent's header line.
fn delimiter_after_dash(line: &str) -> Option<usize> {
    let at = line.find(|c: char| !is_blank(c))?;
    line.chars()
        .all(|c| "|:-".contains(c) || is_blank(c))
        .then_some(at)
}

/// A table delimiter row such as `|---|:-:|`.
fn delimiter_row(rest: &str) -> bool {
    rest.contains('-') && rest.chars().all(|c| "|:-".contains(c) || is_blank(c))
}

/// Blank within a line: space and tab, and the vertical tab and form feed that some parsers
/// (pulldown-cmark among them) also take as whitespace.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0b' | '\x0c')
}

/// Serializer methods that write a number or boolean through `$self.display`.
macro_rules! display_methods {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<(), MarkdownError> {
            self.display(v)
        }
    )*};
}

impl<'o> ser::Serializer for Md<'o> {
    type Ok = ();
    type Error = MarkdownError;
    type SerializeSeq = Compound<'o>;
    type SerializeTuple = Compound<'o>;
    type SerializeTupleStruct = Compound<'o>;
    type SerializeTupleVariant = Compound<'o>;
    type SerializeMap = Compound<'o>;
    type SerializeStruct = Compound<'o>;
    type SerializeStructVariant = Compound<'o>;

    display_methods!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128, serialize_f32: f32, serialize_f64: f64);

    fn serialize_bool(self, v: bool) -> Result<(), MarkdownError> {
        self.scalar(if v { "true" } else { "false" })
    }
    fn serialize_char(self, v: char) -> Result<(), MarkdownError> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), MarkdownError> {
        self.string(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), MarkdownError> {
        ser::Serializer::collect_seq(self, v)
    }
    fn serialize_none(self) -> Result<(), MarkdownError> {
        self.scalar("null")
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), MarkdownError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), MarkdownError> {
        self.scalar("null")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), MarkdownError> {
        self.scalar("null")
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), MarkdownError> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), MarkdownError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), MarkdownError> {
        let mut map = self.compound();
        map.entry(variant, value)?;
        map.finish()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'o>, MarkdownError> {
        Ok(self.compound())
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'o>, MarkdownError> {
        Ok(self.compound())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'o>, MarkdownError> {
        Ok(self.compound())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'o>, MarkdownError> {
        Ok(self.compound())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'o>, MarkdownError> {
        Ok(self.compound())
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Compound<'o>, MarkdownError> {
        let mut compound = self.compound();
        compound.number = name == NUMBER_TOKEN || name == RAW_TOKEN;
        Ok(compound)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'o>, MarkdownError> {
        Ok(self.compound())
    }
}

/// The four kinds of serde sequence, each an array here.
macro_rules! items {
    ($($kind:ident::$method:ident),*) => {$(
        impl ser::$kind for Compound<'_> {
            type Ok = ();
            type Error = MarkdownError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), MarkdownError> {
                self.item(value)
            }
            fn end(self) -> Result<(), MarkdownError> {
                self.finish()
            }
        }
    )*};
}
items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = MarkdownError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), MarkdownError> {
        self.key = Some(plain_text(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), MarkdownError> {
        self.pending_entry(value)
    }
    fn end(self) -> Result<(), MarkdownError> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = MarkdownError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), MarkdownError> {
        if self.number {
            // serde_json's exact text: a value here, not an entry.
            self.count += 1;
            let md = Md {
                out: &mut *self.md.out,
                start: self.md.start,
                indent: self.md.indent,
                slot: std::mem::replace(&mut self.md.slot, Slot::Root),
            };
            return raw_value(md, &plain_text(value)?);
        }
        self.entry(key, value)
    }
    fn end(self) -> Result<(), MarkdownError> {
        if self.number { Ok(()) } else { self.finish() }
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = MarkdownError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), MarkdownError> {
        self.entry(key, value)
    }
    fn end(self) -> Result<(), MarkdownError> {
        self.finish()
    }
}

/// A number's or `RawValue`'s text: a number as written, anything else walked level by level.
fn raw_value(md: Md<'_>, text: &str) -> Result<(), MarkdownError> {
    match text.trim_start().as_bytes().first() {
        Some(b'-' | b'0'..=b'9') => md.scalar(text.trim()),
        _ => Walk(text).serialize(md),
    }
}

/// A map key, or serde_json's text of a number or raw value, as plain text.
fn plain_text<T: Serialize + ?Sized>(value: &T) -> Result<String, MarkdownError> {
    match serde_json::to_value(value).map_err(ser::Error::custom)? {
        serde_json::Value::String(text) => Ok(text),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Bool(b) => Ok(b.to_string()),
        _ => Err(MarkdownError(
            "a map key must be a string, number, boolean or unit variant".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{ToMarkdown, block_opening, line_end, write_markdown};

    /// The markdown of `value` as `|markdown` writes it (a captured value from its tape).
    fn md(value: &impl ToMarkdown) -> String {
        let mut out = String::new();
        value.markdown_into(&mut out).unwrap();
        out
    }

    /// A box and an option write what they hold (a captured value still from its tape);
    /// `None` writes what `null` writes.
    #[test]
    fn a_box_and_an_option_write_what_they_hold() {
        let raw: crate::RawJson = serde_json::from_str(r#"{"a": [1, {"b": "c"}]}"#).unwrap();
        let written = md(&raw);
        assert_eq!(written, "- **a**:\n  - 1\n  - [1]:\n    - **b**: c");
        assert_eq!(md(&Box::new(raw.clone())), written);
        assert_eq!(md(&Some(raw)), written);
        assert_eq!(md(&None::<crate::RawJson>), md(&serde_json::Value::Null));
        assert!(!md(&serde_json::Value::Null).is_empty());
    }

    /// A captured value written from its tape (keys as one-line slots, blank and empty
    /// strings, nested and empty containers, array items) gives the text route's markdown.
    #[test]
    fn a_tape_writes_what_its_text_writes() {
        use crate::json::{Captured, RawJson, Walk};
        let text = r##"{"a": "x", "b": {"c": [1, "", " ", "\tq", {"d": null}, []], "e": {}},
            "f": " y", "g": "", "h": true, "i": [{"j": false}], "k": "# no heading", "l": " "}"##;
        let raw: RawJson = serde_json::from_str(text).unwrap();
        assert!(raw.value().is_some(), "the value has a tape");
        let written = md(&raw);
        assert_eq!(written, crate::to_markdown(&Walk(text)).unwrap());
        assert_eq!(written, crate::to_markdown(&raw).unwrap(), "serde's route");
        assert_eq!(
            written,
            "- **a**: x\n- **b**:\n  - **c**:\n    - 1\n    - \"\"\n    - \" \"\n    - \tq\n    - [4]:\n      \
             - **d**: null\n    - [5]: *(empty)*\n  - **e**: *(empty)*\n- **f**:  y\n- **g**: \"\"\n\
             - **h**: true\n- **i**:\n  - [0]:\n    - **j**: false\n- **k**: # no heading\n- **l**: \" \""
        );
    }

    #[test]
    fn a_bracket_opens_a_block_as_a_link_reference_could() {
        // `]:` after the first `]` or at it, or no `]` at all (the label may go on).
        for (line, opens) in [
            ("[x]: y", true),
            ("[x]:", true),
            ("[a] [b]: c", true),
            ("[x", true),
            ("[", true),
            ("[x] y", false),
            ("[x]", false),
            ("[x]] :", false),
            ("[name='field_0']", false),
        ] {
            assert_eq!(block_opening(line, 0), opens.then_some(0), "{line:?}");
        }
    }

    #[test]
    fn write_markdown_appends() {
        let mut out = String::from("# Title\n\n");
        write_markdown(&mut out, &serde_json::json!({"a": 1, "b": {}})).unwrap();
        assert_eq!(out, "# Title\n\n- **a**: 1\n- **b**: *(empty)*");
        let mut out = String::from("x\n");
        write_markdown(&mut out, &serde_json::json!([])).unwrap();
        assert_eq!(out, "x\n*(empty)*");
    }

    #[test]
    fn a_tape_appended_to_text_breaks_no_line_before_its_first() {
        // The first line, whether the tape's loop or `Md` writes it (a blank string), starts
        // where the rendering starts, after the text already there.
        use crate::json::RawJson;
        for (text, before, expected) in [
            (
                r#"{"a": "", "b": 1}"#,
                "# Title\n\n",
                "- **a**: \"\"\n- **b**: 1",
            ),
            (
                r#"{"b": 1, "a": ""}"#,
                "# Title\n\n",
                "- **b**: 1\n- **a**: \"\"",
            ),
            (
                r#"["x", {"c": []}]"#,
                "x\n",
                "- x\n- [1]:\n  - **c**: *(empty)*",
            ),
            (r#"[" ", "y"]"#, "x\n", "- \" \"\n- y"),
        ] {
            let raw: RawJson = serde_json::from_str(text).unwrap();
            let mut out = String::from(before);
            raw.markdown_into(&mut out).unwrap();
            assert_eq!(out, format!("{before}{expected}"), "{text}");
            let mut walked = String::from(before);
            write_markdown(&mut walked, &crate::json::Walk(text)).unwrap();
            assert_eq!(out, walked, "{text}");
        }
    }

    #[test]
    fn a_key_ending_its_line_closes_at_its_item() {
        // The `**: ` after a key's last line break stands at the item's content column.
        let value = serde_json::json!({"a\n": 1, "k": {"b\r\n": [2]}});
        assert_eq!(
            super::to_markdown(&value).unwrap(),
            "- **a\n  **: 1\n- **k**:\n  - **b\n    **:\n    - 2"
        );
    }

    #[test]
    fn deep_values_are_indented_past_the_copied_indentation() {
        // 40 levels: indentation past the 64 spaces written at once.
        let mut value = serde_json::json!({"k": "x"});
        for _ in 0..39 {
            value = serde_json::json!([value]);
        }
        let expected: Vec<String> = (0..39)
            .map(|level| format!("{}- [0]:", "  ".repeat(level)))
            .chain([format!("{}- **k**: x", "  ".repeat(39))])
            .collect();
        assert_eq!(super::to_markdown(&value).unwrap(), expected.join("\n"));
        // The same from a tape, whose lines start with one copy while they fit in it.
        use crate::json::Captured as _;
        let raw: crate::json::RawJson = serde_json::from_value(value).unwrap();
        assert!(raw.value().is_some(), "the value has a tape");
        assert_eq!(md(&raw), expected.join("\n"));
    }

    #[test]
    fn a_line_start_is_a_break_and_64_spaces() {
        assert_eq!(super::LINE_STARTS, format!("\n{}", " ".repeat(64)));
    }

    #[test]
    fn tape_items_opening_with_a_letter_write_as_the_text_route_does() {
        use crate::json::{RawJson, Walk};
        let text = r##"{"a": ["x", "é", "1", "-", "x y", " x", "x\ty"], "b": [["z"]]}"##;
        let raw: RawJson = serde_json::from_str(text).unwrap();
        let written = md(&raw);
        assert_eq!(written, crate::to_markdown(&Walk(text)).unwrap());
        assert_eq!(written, crate::to_markdown(&raw).unwrap(), "serde's route");
        assert_eq!(
            written,
            "- **a**:\n  - x\n  - é\n  - 1\n  - \\-\n  - x y\n  -  x\n  - x\ty\n- **b**:\n  - [0]:\n    - z"
        );
    }

    #[test]
    fn line_end_finds_the_first_break_at_any_offset() {
        assert_eq!(line_end(""), None);
        assert_eq!(line_end("no break at all, longer than a word"), None);
        for len in 0..40 {
            for brk in ["\n", "\r", "\r\n"] {
                let text = format!(
                    "{}{brk}tail\nmore",
                    "é".repeat(len / 2) + &"x".repeat(len % 2)
                );
                let expected = text.find(['\n', '\r']);
                assert_eq!(line_end(&text), expected, "{text:?}");
            }
        }
        // Bytes just beside `\n` (10) and `\r` (13) are no break.
        assert_eq!(line_end("\t\x0b\x0c\x0e\x09\x0b\x0c\x0e\x0b\x0c"), None);
    }
}
