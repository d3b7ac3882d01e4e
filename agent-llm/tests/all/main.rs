//! The integration tests of agent-llm, as one test binary (one link instead of one per file).
//! Each module is one former test file; `common` is what they share. The tracing test is a
//! binary of its own (`tests/tracing.rs`, which says why).

mod common;

mod accounts;
mod anthropic;
mod cost;
mod errors;
mod images;
mod layers;
mod media_contract;
mod openai;
mod round_trip;
mod streaming;
mod structured;
