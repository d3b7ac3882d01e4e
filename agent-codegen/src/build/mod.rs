//! Stage 5, build: the build-script front end, [`Builder`]. It reads a schemas
//! folder (`schemas/<agent>/input.schema.json`, ...), emits every agent's code through `emit`
//! into a `@generated` file per agent and one that includes them (`builder.rs`), gives a
//! contract that others refer to one Rust type across them (`shared_types.rs`), keeps what an
//! unchanged agent needs on the next run so that it is not generated again (`cache.rs`), and
//! checks declared workflows through `flow`.
//!
//! May import: `flow`, `evals`, `emit`, `typify`, `schema` and the crate's leaf modules; never
//! `derive`.

mod builder;
mod cache;
mod shared_types;

pub use builder::{AgentCheck, BuildError, Builder, read_contract};
