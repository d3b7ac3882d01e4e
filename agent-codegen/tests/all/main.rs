//! The integration tests of agent-codegen, as one test binary (one link instead of one per
//! file). Each module is one former test file; the goldens stay in `tests/golden/`.

mod buildscript;
mod generate;
mod golden;
mod reject;
mod suite_schemas;
