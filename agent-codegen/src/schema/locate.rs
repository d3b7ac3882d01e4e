//! Maps a JSON pointer back to a line and column of the schema text.
//!
//! serde_json's `Value` keeps no positions, so we rescan the (already
//! validated) text, following the pointer and skipping everything else.

use crate::schema::walk::decode_token;

/// 1-based line and column (in characters) of the value at `pointer`, or of
/// its key when the pointer ends in an object member (the key is what a
/// reader looks for). `None` if the pointer does not resolve.
pub(crate) fn locate(text: &str, pointer: &str) -> Option<(usize, usize)> {
    let mut scanner = Scanner {
        text,
        pos: 0,
        mark: None,
    };
    scanner.skip_ws();
    if !pointer.is_empty() {
        let tokens: Vec<String> = pointer
            .strip_prefix('/')?
            .split('/')
            .map(decode_token)
            .collect();
        for token in &tokens {
            scanner.enter(token)?;
        }
    }
    Some(line_col(text, scanner.mark.unwrap_or(scanner.pos)))
}

fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    (line, before[line_start..].chars().count() + 1)
}

struct Scanner<'a> {
    text: &'a str,
    /// Start of the current value.
    pos: usize,
    /// Start of the key of the current value, if it is an object member.
    mark: Option<usize>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// Consumes `byte` (after whitespace) or fails.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        (self.peek() == Some(byte)).then(|| self.pos += 1)
    }

    /// Moves from the current container to its member `token`.
    fn enter(&mut self, token: &str) -> Option<()> {
        match self.peek()? {
            b'{' => self.enter_object(token),
            b'[' => self.enter_array(token.parse().ok()?),
            _ => None,
        }
    }

    fn enter_object(&mut self, token: &str) -> Option<()> {
        self.pos += 1;
        loop {
            self.skip_ws();
            let key_at = self.pos;
            let key: String = serde_json::from_str(self.string()?).ok()?;
            self.expect(b':')?;
            self.skip_ws();
            if key == token {
                self.mark = Some(key_at);
                return Some(());
            }
            self.skip_value()?;
            self.expect(b',')?;
        }
    }

    fn enter_array(&mut self, index: usize) -> Option<()> {
        self.pos += 1;
        for _ in 0..index {
            self.skip_ws();
            self.skip_value()?;
            self.expect(b',')?;
        }
        self.skip_ws();
        self.mark = None;
        Some(())
    }

    /// Consumes a string literal and returns it with its quotes.
    fn string(&mut self) -> Option<&str> {
        let start = self.pos;
        (self.peek()? == b'"').then_some(())?;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => break,
                _ => self.pos += 1,
            }
        }
        self.pos += 1;
        self.text.get(start..self.pos)
    }

    /// Skips one value without recursion: brackets inside strings are
    /// skipped with the strings.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.pos += 1;
                }
                // End of a scalar (or of the enclosing container).
                b',' | b'}' | b']' if depth == 0 => return Some(()),
                _ => self.pos += 1,
            }
            if depth == 0 && self.at_value_end() {
                return Some(());
            }
        }
    }

    /// Whether only whitespace separates us from the end of the value.
    fn at_value_end(&mut self) -> bool {
        self.skip_ws();
        matches!(self.peek(), None | Some(b',' | b'}' | b']'))
    }
}
