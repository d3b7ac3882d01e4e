//! Stage 5, build: the build-script front end, [`Builder`]. It reads a schemas
//! folder (`schemas/<agent>/input.schema.json`, ...), emits every agent's code through `emit`
//! into one `@generated` file (`builder.rs`), gives a contract that others refer to one Rust
//! type in that file (`shared_types.rs`), and checks declared workflows through `flow`.
//!
//! May import: `flow`, `emit`, `typify`, `schema` and the crate's leaf modules; never `derive`.

mod builder;
mod shared_types;

pub use builder::{AgentCheck, BuildError, Builder};
