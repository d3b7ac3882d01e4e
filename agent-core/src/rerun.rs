//! Reruns: what an agent that runs again learns about its previous attempt.
//!
//! When a sub-agent runs again (an output retry, or a redo a human asked for) its prompt gets
//! a "Previous attempt" section (`templates/previous_attempt.md`): the attempt's number, its
//! context ID, the error, and its output (as markdown when it is JSON, else verbatim in a
//! fence). So no rerun is sent the prompt its previous attempt got.
//!
//! An output retry continues the call's conversation: the section follows the retry error in
//! the user message, and names the call's own context ID. A redo
//! ([`Runtime::call_sub_agent`](crate::Runtime::call_sub_agent) with [`CallOptions::previous`](crate::runtime::CallOptions::previous)) is a new call with a new
//! context ID: the prepared user prompt, then the section naming the redone call.

use crate::ids::{ContextId, Timestamp};
use crate::texts::Fenced;
use agent_contracts_contract::RetryError;
use agent_contracts_contract::{MarkdownError, RawJson};
use askama::Template;
use serde::{Deserialize, Serialize};

/// The previous attempt of an agent that runs again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PreviousAttempt {
    /// The call the attempt belonged to.
    pub context_id: ContextId,
    /// What the attempt answered: its JSON output, or the raw text when it had none.
    pub serialized_output: String,
    /// Why it was rejected, if it was (a contract error, or the reason a human gave).
    pub error_message: Option<String>,
    /// The attempt's number, from 1: the rerun is attempt `attempt + 1`.
    pub attempt: u32,
    /// When it was rejected.
    pub at: Timestamp,
}

impl PreviousAttempt {
    /// Attempt `attempt` of the call `context_id`, which answered `serialized_output`,
    /// rejected now.
    pub fn new(context_id: ContextId, serialized_output: impl Into<String>, attempt: u32) -> Self {
        Self {
            context_id,
            serialized_output: serialized_output.into(),
            error_message: None,
            attempt,
            at: Timestamp::now(),
        }
    }

    /// The same attempt, rejected for `message`.
    pub fn with_error(mut self, message: impl Into<String>) -> Self {
        self.error_message = Some(message.into());
        self
    }

    /// The "Previous attempt" section of the rerun's user prompt.
    ///
    /// Fails only when the previous output is JSON the markdown renderer refuses.
    pub fn render(&self) -> Result<String, MarkdownError> {
        // As the model wrote it: its keys in their order, its numbers' own text.
        let output = match serde_json::from_str::<RawJson>(&self.serialized_output) {
            Ok(raw) if raw.get().starts_with(['{', '[']) => PreviousOutput::Json(raw),
            _ if self.serialized_output.trim().is_empty() => PreviousOutput::Empty,
            _ => PreviousOutput::Raw(Fenced::new(&self.serialized_output)),
        };
        PreviousAttemptSection {
            attempt: self.attempt,
            context_id: &self.context_id,
            at: self.at,
            error: self.error_message.as_deref().map(Fenced::new),
            output,
        }
        .render()
        // The template's only failure is the markdown filter's.
        .map_err(<MarkdownError as serde::ser::Error>::custom)
    }

    /// `prompt`, then a blank line and the "Previous attempt" section.
    pub(crate) fn append_to(&self, prompt: &str) -> Result<String, MarkdownError> {
        Ok(format!("{prompt}\n\n{}", self.render()?))
    }
}

/// The "Previous attempt" section.
#[derive(Template)]
#[template(path = "previous_attempt.md", escape = "none")]
struct PreviousAttemptSection<'a> {
    attempt: u32,
    context_id: &'a ContextId,
    at: Timestamp,
    error: Option<Fenced<'a>>,
    output: PreviousOutput<'a>,
}

enum PreviousOutput<'a> {
    Json(RawJson),
    Raw(Fenced<'a>),
    Empty,
}

mod filters {
    pub use agent_contracts_contract::filters::*;
}

/// A retry error as the text of [`PreviousAttempt::error_message`]: the problem, then each
/// violation with its location.
#[doc(hidden)]
pub fn describe_retry_error(error: &RetryError) -> String {
    let mut text = error.to_string();
    let single = error.errors.len() == 1 && error.errors[0].message == error.validation_message;
    if !single {
        for violation in &error.errors {
            let path: Vec<String> = violation.path.iter().map(ToString::to_string).collect();
            text.push_str(&format!(
                "\n- at `/{}`: {}",
                path.join("/"),
                violation.message
            ));
        }
    }
    text
}
