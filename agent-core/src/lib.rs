//! The runtime of agent-contracts: agents called as tools with their contracts checked,
//! workflows, durable runs and the traits models and stores implement.
//!
//! Use it through the `agent-contracts` crate, which re-exports this crate's root and modules
//! with the derives, and brings the providers, MCP and the stores as features.
//!
//! The root holds about twenty names: what the first example and a typical service name. The
//! rest is in modules named by concept: [`contract`], [`model`], [`prompt`], [`stream`],
//! [`runtime`], [`workflow`], [`store`] and [`transcript`]; each item has one path.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod ask;
mod call;
mod chat;
mod config;
mod contributor;
mod cost;
mod delivery;
mod engine;
mod error;
mod ids;
mod output;
mod rerun;
mod texts;
mod tool;
mod upstream;

pub mod eval;
pub mod recorder;
pub mod store;
pub mod telemetry;
pub mod transcript;
pub mod worker;
pub mod workflow;

// The root: what the first example and a typical service name. Everything else is in a module
// named by its concept, each item at one path.
pub use agent_contracts_contract::{
    Agent, AgentInput, CheckedOutput, Contract, DynAgent, Limits, RawJson, RawObject, RetryError,
};
pub use chat::{ChatModel, Message, ScriptedModel};
pub use config::Config;
pub use contributor::PromptContributor;
pub use engine::Runtime;
pub use error::Error;
pub use output::AgentOutput;
pub use tool::{Tool, ToolOutput};
pub use workflow::definition::Workflow;
pub use workflow::run::Runner;

/// Contracts and their checks: the compiled schema's kinds and errors, a tool call's kwargs,
/// the checks a call and an output pass, and the retry error's parts.
pub mod contract {
    /// A provider's strict subset of JSON Schema (defined in `agent-contracts-schema`, where the
    /// code generator decides which contracts fit which).
    pub use agent_contracts_contract::Dialect;
    pub use agent_contracts_contract::{
        Checked, ContractChecks, ContractError, ContractKind, ErrorKind, PathSegment, PrepareError,
        PreparedCall, RESERVED_KEYS, RetryDetails, ToolCall, ToolDefinition, UserField, Violation,
        check_call, check_output, extract_json,
    };
    /// A contract's media fields: their values, what each takes, and how.
    pub use agent_contracts_contract::{MediaForm, MediaInput, MediaSpec};
    /// Lossless repair of an answer or a call that broke its contract: what was fixed, which
    /// kinds run, and the two front doors the runtime calls before any retry.
    pub use agent_contracts_contract::{
        Repair, RepairKind, Repaired, Repairs, repair_answer, repair_kwargs,
    };
    /// The shape check every contract passes when it is built (defined in
    /// `agent-contracts-schema`, which the code generator runs too).
    pub use agent_contracts_contract::{SchemaShapeError, check_schema};
}

/// What models are asked and answer: requests, responses, options, usage and prices, and the
/// streaming sink a model writes its deltas to. The [`ChatModel`] trait, [`Message`] and
/// [`ScriptedModel`] are at the root.
pub mod model {
    pub use crate::chat::{
        BoxFuture, ChatRequest, ChatResponse, Media, MediaData, MediaKind, ModelError,
        ModelOptions, OutputSchema, Part, Role, StreamDelta, StreamSink, Thinking, ToolCallRequest,
        ToolChoice, Usage, tool_calls,
    };
    pub use crate::cost::{Price, Prices};
}

/// Prompts: rendering JSON as markdown, the template filters, the contributors that add
/// sections to a system prompt, and the context a step receives from earlier steps. The
/// [`PromptContributor`] trait is at the root.
pub mod prompt {
    pub use crate::contributor::{
        AssemblyError, ContextIdContributor, ContributorError, ContributorRegistry,
        EpisodicMemoryContributor, PromptContext,
    };
    pub use crate::rerun::PreviousAttempt;
    pub use crate::upstream::{Upstream, UpstreamContext, UpstreamError};
    pub use agent_contracts_contract::{
        MarkdownError, PromptError, ToMarkdown, filters, to_markdown,
    };
}

/// Streaming: how a call delivers its output ([`Delivery`](stream::Delivery)), the events a
/// watcher sees, typed partial outputs as they arrive, and the check of a prefix of an
/// answer.
pub mod stream {
    pub use crate::delivery::{Delivery, StreamEvent, Watch};
    pub use crate::engine::{OutputStream, Streamed};
    pub use agent_contracts_contract::{Broken, PartialJson, PartialOutput, PrefixCheck};
}

/// A call's options and outcome, which side of a call an error is on, and what a tool call
/// that waits on a person ends with.
pub mod runtime {
    pub use crate::ask::UserAsk;
    pub use crate::config::CancellationToken;
    pub use crate::engine::{CallOptions, LoopOutcome, LoopPause, Outcome};
    pub use crate::error::Side;
    pub use crate::tool::{ToolOutcome, ToolPause};
}

/// Items generated code and the sibling crates reach; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use agent_contracts_contract::__private::*;

    // What generated code names, here so that moving an item between the public modules
    // never changes generated code (only the root traits are named by their public path).
    pub use crate::contributor::{ContributorError, PromptContext};

    pub use crate::rerun::describe_retry_error;
    pub use crate::workflow::definition::OnReject;
    pub use crate::workflow::feeds::Feeds;
}
