//! What the build script kept of its last run, beside the files it wrote: per agent, the
//! fingerprint of what its code is generated from and what the next run needs without
//! generating it again (the input's fields for the template check, the warnings to print,
//! the signature that decides the shared types, what it shares).
//!
//! A template edit reruns the build script (it checks the template against the contract),
//! but no agent's code depends on a template's text, only on its path: every agent is then
//! taken from here and no file is written. An edited schema generates that agent again, and
//! an agent whose shared types change with it.

use super::shared_types::{Signature, Uses};
use crate::emit::agent::AgentDef;
use crate::emit::share::{Side, TypeShape};
use quote::ToTokens;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::path::Path;

/// The index's file name, in the folder of the agents' files.
const INDEX: &str = ".index.json";

/// Changes when what is kept, or how code is generated from the same inputs, changes without
/// the build script being built again (which the build identity catches).
const FORMAT: &str = "agent-codegen build cache 2";

/// One agent as the last run generated it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// [`fingerprint`] of the agent's definition.
    pub fingerprint: u64,
    /// The typed input's fields, for the template check.
    pub fields: Option<Vec<String>>,
    /// What its typing dropped, as printed.
    pub warnings: Vec<String>,
    /// Its contract sides' types, for the shared types.
    pub signature: Signature,
    /// What it takes from the other agents (as written in its file).
    pub uses: Uses,
}

/// The agents of the last run, by name: only those whose file is still there, and none when
/// the build script was built again since.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: BTreeMap<String, Entry>,
}

impl Cache {
    /// The index in `dir` (the agents' files' folder), if it was written by this build of
    /// the generator.
    pub fn read(dir: &Path) -> Self {
        let entries = std::fs::read_to_string(dir.join(INDEX))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .filter(|index| index["build"].as_str() == Some(build_identity().as_str()))
            .and_then(|index| {
                index["agents"].as_object().map(|agents| {
                    agents
                        .iter()
                        .filter(|(name, _)| dir.join(format!("{name}.rs")).is_file())
                        .filter_map(|(name, entry)| Some((name.clone(), entry_of(entry)?)))
                        .collect()
                })
            })
            .unwrap_or_default();
        Self { entries }
    }

    /// The entry of `name`, if it was generated from a definition of this fingerprint.
    pub fn fresh(&self, name: &str, fingerprint: u64) -> Option<&Entry> {
        self.entries
            .get(name)
            .filter(|entry| entry.fingerprint == fingerprint)
    }

    /// The names of the last run's agents.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

/// Removes the index, before files it describes are written: a run that stops halfway
/// leaves no index that would vouch for them.
pub(crate) fn forget(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(INDEX));
}

/// Writes the index of `entries` into `dir`, if it changed.
pub(crate) fn write<'a>(
    dir: &Path,
    entries: impl IntoIterator<Item = (&'a str, &'a Entry)>,
) -> Result<(), String> {
    let agents: serde_json::Map<String, Value> = entries
        .into_iter()
        .map(|(name, entry)| (name.to_owned(), value_of(entry)))
        .collect();
    let index = json!({ "build": build_identity(), "agents": agents });
    let text = serde_json::to_string(&index).expect("JSON values print");
    write_if_changed(&dir.join(INDEX), &text)
}

/// A hash of everything an agent's generated code depends on, apart from the other agents
/// (the shared types, decided on every run): its name, `agent.json`, its schemas as bundled,
/// where they came from, and the runtime's path. Not the template's text: the code names
/// the template by its path, and askama reads it when the crate compiles.
pub(crate) fn fingerprint(def: &AgentDef) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    let mut field = |text: &str| {
        hasher.write_usize(text.len());
        hasher.write(text.as_bytes());
    };
    field(FORMAT);
    field(&def.runtime.to_token_stream().to_string());
    field(&def.name);
    field(&def.description);
    for source in std::iter::once(Some(&def.input)).chain([def.output.as_ref()]) {
        match source {
            Some(source) => {
                field("schema");
                field(&source.origin);
                field(&source.text);
            }
            None => field("none"),
        }
    }
    match &def.user_prompt {
        Some(prompt) => {
            field("prompt");
            field(&prompt.path);
        }
        None => field("none"),
    }
    hasher.finish()
}

/// Which build of the generator runs: its executable (the build script) and when it was
/// built. A change to agent-codegen builds the build script again; its `OUT_DIR` stays.
fn build_identity() -> String {
    let exe = std::env::current_exe().ok();
    let meta = exe.as_ref().and_then(|exe| std::fs::metadata(exe).ok());
    let modified = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!(
        "{FORMAT} {} {} {} {modified}",
        env!("CARGO_PKG_VERSION"),
        exe.map(|e| e.display().to_string()).unwrap_or_default(),
        meta.map_or(0, |m| m.len()),
    )
}

fn value_of(entry: &Entry) -> Value {
    let signature: serde_json::Map<String, Value> = entry
        .signature
        .iter()
        .map(|(side, types)| {
            let types: serde_json::Map<String, Value> = types
                .iter()
                .map(|(name, shape)| (name.clone(), json!([shape.hash, shape.refs])))
                .collect();
            (side.clone(), Value::Object(types))
        })
        .collect();
    let uses: serde_json::Map<String, Value> = entry
        .uses
        .iter()
        .map(|(side, uses)| (side.clone(), json!(uses)))
        .collect();
    json!({
        "fingerprint": entry.fingerprint,
        "fields": entry.fields,
        "warnings": entry.warnings,
        "signature": signature,
        "uses": uses,
    })
}

fn entry_of(value: &Value) -> Option<Entry> {
    let strings = |value: &Value| -> Option<Vec<String>> {
        value
            .as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let fields = match &value["fields"] {
        Value::Null => None,
        fields => Some(strings(fields)?),
    };
    let mut signature = Signature::new();
    for (side, types) in value["signature"].as_object()? {
        let types: Option<Side> = types
            .as_object()?
            .iter()
            .map(|(name, shape)| {
                let [hash, refs] = shape.as_array()?.as_slice() else {
                    return None;
                };
                let shape = TypeShape {
                    hash: hash.as_u64()?,
                    refs: strings(refs)?,
                };
                Some((name.clone(), shape))
            })
            .collect();
        signature.insert(side.clone(), types?);
    }
    let mut uses = Uses::new();
    for (side, producers) in value["uses"].as_object()? {
        let mut list = Vec::new();
        for used in producers.as_array()? {
            let [producer, producer_side, names] = used.as_array()?.as_slice() else {
                return None;
            };
            let names: BTreeMap<String, String> = names
                .as_object()?
                .iter()
                .map(|(mine, theirs)| Some((mine.clone(), theirs.as_str()?.to_owned())))
                .collect::<Option<_>>()?;
            list.push((
                producer.as_str()?.to_owned(),
                producer_side.as_str()?.to_owned(),
                names,
            ));
        }
        uses.insert(side.clone(), list);
    }
    Some(Entry {
        fingerprint: value["fingerprint"].as_u64()?,
        fields,
        warnings: strings(&value["warnings"])?,
        signature,
        uses,
    })
}

/// Writes `text` to `path` unless the file holds it already, so its modification time, and
/// what cargo and rustc decide from it, stay.
pub(crate) fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read(path).ok().as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
