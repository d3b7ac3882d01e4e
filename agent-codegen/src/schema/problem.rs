//! A schema construct the code generator refuses or notes, located by JSON pointer: what the
//! rejection rules, the size bounds and the condition check all report, before the pointer
//! becomes `path:line:col` (`locate.rs`).

/// One rejected construct: where it is and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    /// JSON pointer of the offending value.
    pub pointer: String,
    /// Lowercase message that names the keyword and the node's location.
    pub message: String,
}

impl Problem {
    pub(crate) fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// Pointer as shown in messages: the root's empty pointer reads as `#`.
pub(crate) fn display(pointer: &str) -> &str {
    if pointer.is_empty() { "#" } else { pointer }
}
