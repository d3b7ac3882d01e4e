//! Typed, checked and rendered data between LLM agents.
//!
//! A JSON Schema file is an agent's input and output contract; `#[derive(Agent)]` (or a build
//! script with `agent-contracts-codegen`) turns it into typed Rust. Flat kwargs merge into a
//! context validated against the schema, and a bad call returns a structured retry error the
//! calling model can act on. Askama templates, checked at compile time against the contract's
//! fields, render the prompts.
//!
//! The root holds the derives, the runtime and the contract types; the features `llm`, `mcp`,
//! `sqlite` and `postgres` bring the providers, MCP and the durable stores as modules.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The runtime and the contract layer, at this crate's root: generated code names these paths
// (`::agent_contracts::Contract`, `::agent_contracts::__private::...`).
pub use agent_contracts_runtime::*;

#[cfg(feature = "derive")]
#[cfg_attr(docsrs, doc(cfg(feature = "derive")))]
pub use agent_contracts_macros::{Agent, AgentInput, PromptContributor, Workflow};

/// Real chat models over HTTP: OpenAI-compatible and Anthropic providers, and the layers over
/// any model (retries, fallback, routing, tracing).
#[cfg(feature = "llm")]
#[cfg_attr(docsrs, doc(cfg(feature = "llm")))]
pub mod llm {
    pub use agent_contracts_llm::*;
}

/// Agents and workflows served as MCP tools, and MCP servers' tools used by agents.
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp {
    pub use agent_contracts_mcp::*;
}

/// Durable checkpoint stores: a folder of files, SQLite (feature `sqlite`) and PostgreSQL
/// (feature `postgres`).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
pub mod store {
    pub use agent_contracts_store::*;
}
