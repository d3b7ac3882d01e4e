//! Stage 5, derive: the proc-macro front end. `#[derive(Agent)]` and `#[derive(AgentInput)]`
//! (`agent.rs`), `#[derive(PromptContributor)]` (`contributor.rs`) and `#[derive(Workflow)]`
//! (`workflow.rs`) parse their attributes into a model that keeps each token's span
//! (`keys.rs` for the `key = value` lists, `mapping.rs` for `types = { ... }`), validate it,
//! and expand through `emit`, collecting every problem of one derive for one compile
//! (`ctxt.rs`).
//!
//! May import: `flow`, `evals`, `emit`, `typify`, `schema` and the crate's leaf modules; never
//! `build`.

mod agent;
pub(crate) mod contributor;
mod ctxt;
pub(crate) mod eval_tests;
mod keys;
mod mapping;
pub(crate) mod workflow;

pub use agent::{derive_agent, derive_agent_input};
