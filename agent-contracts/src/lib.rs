//! Typed, checked and rendered data between LLM agents.
//!
//! A JSON Schema file is an agent's input and output contract; `#[derive(Agent)]` (or a build
//! script with `agent-contracts-codegen`) turns it into typed Rust. Flat kwargs merge into a
//! context validated against the schema, and a bad call returns a structured retry error the
//! calling model can act on. Askama templates, checked at compile time against the contract's
//! fields, render the prompts.
//!
//! The root holds what the first example and a typical service name: the agent traits and
//! their derives, [`Runtime`], [`Runner`], [`Config`], [`Error`], [`ChatModel`], [`Message`],
//! [`Contract`] and the output types. The rest is in modules named by concept: [`contract`],
//! [`model`], [`prompt`], [`stream`], [`runtime`], [`workflow`], [`store`] and [`transcript`].
//! The features `llm`, `mcp`, `sqlite` and `postgres` bring the providers, MCP and the durable
//! stores (the stores into [`store`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The runtime's root and concept modules. Generated code names only the root traits and
// `::agent_contracts::__private::...`. `store` is this crate's own (below), which the glob
// does not bring: an item defined here shadows a glob-imported one.
pub use agent_contracts_runtime::*;

#[cfg(feature = "derive")]
pub use agent_contracts_macros::{Agent, AgentInput, PromptContributor, Workflow};

/// Real chat models over HTTP: OpenAI-compatible and Anthropic providers, and the layers over
/// any model (retries, fallback, routing, tracing).
#[cfg(feature = "llm")]
pub mod llm {
    pub use agent_contracts_llm::*;
}

/// Agents and workflows served as MCP tools, and MCP servers' tools used by agents.
#[cfg(feature = "mcp")]
pub mod mcp {
    pub use agent_contracts_mcp::*;
}

/// Durable runs: the [`CheckpointStore`](store::CheckpointStore) trait, its records and
/// errors, the rules every store keeps ([`check_save`](store::check_save),
/// [`check_claim`](store::check_claim), ...), an in-memory store, and with the features
/// `sqlite` and `postgres` the stores of `agent-contracts-store`: a folder of files, SQLite and
/// PostgreSQL, and [`open`](store::open) by URL.
pub mod store {
    pub use agent_contracts_runtime::store::*;
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub use agent_contracts_store::*;
}
