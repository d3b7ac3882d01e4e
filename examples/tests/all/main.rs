//! The integration tests of agent-examples, as one test binary (one link instead of one per
//! file). Each module is one former test file; they run the package's binaries through
//! `CARGO_BIN_EXE_*`, which cargo sets for every integration test of the package.

mod cli;
mod cli_bench;
mod durable;
mod event_planning;
mod mcp_instances;
mod mcp_stdio;
mod pipeline;
mod real_model;
mod workers;
