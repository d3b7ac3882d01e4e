//! Calls near and past the default limits (see `agent_fuzz::kwargs_large`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::kwargs_large(data));
