//! Schema text -> JSON value, with an invalid document reported at its `origin:line:col`
//! and the line it breaks on.

use serde_json::Value;

use crate::error::SchemaError;

/// Parses the schema text, reporting errors as `origin:line:col`.
pub(crate) fn parse(text: &str, origin: &str) -> Result<Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        // serde_json appends " at line L column C", which we show as a prefix.
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m);
        let excerpt = excerpt(text, e.line());
        let message = format!("invalid JSON: {message}{excerpt}");
        SchemaError::new(origin, "", message).at(Some((e.line(), e.column())))
    })
}

/// `` (near `<line>`)`` for a 1-based line, trimmed and shortened; empty if
/// the line is blank or missing.
fn excerpt(text: &str, line: usize) -> String {
    const MAX: usize = 60;
    let Some(content) = text.lines().nth(line.saturating_sub(1)).map(str::trim) else {
        return String::new();
    };
    if content.is_empty() {
        return String::new();
    }
    let short: String = content.chars().take(MAX).collect();
    let ellipsis = if content.chars().count() > MAX {
        "..."
    } else {
        ""
    };
    format!(" (near `{short}{ellipsis}`)")
}
