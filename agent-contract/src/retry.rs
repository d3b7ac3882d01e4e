//! The structured retry error a caller LLM can act on.
//!
//! The retry error's JSON has the keys `success`, `error`, `validation_message`, `path`,
//! `required_fields`, `missing_fields`, `provided_fields`, `hint` and `errors`, so every
//! failure, whether a contract violation or arguments that are not even JSON, reads the same
//! to the caller.

use serde::Serialize;
use std::fmt;

/// What went wrong, as data. Each variant's `Display` is the retry error's `error` text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The context broke the agent's input contract.
    #[error("Input contract validation failed")]
    InputContract,
    /// The agent's answer broke its output contract.
    #[error("Output contract validation failed")]
    OutputContract,
    /// The arguments text was not JSON.
    #[error("Tool call arguments are not valid JSON")]
    NotJson,
    /// The arguments were JSON but not an object.
    #[error("Tool call arguments must be a JSON object")]
    NotObject,
    /// No `task` key.
    #[error("Missing required `task` string")]
    MissingTask,
    /// `task` was present with another type.
    #[error("`task` must be a string")]
    TaskNotString,
    /// `run_identifier` was present with a type other than string.
    #[error("`run_identifier` must be a string")]
    RunIdentifierNotString,
    /// `context` was neither absent, null, an object, nor a string holding an object.
    #[error("`context` must be a JSON object or a string holding one")]
    ContextNotObject,
    /// Nesting deeper than the limit.
    #[error("Input nesting exceeds the depth limit of {limit}")]
    TooDeep {
        /// The configured limit.
        limit: usize,
    },
    /// More bytes than the limit.
    #[error("Input of {size} bytes exceeds the size limit of {limit} bytes")]
    TooLarge {
        /// Bytes received.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A tool call named a tool the caller does not have.
    #[error("Unknown tool")]
    UnknownTool,
    /// An answer that holds no JSON object at all.
    #[error("Output contains no JSON object")]
    OutputNotJson,
    /// More JSON values than the limit.
    #[error("Input holds more than {limit} JSON values")]
    TooManyValues {
        /// The configured limit.
        limit: usize,
    },
    /// A number no `f64` holds (`1e400`).
    #[error("Number out of range")]
    NumberOutOfRange,
    /// The rendered prompt is larger than the limit.
    #[error("The rendered prompt of {size} bytes exceeds the limit of {limit} bytes")]
    PromptTooLarge {
        /// Bytes rendered.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A handoff validator refused a producer's output for its consumer.
    #[error("Handoff validation failed")]
    Handoff,
}

/// One segment of a JSON instance location: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

impl fmt::Display for PathSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key(k) => f.write_str(k),
            Self::Index(i) => write!(f, "{i}"),
        }
    }
}

/// One violation, with what the schema says the failing field means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Violation {
    /// Instance location of the violation.
    pub path: Vec<PathSegment>,
    /// What is wrong, echoing at most [`Limits::max_echo_bytes`](crate::Limits) of the value.
    pub message: String,
    /// The schema's `description` of the failing property, so the caller learns what to send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The tool result returned to a caller whose call (or answer) cannot be used.
///
/// Serializes with exactly the keys `success`, `error`, `validation_message`, `path`,
/// `required_fields`, `missing_fields`, `provided_fields`, `hint` and `errors`. Its fields are
/// those of [`RetryDetails`], reached through `Deref`; the box keeps every `Result` that may
/// hold one small.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RetryError(Box<RetryDetails>);

/// The fields of a [`RetryError`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RetryDetails {
    /// Always `false`.
    pub success: bool,
    /// What kind of problem this is, as text (the `Display` of [`RetryDetails::kind`]).
    pub error: String,
    /// The first problem found.
    pub validation_message: String,
    /// Instance location of the first problem.
    pub path: Vec<PathSegment>,
    /// The contract's required top-level fields, in schema order.
    pub required_fields: Vec<String>,
    /// Required fields the call did not provide, in schema order.
    pub missing_fields: Vec<String>,
    /// Fields the call did provide, in the caller's order.
    pub provided_fields: Vec<String>,
    /// What to do about it.
    pub hint: String,
    /// Every violation found, up to [`Limits::max_errors`](crate::Limits).
    pub errors: Vec<Violation>,
    /// The problem as data, for Rust callers; not part of the JSON.
    #[serde(skip)]
    pub kind: ErrorKind,
}

impl From<RetryDetails> for RetryError {
    fn from(details: RetryDetails) -> Self {
        Self(Box::new(details))
    }
}

impl std::ops::Deref for RetryError {
    type Target = RetryDetails;
    fn deref(&self) -> &RetryDetails {
        &self.0
    }
}

impl std::ops::DerefMut for RetryError {
    fn deref_mut(&mut self) -> &mut RetryDetails {
        &mut self.0
    }
}

impl RetryError {
    /// An error about the call as a whole (not JSON, no task, too deep, ...): no field details.
    pub fn call(kind: ErrorKind, message: impl Into<String>, hint: impl Into<String>) -> Self {
        let message = message.into();
        RetryDetails {
            success: false,
            error: kind.to_string(),
            validation_message: message.clone(),
            path: Vec::new(),
            required_fields: Vec::new(),
            missing_fields: Vec::new(),
            provided_fields: Vec::new(),
            hint: hint.into(),
            errors: vec![Violation {
                path: Vec::new(),
                message,
                description: None,
            }],
            kind,
        }
        .into()
    }

    /// Fills in the contract's required fields, so a call-level error still tells the caller
    /// what the contract wants.
    pub fn with_required(mut self, required: &[String]) -> Self {
        self.required_fields = required.to_vec();
        self
    }

    /// The error as the JSON value a tool call returns.
    pub fn to_json(&self) -> serde_json::Value {
        // Serializing plain strings and vectors cannot fail.
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The error as a tool result of the agent call `context_id`, to serialize: the keys of
    /// the error in their order, then `context_id` (what a model reads).
    pub fn with_context_id<'a, C: Serialize>(&'a self, context_id: &'a C) -> impl Serialize + 'a {
        WithContextId {
            error: &self.0,
            context_id,
        }
    }
}

/// A retry error and the agent call it is about (see [`RetryError::with_context_id`]).
#[derive(Debug, Clone, Copy, Serialize)]
struct WithContextId<'a, C> {
    #[serde(flatten)]
    error: &'a RetryDetails,
    context_id: &'a C,
}

impl fmt::Display for RetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.validation_message)
    }
}

impl std::error::Error for RetryError {}
