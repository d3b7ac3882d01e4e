//! The integration tests of agent-mcp, as one test binary (one link instead of one per file).
//! Each module is one former test file; `common` is what the transport tests share.

mod common;
// The authorization server's key and JWKS of the OAuth tests (the examples' too).
#[path = "../support/jwt.rs"]
mod jwt;

mod access;
mod authorize;
mod bounds;
mod calls;
mod client;
mod http;
mod oauth;
mod progress;
mod stdio;
mod user_fields;
mod workflow;
