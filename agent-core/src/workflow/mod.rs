//! Multi-agent workflows: a supervisor runs declared steps over one shared conversation.
//!
//! - After each agent, its output is stored in the shared context under `<agent>_output` (the
//!   parsed JSON, else the raw text), and the next agent receives the accumulated context,
//!   with the run's input, through the same path as a tool call: kwargs merge, contract
//!   validation, typed input, user prompt. Context lands in the user prompt, never as a JSON
//!   dump in the system prompt.
//! - Every agent sees the whole conversation so far: the user's request first, then each
//!   routing message and answer. Routing appends to that conversation; it never sends a lone
//!   message.
//! - Each step asks its agent through the same agent-call loop as
//!   [`Runtime`](crate::Runtime): an answer that breaks the output contract goes back with the
//!   retry error and a "Previous attempt" section naming the call's context ID.
//! - A step can get a field collected from earlier steps' outputs ([`Workflow::collect`](crate::Workflow::collect)): an
//!   array of `{agent_name, description, output}` items, each output as the model wrote it
//!   (key order and number text kept, across a pause too).
//! - Handoff validators, typed by the producer's output, check it before its consumer starts;
//!   a refusal re-asks the producer (bounded), then stops the run naming both agents.
//! - An agent may ask the user for input: the run pauses with a [`HumanFeedbackRequest`] and a
//!   [`WorkflowState`] that serializes to JSON and resumes, in another process too.
//! - A step may need a person's approval ([`Workflow::approve`](crate::Workflow::approve)):
//!   after every output of its agent the run pauses with that output, and goes on with a
//!   [`Decision`]: approved, rejected with a reason (the run ends or goes to another agent),
//!   or edited (the edit replaces the output, checked against its contract).
//!
//! The modules, bottom up: `decision` is a person's answer at an approval step, `definition` holds the [`Workflow`](crate::Workflow) as declared, `state` what a
//! run is at a pause, and `run` the [`Runner`](crate::Runner)
//! that drives it (`checkpoint` is where a durable runner stands in its store, `versions` the
//! contract fingerprints its records name). This module
//! only names them.

pub(crate) mod checkpoint;
// The root re-exports `Workflow` and `Runner` (what every workflow user names); the module
// holds the rest, so each item has one path.
pub(crate) mod decision;
pub(crate) mod definition;
pub(crate) mod feeds;
pub(crate) mod run;
mod state;
mod versions;

pub use checkpoint::PausedRun;
pub use decision::Decision;
pub use definition::{Member, OnReject};
pub use run::WorkflowOutcome;
pub use state::{ApprovalRecord, HumanFeedbackRequest, WorkflowState};
