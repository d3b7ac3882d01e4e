//! The markdown renderer alone (see `agent_fuzz::markdown`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_fuzz::markdown(data));
