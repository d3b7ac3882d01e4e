//! The integration tests of agent-mcp, as one test binary (one link instead of one per file).
//! Each module is one former test file; `common` is what the transport tests share.

mod common;

mod access;
mod bounds;
mod client;
mod http;
mod oauth;
mod progress;
mod stdio;
mod workflow;
