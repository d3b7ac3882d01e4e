//! Typed, checked and rendered data between LLM agents.
//!
//! A JSON Schema file is an agent's input and output contract; `#[derive(Agent)]` (or a build
//! script with `agent-contracts-codegen`) turns it into typed Rust. Flat kwargs merge into a
//! context validated against the schema, and a bad call returns a structured retry error the
//! calling model can act on. Askama templates, checked at compile time against the contract's
//! fields, render the prompts.
//!
//! ```
//! use agent_contracts::{Agent, Runtime, ScriptedModel};
//!
//! /// Discovers the interactive elements and page structure of a target page
//! #[derive(Agent)]
//! #[agent(input = "../schemas/discovery_agent/input.schema.json",
//!         output = "../schemas/discovery_agent/output.schema.json")]
//! pub struct DiscoveryAgent;
//!
//! # fn main() -> Result<(), agent_contracts::Error> { block_on(async {
//! // Any `ChatModel` works; the scripted one replays answers, offline.
//! let model = ScriptedModel::default()
//!     .script("discovery_agent", [r#"{"page_title": "Login", "discovered_elements": []}"#]);
//! let runtime = Runtime::new(model);
//! let kwargs = r#"{"task": "Scan the page", "target_url": "https://myapp.com/login"}"#;
//! let page = runtime.call::<DiscoveryAgent>(kwargs).await?;
//! assert_eq!(page.page_title, "Login");
//!
//! // A call that breaks the input contract never reaches the model: the caller gets the
//! // retry error to act on.
//! let error = runtime.call::<DiscoveryAgent>(r#"{"task": "Scan"}"#).await.unwrap_err();
//! assert_eq!(error.retry_error().unwrap().missing_fields, ["target_url"]);
//! # Ok(()) })
//! # }
//! # // The scripted model answers at once: a future polled with a no-op waker finishes.
//! # fn block_on<F: std::future::Future>(future: F) -> F::Output {
//! #     let mut future = std::pin::pin!(future);
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     loop {
//! #         if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) { return out; }
//! #     }
//! # }
//! ```
//!
//! The root holds what the first example and a typical service name: the agent traits and
//! their derives, [`Runtime`], [`Runner`], [`Config`], [`Error`], [`ChatModel`], [`Message`],
//! [`Contract`] and the output types. The rest is in modules named by concept: [`contract`],
//! [`model`], [`prompt`], [`stream`], [`runtime`], [`workflow`], [`store`] and [`transcript`].
//! The features `llm`, `mcp`, `sqlite` and `postgres` bring the providers, MCP and the durable
//! stores (the stores into [`store`]):
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `derive` | yes | `#[derive(Agent, AgentInput, Workflow, PromptContributor)]` |
//! | `rustls` | yes | TLS by rustls with the webpki roots, for the providers and PostgreSQL |
//! | `native-tls` | | TLS by the platform's library, for the providers |
//! | `llm` | | `llm`: OpenAI-compatible and Anthropic models, retries, fallback, routing |
//! | `mcp` | | `mcp`: agents and workflows as MCP tools, MCP servers' tools for agents |
//! | `a2a` | | `a2a`: agents and workflows as A2A agents, remote A2A skills for agents |
//! | `sqlite`, `postgres` | | `store`: durable runs in SQLite or PostgreSQL (and in files) |
//! | `ui` | | `ui`: the local web inspector of a store's runs (`agent-contract ui`) |
//!
//! # The guide
//!
//! The [guide](https://github.com/agent-contracts/agent-contracts/tree/main/guide) has a chapter per topic, each with examples the repository's tests compile
//! and run:
//! [contracts and the derive](https://github.com/agent-contracts/agent-contracts/blob/main/guide/contracts.md),
//! [the build script](https://github.com/agent-contracts/agent-contracts/blob/main/guide/build-script.md),
//! [the runtime](https://github.com/agent-contracts/agent-contracts/blob/main/guide/runtime.md),
//! [streaming](https://github.com/agent-contracts/agent-contracts/blob/main/guide/streaming.md),
//! [workflows](https://github.com/agent-contracts/agent-contracts/blob/main/guide/workflows.md),
//! [durable runs and workers](https://github.com/agent-contracts/agent-contracts/blob/main/guide/durable-runs.md),
//! [providers](https://github.com/agent-contracts/agent-contracts/blob/main/guide/providers.md),
//! [MCP](https://github.com/agent-contracts/agent-contracts/blob/main/guide/mcp.md),
//! [the CLI](https://github.com/agent-contracts/agent-contracts/blob/main/guide/cli.md) and
//! [untrusted input](https://github.com/agent-contracts/agent-contracts/blob/main/guide/untrusted-input.md).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The runtime's root and concept modules. Generated code names only the root traits and
// `::agent_contracts::__private::...`. `store` is this crate's own (below), which the glob
// does not bring: an item defined here shadows a glob-imported one.
pub use agent_contracts_runtime::*;

#[cfg(feature = "derive")]
#[cfg_attr(docsrs, doc(cfg(feature = "derive")))]
pub use agent_contracts_macros::{Agent, AgentInput, PromptContributor, Workflow, eval_tests};

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

/// Agents and workflows served as A2A agents, and remote A2A agents' skills used by agents.
#[cfg(feature = "a2a")]
#[cfg_attr(docsrs, doc(cfg(feature = "a2a")))]
pub mod a2a {
    pub use agent_contracts_a2a::*;
}

/// OpenTelemetry export: the runtime's spans ([`telemetry`]), contract
/// verdicts and metrics, by the GenAI semantic conventions, sent by OTLP over HTTP.
/// [`install`](crate::otel::install)
/// sets it up from the standard `OTEL_*` variables and returns the guard that flushes it.
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel {
    pub use agent_contracts_otel::*;
}

/// The local web inspector of the runs in a store: the runs, a run's timeline and verdicts,
/// a paused run's question answered from the page (`agent-contract ui` serves it).
#[cfg(feature = "ui")]
#[cfg_attr(docsrs, doc(cfg(feature = "ui")))]
pub mod ui {
    pub use agent_contracts_ui::*;
}

/// Durable runs: the [`CheckpointStore`](store::CheckpointStore) trait, its records and
/// errors, the rules every store keeps ([`check_save`](store::check_save),
/// [`check_claim`](store::check_claim), ...), an in-memory store, and with the features
/// `sqlite` and `postgres` the stores of `agent-contracts-store`: a folder of files, SQLite and
/// PostgreSQL, and `open` by URL.
pub mod store {
    pub use agent_contracts_runtime::store::*;
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
    pub use agent_contracts_store::*;
}
