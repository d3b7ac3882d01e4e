//! A local web inspector for agent-contracts runs kept in a checkpoint store, served by
//! `agent-contract ui --store URL`.
//!
//! - The runs: status (the words of `--list --json`: `completed` for a finished run),
//!   workflow or first agent, owner, takeovers, created and updated, tokens and cost; by
//!   status, newest first, paged.
//! - A run's timeline: each agent call with its rendered prompt, the model's answers (JSON as
//!   a collapsible tree), every contract verdict with each violated field marked
//!   (`aria-invalid="true"`, a missing field shown where it should have been), retries, a
//!   stream stopped at its deciding byte, tool calls and results, usage and cost, and the
//!   run's claims and takeovers.
//! - A paused run's question, answered from the page: the answer is checked against the
//!   resume contract (`resume_<workflow>`'s over MCP) and recorded as `answered`, for a
//!   worker to resume.
//! - An open run's updates as server-sent events.
//!
//! The page is one HTML file, its script and its style, compiled in (no CDN, no build step).
//! Text from a model or a stored row is only ever set as text (`textContent`), never parsed as
//! HTML, and the page's content security policy runs no script but its own. Who may reach it
//! is [`Access`]: loopback names and the page's own origin by default, a bearer token for the
//! API beyond loopback.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod access;
mod runs;
mod server;

pub use access::Access;
pub use runs::{parse_status, status_word};
pub use server::{AgentCard, Inspector, MAX_ANSWER_CHARS, MAX_EVENTS, MAX_LIVE, MAX_PAGE};
