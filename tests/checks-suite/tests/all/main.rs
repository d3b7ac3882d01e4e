//! The generated checks against the validator, as one test binary (one link instead of one
//! per file). Each module is one test file.

mod boundaries;
mod differential;
mod verdicts;
