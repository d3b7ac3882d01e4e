//! The integration tests of agent-tests, as one test binary (one link instead of one per
//! file). Each module is one former test file, documented at its top.
//!
//! What one process changes, and how the modules cope: `realworld` denies warnings and
//! `hygiene::no_prelude` drops the prelude as module attributes, which reach the derives they
//! test as the crate attributes did; fixture paths of `include_str!` are relative to each file,
//! one folder deeper than before; the scratch crate (`rebuild`) stays where it was, and is
//! found through `CARGO_MANIFEST_DIR` and `CARGO_TARGET_TMPDIR`;
//! no test sets an environment variable, the current directory or a global subscriber.

// The fuzz targets of `fuzz/`, shared by `fuzz_smoke` and `proptest_markdown`.
#[allow(dead_code, reason = "the fuzz library has helpers other tests use")]
#[path = "../../../fuzz/src/lib.rs"]
mod agent_fuzz;

mod agent_input;
mod agreement;
mod arbitrary_precision;
mod codegen_goldens;
mod context_ids;
mod contributor_derive;
mod contributors;
mod data_flow;
mod derive_agent;
mod evals;
mod fuzz_smoke;
mod hostile;
mod hygiene;
mod layers;
mod limits;
mod markdown_path;
mod offline;
mod outside_crate;
mod partial_output;
mod prefix_check;
mod proptest_markdown;
mod realworld;
mod rebuild;
mod regex_linear;
mod repair;
mod rerun;
mod reserved_keys;
mod runtime_contract;
mod runtime_kwargs;
mod runtime_markdown;
mod runtime_prompt;
mod runtime_stream;
mod same_types;
mod schema_suite;
mod store_errors;
mod stores;
mod structured_outputs;
mod supervisor;
mod typed_call;
mod versions;
