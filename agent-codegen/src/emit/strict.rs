//! Which providers' strict modes an output contract fits, decided here at build time for both
//! front ends: the forms embedded beside the contract (the runtime sends them and removes the
//! `null`s their rewrites let in) and the verdicts `agent-contract check --providers` prints.
//! The rules themselves live in `agent_contracts_schema::strict`, which the runtime shares.

use agent_contracts_schema::strict::{Dialect, StrictForms, Strictness, strict_form};
use serde_json::Value;

/// The JSON text of the strict forms of the output contract `text` (none when it is not JSON:
/// the schema stage reports that).
pub(crate) fn forms_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(schema) => StrictForms::of(&schema).to_json(),
        Err(_) => StrictForms::default().to_json(),
    }
}

/// Per dialect, whether the output contract `text` fits it.
pub(crate) fn verdicts(text: &str) -> Vec<(Dialect, Strictness)> {
    let Ok(schema) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let verdicts = Dialect::ALL.into_iter();
    verdicts.map(|d| (d, strict_form(&schema, d))).collect()
}
