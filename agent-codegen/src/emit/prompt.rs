//! The user prompt template checked against the contract before askama compiles it: the names
//! and field chains it reads that the typed input lacks, located in the template file with a
//! did-you-mean, and the files a build script watches for it. Both front ends report these.

use std::path::{Path, PathBuf};

use proc_macro2::Span;

use crate::emit::agent::AgentDef;
use crate::suggest::closest;

mod fields;
mod template;

/// Names the prompt template reads that the template struct lacks, each as a message for
/// the `user_prompt` literal: `path:line:col`, the name, the fields there are. `fields` are
/// the typed input's (`AgentCode::input_fields`, or what a build script kept of them).
/// Templates are found in askama's folders for the crate at `root` (its
/// `CARGO_MANIFEST_DIR`). Empty when the agent has no template, or when the template is
/// beyond the check (askama then reports).
pub fn prompt_errors(
    def: &AgentDef,
    fields: Option<&[String]>,
    root: &Path,
) -> Vec<(Span, String)> {
    let Some(prompt) = &def.user_prompt else {
        return Vec::new();
    };
    let file = match template::lookup(root, &prompt.path) {
        template::Lookup::Found(file) => file,
        template::Lookup::Missing(dirs) => {
            let hint = match template::near_match(root, &dirs, &prompt.path) {
                Some(near) => format!(" (did you mean `{near}`?)"),
                None => String::new(),
            };
            let shown = dirs
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let message = format!(
                "template `{}` not found in the template folders {shown}: check the path, or the `dirs` of `askama.toml`{hint}",
                prompt.path
            );
            return vec![(prompt.span, message)];
        }
        template::Lookup::Unknown => return Vec::new(),
    };
    let Some(fields) = fields else {
        return Vec::new();
    };
    let mut known: Vec<&str> = vec!["task"];
    known.extend(fields.iter().map(String::as_str));
    let unknown = template::unknown_names(&file.source, &known).unwrap_or_default();
    let nested = nested_errors(def, &file, prompt.span);
    let expected = fields
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    unknown
        .iter()
        .map(|u| {
            let (line, col) = template::line_col(&file.source, u.offset);
            let path = file.display.display();
            let mut message = format!(
                "{path}:{line}:{col}: template uses `{}`, which is not a field of the contract: \
                 expected `task` or one of {expected}",
                u.name
            );
            let candidates = std::iter::once("task").chain(fields.iter().map(String::as_str));
            if let Some(close) = closest(u.name, candidates) {
                message.push_str(&format!(" (did you mean `{close}`?)"));
            }
            (prompt.span, message)
        })
        .chain(nested)
        .collect()
}

/// The files a build script must watch for the agent's prompt: `askama.toml` and the
/// template, when they exist (cargo reruns a build script on every build for a watched path
/// that does not exist).
pub fn prompt_files(def: &AgentDef, root: &Path) -> Vec<PathBuf> {
    let Some(prompt) = &def.user_prompt else {
        return Vec::new();
    };
    let config = root.join("askama.toml");
    let template = match template::lookup(root, &prompt.path) {
        template::Lookup::Found(file) => Some(file.path),
        _ => None,
    };
    config
        .is_file()
        .then_some(config)
        .into_iter()
        .chain(template)
        .collect()
}

/// Field chains of the template that read a field their value does not have.
fn nested_errors(def: &AgentDef, file: &template::TemplateFile, span: Span) -> Vec<(Span, String)> {
    let Ok(schema) = serde_json::from_str::<serde_json::Value>(&def.input.text) else {
        return Vec::new();
    };
    let Some(reads) = template::reads(&file.source) else {
        return Vec::new();
    };
    fields::bad_chains(&schema, &reads)
        .into_iter()
        .map(|bad| {
            let (line, col) = template::line_col(&file.source, bad.offset);
            let path = file.display.display();
            let mut message = format!("{path}:{line}:{col}: {}", bad.message);
            if let Some(close) = closest(&bad.field, bad.candidates.iter().map(String::as_str)) {
                message.push_str(&format!(" (did you mean `{close}`?)"));
            }
            (span, message)
        })
        .collect()
}
