//! The runtime of agent-contracts: agents called as tools with their contracts checked,
//! workflows, durable runs and the traits models and stores implement.
//!
//! Use it through the `agent-contracts` crate, which re-exports this crate's root with the
//! derives, and brings the providers, MCP and the stores as features.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;
mod config;
mod contributor;
mod cost;
mod delivery;
mod error;
mod ids;
mod model;
mod output;
mod rerun;
mod runtime;
mod store;
mod texts;
mod tool;
mod transcript;
mod upstream;
mod workflow;

// The contract layer, at this crate's root (`agent_contracts::Contract`, `agent_contracts::ToolCall`, ...):
// users depend on agent-core alone, and generated code names these paths.
pub use agent_contracts_contract::*;

pub use config::{CancellationToken, Config};
pub use contributor::{
    AssemblyError, ContextIdContributor, ContributorError, ContributorRegistry,
    EpisodicMemoryContributor, PromptContext, PromptContributor,
};
pub use cost::{Price, Prices};
pub use delivery::{Delivery, StreamEvent, Watch};
pub use error::{Error, Side};
pub use ids::{ContextId, ContextIdError, ContextIdGenerator, Segment, Timestamp};
pub use model::{
    BoxFuture, ChatModel, ChatRequest, ChatResponse, Image, Message, ModelError, ModelOptions,
    OutputSchema, Role, ScriptedModel, StreamDelta, StreamSink, Thinking, ToolCallRequest,
    ToolChoice, Usage, tool_calls,
};
pub use output::AgentOutput;
pub use rerun::PreviousAttempt;
pub use runtime::{CallOptions, Outcome, OutputStream, Runtime, Streamed};
pub use store::{CheckpointStore, Lease, MemoryStore, RunPage, RunRecord, RunStatus, StoreError};
pub use tool::Tool;
pub use transcript::{Counts, Event, Transcript};
pub use upstream::{Upstream, UpstreamContext, UpstreamError};
pub use workflow::{
    HumanFeedbackRequest, Member, PausedRun, Runner, Workflow, WorkflowOutcome, WorkflowState,
};

/// Items generated code and the sibling crates reach; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use agent_contracts_contract::__private::*;

    pub use crate::rerun::describe_retry_error;
    pub use crate::store::{check_claim, check_save, lease_lost, next_record, not_found, now_ms};
    pub use crate::store::{renew_lease, take};
    pub use crate::workflow::Feeds;
}
