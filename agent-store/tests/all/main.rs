//! The integration tests of agent-store, as one test binary (one link instead of one per
//! file). Each module is one test file; the suite that drives workflows through every store
//! is `tests/tests/all/stores.rs`.

mod event_rules;
mod fleet_rules;
mod sql_rules;
mod store_rules;
