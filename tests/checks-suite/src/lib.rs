//! The JSON-Schema-Test-Suite schemas the code generator types, the project's contracts, the
//! real-world tool schemas and `bounds.schema.json`, compiled with their generated contract
//! checks (see `build.rs`), for the differential tests in `tests/`.

use agent_contracts::contract::ContractChecks;
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
    /// Whether an instance is the suite's data as the property `x` (`{"x": data}`), rather than
    /// the data itself (a contract of its own).
    pub wrapped: bool,
    /// The fast path's verdict on an instance of the contract.
    pub fast: fn(&Value) -> bool,
    /// The generated checks' verdict on an instance that deserialized as they assume; `None`
    /// when it did not.
    pub checks: fn(&Value) -> Option<bool>,
}

/// Deserialized as the checks assume, and the checks pass.
fn fast<T>(instance: &Value) -> bool
where
    T: for<'de> agent_contracts::__private::serde::Deserialize<'de> + ContractChecks,
{
    agent_contracts::__private::deserialize_strict::<T, _>(instance)
        .is_ok_and(|t| t.satisfies_contract())
}

/// The checks alone, on what deserialized.
fn checks<T>(instance: &Value) -> Option<bool>
where
    T: for<'de> agent_contracts::__private::serde::Deserialize<'de> + ContractChecks,
{
    agent_contracts::__private::deserialize_strict::<T, _>(instance)
        .ok()
        .map(|t| t.satisfies_contract())
}

include!(concat!(env!("OUT_DIR"), "/suite.rs"));

/// One schema's verdict-only read: the code `agent_contracts_codegen::verdict_fn` generates for the
/// schema as a whole, run on an instance's tape.
pub struct Verdict {
    /// The suite file, or the contract's path.
    pub file: &'static str,
    /// The group's index in the file.
    pub group: usize,
    /// The schema.
    pub schema: &'static str,
    /// The group's tests, as JSON (`[{"description", "data", "valid"}]`).
    pub tests: &'static str,
    /// The generated verdict, or why the schema has none.
    pub verdict:
        Result<fn(agent_contracts::__private::checks::TapeValue<'_>) -> bool, &'static str>,
}

/// The verdicts, one module of functions (`v0`, `v1`, ...) and their table.
pub mod verdicts {
    use super::Verdict;
    include!(concat!(env!("OUT_DIR"), "/verdicts.rs"));
}
