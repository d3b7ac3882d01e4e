//! The integration tests of agent-examples, as one test binary (one link instead of one per
//! file). Each module is one former test file; they run the package's binaries through
//! `CARGO_BIN_EXE_*`, which cargo sets for every integration test of the package.

//!
//! The binaries' HTTP, MCP and database flags are behind features (`demo` turns on all of
//! them): `cargo test --workspace` builds this package with `demo` (agent-tests asks for it);
//! `cargo test -p agent-examples` alone runs the modules the default build can serve.

#[cfg(feature = "demo")]
mod demo;
#[cfg(feature = "store")]
mod durable;
mod event_planning;
#[cfg(feature = "store")]
mod fleet;
#[cfg(feature = "store")]
mod inspector;
#[cfg(feature = "demo")]
mod mcp_instances;
#[cfg(feature = "demo")]
mod mcp_media;
#[cfg(feature = "demo")]
mod mcp_oauth;
#[cfg(feature = "demo")]
mod mcp_stdio;
#[cfg(feature = "demo")]
mod mcp_tls;
#[cfg(feature = "otel")]
mod otel;
mod pipeline;
mod readme;
#[cfg(feature = "demo")]
mod real_model;
#[cfg(feature = "demo")]
mod streaming;
mod support_triage;
#[cfg(feature = "store")]
mod workers;
