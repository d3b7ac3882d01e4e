//! A stand-in for a user's crate: its tests show that serde_json, in a build that depends on
//! `agent-core`, still deserializes untagged and internally tagged enums and flattened maps
//! of numbers (serde_json's `arbitrary_precision` feature would break all three).
#![forbid(unsafe_code)]
