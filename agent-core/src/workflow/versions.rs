//! The contract versions a stored run depends on: the fingerprint of each member's input and
//! output contract, recorded with every save ([`RunRecord::contracts`]), and the check a
//! resume makes when they changed since. Above the definition (it reads the members), below
//! the checkpoint (a durable runner holds the workflow's versions).
//!
//! A changed contract is compared with the version the run was recorded under, kept in the
//! store by fingerprint ([`CheckpointStore::save_contracts`]), by the data-flow check the
//! build uses (`agent_contracts_schema::compat`): every value the earlier version allowed must pass the
//! current one. For an output contract, that is what the run produced; for an input
//! contract, what the run would ask the agent (its context was checked to fit the earlier
//! version). A mismatch, a comparison the check cannot decide, or an earlier version not
//! stored refuses the run ([`Error::ContractChanged`]); so does nothing else.

use super::definition::Workflow;
use crate::error::Error;
use crate::store::{CheckpointStore, RunRecord, StoreError};
use agent_contracts_schema::compat::{FindingKind, compare};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Most bytes of a stored fingerprint map read: a workflow of a few hundred agents.
const MAX_MAP_BYTES: usize = 64 * 1024;

/// The contracts of a workflow as this build has them.
#[derive(Debug)]
pub(crate) struct Versions {
    /// `(<agent>.input|output, fingerprint, schema)`, sorted by name.
    entries: Vec<(String, String, &'static Value)>,
    /// The stored form: a JSON object from name to fingerprint.
    text: String,
}

impl Versions {
    pub(crate) fn of(workflow: &Workflow) -> Arc<Self> {
        let mut entries = Vec::new();
        for (name, member) in &workflow.members {
            let input = member.agent.input_contract().schema();
            entries.push((
                format!("{name}.input"),
                agent_contracts_schema::fingerprint(input),
                input,
            ));
            if let Some(output) = member.agent.output_contract() {
                let output = output.schema();
                entries.push((
                    format!("{name}.output"),
                    agent_contracts_schema::fingerprint(output),
                    output,
                ));
            }
        }
        let map: BTreeMap<&str, &str> = entries
            .iter()
            .map(|(name, fingerprint, _)| (name.as_str(), fingerprint.as_str()))
            .collect();
        let text = serde_json::to_string(&map).unwrap_or_default();
        Arc::new(Self { entries, text })
    }

    /// What a run record stores.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Each schema's fingerprint and canonical text, for the store to keep.
    pub(crate) fn schemas(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .map(|(_, fingerprint, schema)| (fingerprint.clone(), schema.to_string()))
            .collect()
    }

    /// Whether `record` may go on under these contracts: recorded under the same ones, under
    /// none (a row from before runs recorded them), or under earlier versions every one of
    /// which the current version accepts.
    pub(crate) async fn check(
        &self,
        store: &dyn CheckpointStore,
        record: &RunRecord,
        limits: &agent_contracts_contract::Limits,
    ) -> Result<(), Error> {
        let Some(text) = &record.contracts else {
            return Ok(());
        };
        if text == &self.text {
            return Ok(());
        }
        let corrupt = |reason: String| -> Error {
            StoreError::Corrupt {
                run_id: agent_contracts_contract::__private::truncate(&record.run_id, 128)
                    .into_owned(),
                reason,
            }
            .into()
        };
        if text.len() > MAX_MAP_BYTES {
            return Err(corrupt(format!(
                "its contract fingerprints are {} bytes, past {MAX_MAP_BYTES}",
                text.len()
            )));
        }
        let stored: BTreeMap<String, String> = serde_json::from_str(text).map_err(|e| {
            corrupt(format!(
                "its contract fingerprints are not a map of names to fingerprints: {e}"
            ))
        })?;
        let refuse = |contract: &str, field: &str, keyword: &str, reason: String| -> Error {
            Error::ContractChanged {
                run_id: agent_contracts_contract::__private::truncate(&record.run_id, 128)
                    .into_owned(),
                contract: contract.to_owned(),
                field: field.to_owned(),
                keyword: keyword.to_owned(),
                reason,
            }
        };
        for (name, fingerprint, schema) in &self.entries {
            // A contract the run was not recorded with (an agent added since) has nothing of
            // the run's to refuse; a stored output of an agent removed since fails the
            // state's own checks.
            let Some(earlier) = stored.get(name) else {
                continue;
            };
            if earlier == fingerprint {
                continue;
            }
            if earlier.len() != 16 || !earlier.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(corrupt(format!(
                    "its fingerprint of `{name}` is not 16 hex digits"
                )));
            }
            let Some(old) = store.load_contract(earlier).await? else {
                return Err(refuse(
                    name,
                    "$",
                    "$schema",
                    format!(
                        "the run was recorded under version {earlier}, which the store does not keep, so it cannot be compared"
                    ),
                ));
            };
            if old.len() > limits.max_bytes
                || agent_contracts_contract::__private::text_depth(&old) > limits.max_depth
            {
                return Err(corrupt(format!(
                    "the stored version {earlier} of `{name}` is past the size or depth limits"
                )));
            }
            let old: Value = serde_json::from_str(&old).map_err(|e| {
                corrupt(format!(
                    "the stored version {earlier} of `{name}` is not JSON: {e}"
                ))
            })?;
            if agent_contracts_schema::fingerprint(&old) != *earlier {
                return Err(corrupt(format!(
                    "the stored version {earlier} of `{name}` does not have that fingerprint"
                )));
            }
            let findings = compare((&old, &old), (schema, schema), name);
            if let Some(first) = findings.first() {
                let field = match first.path.strip_prefix(name.as_str()) {
                    Some("") | None => "$".to_owned(),
                    Some(rest) => rest.trim_start_matches('.').to_owned(),
                };
                let how = match first.kind {
                    FindingKind::Mismatch => "",
                    FindingKind::Undecided => "the check cannot tell whether it still fits: ",
                };
                return Err(refuse(
                    name,
                    &field,
                    first.keyword,
                    format!("{how}{}", first.message),
                ));
            }
        }
        Ok(())
    }
}
