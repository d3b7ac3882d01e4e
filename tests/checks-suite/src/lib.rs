//! The JSON-Schema-Test-Suite schemas the code generator types, compiled with their generated
//! contract checks (see `build.rs`), for the differential test in `tests/`.

use agent_core::ContractChecks;
use serde_json::Value;

/// One typed suite schema.
pub struct Schema {
    /// The suite file.
    pub file: &'static str,
    /// The group's index in the file.
    pub group: usize,
    /// The contract: the suite's schema as the required property `x`.
    pub contract: &'static str,
    /// The group's tests, as JSON (`[{"description", "data", "valid"}]`).
    pub tests: &'static str,
    /// The nodes the generated checks leave to the validator.
    pub unchecked: &'static [&'static str],
    /// The fast path's verdict on an instance of the contract.
    pub fast: fn(&Value) -> bool,
}

/// Deserialized as the checks assume, and the checks pass.
fn fast<T>(instance: &Value) -> bool
where
    T: for<'de> agent_core::__private::serde::Deserialize<'de> + ContractChecks,
{
    agent_core::__private::deserialize_strict::<T, _>(instance)
        .is_ok_and(|t| t.satisfies_contract())
}

include!(concat!(env!("OUT_DIR"), "/suite.rs"));
