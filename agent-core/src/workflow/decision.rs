//! A person's answer at an approval step ([`Workflow::approve`](crate::Workflow::approve)):
//! approve the output, reject it with a reason, or edit it. Below the runner, which applies
//! it (`run/approve.rs`); it knows no workflow.

use serde::Serialize;

/// What a person decides about the output an approval step paused with
/// ([`HumanFeedbackRequest::approval`](super::HumanFeedbackRequest::approval)).
///
/// ```
/// use agent_contracts::workflow::Decision;
///
/// #[derive(serde::Serialize)]
/// struct Draft { reply: &'static str }
///
/// let edit = Decision::edit(&Draft { reply: "Thanks, fixed." }).unwrap();
/// assert_eq!(edit, Decision::Edit { value: r#"{"reply":"Thanks, fixed."}"#.into() });
/// assert_eq!(Decision::reject("too curt"), Decision::Reject { reason: "too curt".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// The output goes on as it is.
    Approve,
    /// The output is refused: the run ends or goes to another agent, as the approval's
    /// [`OnReject`](super::OnReject) says, the reason in the conversation.
    Reject {
        /// Why, in the person's words.
        reason: String,
    },
    /// The output is replaced by this JSON text, checked against the producer's output
    /// contract first: an edit that breaks it is refused
    /// ([`Error::EditRefused`](crate::Error::EditRefused), naming the field) and the run
    /// stays paused.
    Edit {
        /// The edited output, as JSON text (its key order is kept).
        value: String,
    },
}

impl Decision {
    /// Rejects the output for `reason`.
    pub fn reject(reason: impl Into<String>) -> Self {
        Self::Reject {
            reason: reason.into(),
        }
    }

    /// Replaces the output with `value`, typically the producer's own output type.
    pub fn edit<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        Ok(Self::Edit {
            value: serde_json::to_string(value)?,
        })
    }

    /// The decision's name as the MCP resume tool takes it: `approve`, `reject` or `edit`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Reject { .. } => "reject",
            Self::Edit { .. } => "edit",
        }
    }
}
