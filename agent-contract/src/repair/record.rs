//! What a repair records, and which kinds run: the leaf the readers and `mod.rs` share.

use crate::limits::Limits;
use crate::truncate::truncate;
use serde::Serialize;
use std::fmt;

/// What a [`Repair`] fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RepairKind {
    /// A comma before a closing `}` or `]`, removed.
    TrailingComma,
    /// A `//` or `/* */` comment, removed.
    Comment,
    /// A string in single quotes, written in double quotes.
    SingleQuotes,
    /// An object key written as a bare identifier, quoted.
    UnquotedKey,
    /// A string that is exactly a JSON number where the schema wants a number: that number.
    NumberString,
    /// `"true"` or `"false"` where the schema wants a boolean: that boolean.
    BooleanString,
    /// A string equal, ignoring case, to exactly one of the enum's strings: that string.
    EnumCase,
    /// A single value where the schema wants an array of such values: a one-item array.
    SingleToArray,
}

impl RepairKind {
    /// Every kind, in the order of the enum.
    pub const ALL: [RepairKind; 8] = [
        Self::TrailingComma,
        Self::Comment,
        Self::SingleQuotes,
        Self::UnquotedKey,
        Self::NumberString,
        Self::BooleanString,
        Self::EnumCase,
        Self::SingleToArray,
    ];

    /// The kind's name, as in the JSON of a [`Repair`] (`trailing_comma`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TrailingComma => "trailing_comma",
            Self::Comment => "comment",
            Self::SingleQuotes => "single_quotes",
            Self::UnquotedKey => "unquoted_key",
            Self::NumberString => "number_string",
            Self::BooleanString => "boolean_string",
            Self::EnumCase => "enum_case",
            Self::SingleToArray => "single_to_array",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for RepairKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One fix made to a value before it was checked.
///
/// Serializes as `{"path", "kind", "before", "after"}`: what a transcript, a trace, a CLI and a
/// caller model read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Repair {
    /// A JSON pointer: the field fixed, or for a syntax fix the container it was in (`""` for
    /// the root). For a call's fix of its context's values, relative to the context.
    pub path: String,
    /// What was fixed.
    pub kind: RepairKind,
    /// The text as written (cut to [`Limits::max_echo_bytes`]).
    pub before: String,
    /// The text it became (cut likewise; empty for what was removed).
    pub after: String,
}

impl Repair {
    pub(super) fn new(
        path: String,
        kind: RepairKind,
        before: &str,
        after: &str,
        limits: &Limits,
    ) -> Self {
        let max = limits.max_echo_bytes;
        Self {
            path,
            kind,
            before: truncate(before, max).into_owned(),
            after: truncate(after, max).into_owned(),
        }
    }
}

/// Which kinds of repair run: all by default; each can be switched off.
///
/// ```
/// use agent_contracts_contract::{RepairKind, Repairs};
///
/// let repairs = Repairs::default().without(RepairKind::EnumCase);
/// assert!(!repairs.allows(RepairKind::EnumCase));
/// assert!(repairs.allows(RepairKind::TrailingComma));
/// assert!(!Repairs::none().allows(RepairKind::Comment));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Repairs(u16);

impl Default for Repairs {
    fn default() -> Self {
        Self::all()
    }
}

impl Repairs {
    /// Every kind.
    pub fn all() -> Self {
        RepairKind::ALL
            .iter()
            .fold(Self(0), |repairs, kind| repairs.with(*kind))
    }

    /// No repair: every malformed value is a retry error, as before repairs existed.
    pub fn none() -> Self {
        Self(0)
    }

    /// These repairs and `kind`.
    pub fn with(self, kind: RepairKind) -> Self {
        Self(self.0 | kind.bit())
    }

    /// These repairs without `kind`.
    pub fn without(self, kind: RepairKind) -> Self {
        Self(self.0 & !kind.bit())
    }

    /// Whether `kind` runs.
    pub fn allows(self, kind: RepairKind) -> bool {
        self.0 & kind.bit() != 0
    }

    /// Whether no kind runs.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for Repairs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(RepairKind::ALL.iter().filter(|k| self.allows(**k)))
            .finish()
    }
}

/// A JSON pointer's segment: `~` and `/` escaped (RFC 6901).
pub(super) fn pointer_segment(out: &mut String, segment: &str) {
    out.push('/');
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}
