//! Kwargs text -> rendered prompt or retry error (see `agent_fuzz::kwargs_prompt`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::kwargs_prompt(data));
