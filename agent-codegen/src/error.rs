//! The error type for everything that can be wrong with a contract schema.

use std::fmt;

/// One problem found in a contract schema.
///
/// Messages are lowercase, put code in backticks and have no trailing period,
/// so they read well after the `path:line:col:` prefix of [`fmt::Display`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", Located(self))]
pub struct SchemaError {
    /// Display path of the schema file, as given by the caller.
    pub origin: String,
    /// JSON pointer of the offending schema node (`""` for the root).
    pub pointer: String,
    /// 1-based line and column in the schema text, when known.
    pub line_col: Option<(usize, usize)>,
    /// What is wrong, without location.
    pub message: String,
}

impl SchemaError {
    /// An error about the node at `pointer` of the schema read from `origin`.
    pub fn new(
        origin: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            origin: origin.into(),
            pointer: pointer.into(),
            line_col: None,
            message: message.into(),
        }
    }

    /// Attaches a 1-based line and column.
    #[must_use]
    pub fn at(mut self, line_col: Option<(usize, usize)>) -> Self {
        self.line_col = line_col;
        self
    }
}

/// Renders the `origin` prefix: `path:line:col`, else `path (at /pointer)`,
/// else just `path`.
struct Located<'a>(&'a SchemaError);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        match (e.line_col, e.pointer.as_str()) {
            (Some((line, col)), _) => write!(f, "{}:{line}:{col}: {}", e.origin, e.message),
            (None, "") => write!(f, "{}: {}", e.origin, e.message),
            (None, pointer) => write!(f, "{} (at {pointer}): {}", e.origin, e.message),
        }
    }
}
