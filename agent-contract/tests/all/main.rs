//! The integration tests of agent-contract, as one test binary (one link instead of one per
//! file). Each module is one test file.

mod checks_support;
mod markdown_blocks;
mod repair_corpus;
