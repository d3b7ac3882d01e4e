//! The integration tests of agent-llm, as one test binary (one link instead of one per file).
//! Each module is one former test file; `common` is what they share.

mod common;

mod anthropic;
mod openai;
mod round_trip;
mod tracing;
