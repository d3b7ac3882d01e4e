//! A push tokenizer for JSON that arrives in pieces: fed text delta by delta, it keeps its
//! place between deltas and tells a [`Sink`] each token as soon as it is complete, with the
//! byte offset (in all the text fed) where it became known.
//!
//! Why not a crate: `jiter`'s partial mode parses a whole prefix again on every call (a stream
//! of `n` deltas costs `n` parses), `struson` pulls from a blocking `Read`, and serde_json's
//! `StreamDeserializer` needs complete values. Both users here (the prefix check and the
//! partial value) need one pass over each byte, state kept between deltas.
//!
//! The grammar is serde_json's: whatever serde_json refuses that the tokenizer notices is a
//! [`Syntax`] error, and nothing serde_json accepts is refused (the prefix check's soundness
//! rests on it). Lone surrogates pass here (serde_json refuses them; noticing them is not
//! needed).

/// What the tokenizer tells its sink; offsets are of the byte that completed the token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Event<'a> {
    /// `{`
    BeginObject,
    /// `}`
    EndObject,
    /// `[`
    BeginArray,
    /// `]`
    EndArray,
    /// An object's key, complete (decoded).
    Key(&'a str),
    /// The opening quote of a string value.
    BeginString,
    /// One decoded character of a string value.
    Char(char),
    /// The closing quote of a string value.
    EndString,
    /// The first character of a number (`-` or a digit) or of `true`, `false`, `null`.
    BeginScalar(Scalar),
    /// A number or literal, complete, as written.
    EndScalar(Scalar, &'a str),
}

/// The kind of a number or literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    Number,
    Bool,
    Null,
}

/// Text that is not JSON, at this byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Syntax(pub(crate) usize);

/// Receives the tokens; `Err` stops the feed (the sink's decision is final).
pub(crate) trait Sink {
    /// What stops a feed.
    type Stop;
    fn event(&mut self, event: Event<'_>, at: usize) -> Result<(), Self::Stop>;
}

/// Why a feed stopped.
#[derive(Debug)]
pub(crate) enum Stopped<S> {
    Syntax(Syntax),
    Sink(S),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value is expected (after `:`, or at the start).
    Value,
    /// After `[`: a value or `]`.
    FirstItem,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value: `,` or the container's close.
    After,
    /// Inside a string (a key's or a value's).
    Str,
    /// A number's characters.
    Number,
    /// The rest of a literal: which one, and how many bytes were read.
    Literal(&'static str, usize),
    /// The root value is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// `\u` and the hex digits read so far.
    Unicode(u8, u32),
}

/// The tokenizer's place in the text; see the module docs.
#[derive(Debug)]
pub(crate) struct Tokens {
    state: State,
    /// Open containers: `true` for an object.
    stack: Vec<bool>,
    /// Whether the string being read is a key.
    in_key: bool,
    /// The key being read, or a number's text.
    buf: String,
    escape: Escape,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
    /// Bytes fed before the current delta.
    offset: usize,
}

impl Default for Tokens {
    fn default() -> Self {
        Self {
            state: State::Value,
            stack: Vec::new(),
            in_key: false,
            buf: String::new(),
            escape: Escape::None,
            high: None,
            offset: 0,
        }
    }
}

impl Tokens {
    /// Whether the root value is complete.
    pub(crate) fn done(&self) -> bool {
        self.state == State::Done
    }

    /// Feeds `delta`; returns how many of its bytes were read (all of them unless the root
    /// value ended inside it, or the feed stopped).
    pub(crate) fn feed<S: Sink>(
        &mut self,
        delta: &str,
        sink: &mut S,
    ) -> Result<usize, Stopped<S::Stop>> {
        let base = self.offset;
        for (i, c) in delta.char_indices() {
            if self.state == State::Done {
                self.offset = base + i;
                return Ok(i);
            }
            self.step(c, base + i, sink)?;
        }
        self.offset = base + delta.len();
        Ok(delta.len())
    }

    fn step<S: Sink>(&mut self, c: char, at: usize, sink: &mut S) -> Result<(), Stopped<S::Stop>> {
        let emit = |sink: &mut S, e: Event<'_>| sink.event(e, at).map_err(Stopped::Sink);
        let syntax = Err(Stopped::Syntax(Syntax(at)));
        match self.state {
            State::Str => return self.string_char(c, at, sink),
            State::Number => {
                if matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E') {
                    self.buf.push(c);
                    return Ok(());
                }
                if !is_number(&self.buf) {
                    return syntax;
                }
                sink.event(Event::EndScalar(Scalar::Number, &self.buf), at)
                    .map_err(Stopped::Sink)?;
                self.buf.clear();
                self.state = self.after_value();
                if self.state == State::Done {
                    return Ok(());
                }
            }
            State::Literal(word, read) => {
                if word.as_bytes().get(read) != Some(&(c as u8)) || !c.is_ascii() {
                    return syntax;
                }
                if read + 1 < word.len() {
                    self.state = State::Literal(word, read + 1);
                    return Ok(());
                }
                let kind = if word == "null" {
                    Scalar::Null
                } else {
                    Scalar::Bool
                };
                emit(sink, Event::EndScalar(kind, word))?;
                self.state = self.after_value();
                return Ok(());
            }
            _ => {}
        }
        if matches!(c, ' ' | '\t' | '\n' | '\r') {
            return Ok(());
        }
        match (self.state, c) {
            (State::Value | State::FirstItem, _) if c != ']' => self.begin_value(c, at, sink),
            (State::FirstItem | State::After, ']') if self.stack.last() == Some(&false) => {
                self.stack.pop();
                emit(sink, Event::EndArray)?;
                self.state = self.after_value();
                Ok(())
            }
            (State::FirstKey | State::After, '}') if self.stack.last() == Some(&true) => {
                self.stack.pop();
                emit(sink, Event::EndObject)?;
                self.state = self.after_value();
                Ok(())
            }
            (State::FirstKey | State::Key, '"') => {
                self.in_key = true;
                self.state = State::Str;
                Ok(())
            }
            (State::Colon, ':') => {
                self.state = State::Value;
                Ok(())
            }
            (State::After, ',') => {
                self.state = match self.stack.last() {
                    Some(true) => State::Key,
                    _ => State::Value,
                };
                Ok(())
            }
            _ => syntax,
        }
    }

    /// The state after a complete value.
    fn after_value(&self) -> State {
        if self.stack.is_empty() {
            State::Done
        } else {
            State::After
        }
    }

    fn begin_value<S: Sink>(
        &mut self,
        c: char,
        at: usize,
        sink: &mut S,
    ) -> Result<(), Stopped<S::Stop>> {
        let (event, state) = match c {
            '{' => {
                self.stack.push(true);
                (Event::BeginObject, State::FirstKey)
            }
            '[' => {
                self.stack.push(false);
                (Event::BeginArray, State::FirstItem)
            }
            '"' => {
                self.in_key = false;
                (Event::BeginString, State::Str)
            }
            '-' | '0'..='9' => {
                self.buf.push(c);
                (Event::BeginScalar(Scalar::Number), State::Number)
            }
            't' => (Event::BeginScalar(Scalar::Bool), State::Literal("true", 1)),
            'f' => (Event::BeginScalar(Scalar::Bool), State::Literal("false", 1)),
            'n' => (Event::BeginScalar(Scalar::Null), State::Literal("null", 1)),
            _ => return Err(Stopped::Syntax(Syntax(at))),
        };
        self.state = state;
        sink.event(event, at).map_err(Stopped::Sink)
    }

    fn string_char<S: Sink>(
        &mut self,
        c: char,
        at: usize,
        sink: &mut S,
    ) -> Result<(), Stopped<S::Stop>> {
        let syntax = Err(Stopped::Syntax(Syntax(at)));
        let decoded = match self.escape {
            Escape::None => match c {
                '"' => return self.end_string(at, sink),
                '\\' => {
                    self.escape = Escape::Backslash;
                    return Ok(());
                }
                '\u{0}'..='\u{1f}' => return syntax,
                c => c,
            },
            Escape::Backslash => {
                self.escape = Escape::None;
                match c {
                    '"' | '\\' | '/' => c,
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        self.escape = Escape::Unicode(0, 0);
                        return Ok(());
                    }
                    _ => return syntax,
                }
            }
            Escape::Unicode(read, value) => {
                let Some(digit) = c.to_digit(16) else {
                    return syntax;
                };
                let value = value * 16 + digit;
                if read < 3 {
                    self.escape = Escape::Unicode(read + 1, value);
                    return Ok(());
                }
                self.escape = Escape::None;
                match (self.high.take(), value) {
                    (None, 0xD800..=0xDBFF) => {
                        self.high = Some(value);
                        return Ok(());
                    }
                    (Some(high), 0xDC00..=0xDFFF) => {
                        let code = 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00);
                        char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                    }
                    // A lone surrogate, which serde_json refuses: one character, whatever it is.
                    (_, value) => char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER),
                }
            }
        };
        if self.high.take().is_some() {
            // A high surrogate followed by a plain character: serde_json refuses it.
            self.char_of_string(char::REPLACEMENT_CHARACTER, at, sink)?;
        }
        self.char_of_string(decoded, at, sink)
    }

    fn char_of_string<S: Sink>(
        &mut self,
        c: char,
        at: usize,
        sink: &mut S,
    ) -> Result<(), Stopped<S::Stop>> {
        if self.in_key {
            self.buf.push(c);
            Ok(())
        } else {
            sink.event(Event::Char(c), at).map_err(Stopped::Sink)
        }
    }

    fn end_string<S: Sink>(&mut self, at: usize, sink: &mut S) -> Result<(), Stopped<S::Stop>> {
        if self.high.take().is_some() {
            self.char_of_string(char::REPLACEMENT_CHARACTER, at, sink)?;
        }
        if self.in_key {
            self.in_key = false;
            self.state = State::Colon;
            let result = sink.event(Event::Key(&self.buf), at).map_err(Stopped::Sink);
            self.buf.clear();
            return result;
        }
        self.state = self.after_value();
        sink.event(Event::EndString, at).map_err(Stopped::Sink)
    }
}

/// Whether `text` is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Record(Vec<String>);

    impl Sink for Record {
        type Stop = ();
        fn event(&mut self, event: Event<'_>, at: usize) -> Result<(), ()> {
            self.0.push(format!("{at}:{event:?}"));
            Ok(())
        }
    }

    fn events(chunks: &[&str]) -> Result<Vec<String>, usize> {
        let mut tokens = Tokens::default();
        let mut sink = Record(Vec::new());
        for chunk in chunks {
            match tokens.feed(chunk, &mut sink) {
                Ok(_) => {}
                Err(Stopped::Syntax(Syntax(at))) => return Err(at),
                Err(Stopped::Sink(())) => unreachable!(),
            }
        }
        Ok(sink.0)
    }

    #[test]
    fn tokens_do_not_depend_on_where_the_text_is_cut() {
        let text = r#"{"k\u00e9y": [1.5e3, true, null, "a\"\ud83d\ude00"], "n": -0}"#;
        let whole = events(&[text]).unwrap();
        for cut in 1..text.len() {
            assert_eq!(events(&[&text[..cut], &text[cut..]]).unwrap(), whole);
        }
        let expected = [
            "0:BeginObject",
            "10:Key(\"kéy\")",
            "13:BeginArray",
            "14:BeginScalar(Number)",
            "19:EndScalar(Number, \"1.5e3\")",
            "21:BeginScalar(Bool)",
            "24:EndScalar(Bool, \"true\")",
            "27:BeginScalar(Null)",
            "30:EndScalar(Null, \"null\")",
            "33:BeginString",
            "34:Char('a')",
            "36:Char('\"')",
            "48:Char('😀')",
            "49:EndString",
            "50:EndArray",
            "55:Key(\"n\")",
            "58:BeginScalar(Number)",
            "60:EndScalar(Number, \"-0\")",
            "60:EndObject",
        ];
        assert_eq!(whole, expected);
    }

    #[test]
    fn what_serde_json_refuses_is_a_syntax_error_at_its_byte() {
        for (text, at) in [
            (r#"{"a": 01}"#, 8),
            (r#"{"a": tru }"#, 9),
            (r#"{"a" 1}"#, 5),
            (r#"{"a": [1,]}"#, 9),
            (r#"{"a": "\x"}"#, 8),
            ("{\"a\": \"\n\"}", 7),
            (r#"{"a": 1.}"#, 8),
            (r#"{,}"#, 1),
        ] {
            assert_eq!(events(&[text]), Err(at), "{text}");
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err());
        }
    }

    #[test]
    fn the_root_value_ends_the_feed() {
        let mut tokens = Tokens::default();
        let mut sink = Record(Vec::new());
        assert_eq!(tokens.feed("{\"a\":1", &mut sink).unwrap(), 6);
        assert!(!tokens.done());
        assert_eq!(tokens.feed("} trailing", &mut sink).unwrap(), 1);
        assert!(tokens.done());
    }
}
