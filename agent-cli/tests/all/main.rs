//! The integration tests of agent-contracts-cli, as one test binary (one link instead of one
//! per file): each runs the `agent-contract` command as a process, on the repository's
//! `schemas/` folder (the contracts the examples compile in) or on the user crate of
//! `tests/fixtures/user_crate`.

mod a2a;
mod bench;
mod cli;
mod convention;
mod eval;
mod mcp;
