//! Sibling contracts: a `$ref` to another contract file of the schemas folder
//! (`"$ref": "../budget_agent/output.schema.json"`, optionally with a `#/...` fragment) is
//! bundled at build time into the root's `$defs`, so the schema the types and the runtime
//! validator see is self-contained and no file is read at run time.
//!
//! The schemas folder is the one that holds the agent folders (the parent of the contract's
//! own folder); a `$ref` that leaves it, names a missing file, or comes back to a file it
//! started from is refused with the `path:line:col` of the `$ref`. The bundled text keeps the
//! contract's own text where it was: the `$ref` strings are replaced in place and the
//! definitions are added on the line that closes (or opens) the root's `$defs`, so later
//! errors still point at the file as written.

use crate::error::SchemaError;
use crate::schema::locate::locate;
use crate::schema::problem::display;
use crate::schema::walk::{child_pointer, decode_token, walk};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Most sibling files one contract may bundle, directly or through each other.
pub(crate) const MAX_FILES: usize = 64;
/// Largest sibling file read, in bytes.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;

/// A contract with its sibling files bundled.
#[derive(Debug, Clone)]
pub(crate) struct Bundled {
    /// The self-contained schema text.
    pub text: String,
    /// Every sibling file read, to track for rebuilds.
    pub files: Vec<PathBuf>,
    /// Where each bundled definition came from, to report a problem inside one at the
    /// sibling file's own `line:col`.
    pub sources: Vec<DefSource>,
}

/// Where one bundled definition (`/$defs/<key>` of the bundled schema) came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DefSource {
    /// The definition's key in the bundled schema's `$defs`.
    pub key: String,
    /// The sibling file, as messages show it (`budget_agent/output.schema.json`).
    pub origin: String,
    /// The pointer of the definition in that file (`""`: the whole file).
    pub pointer: String,
    /// The file's text, as written.
    pub text: std::sync::Arc<str>,
}

/// `error`, when it is about a node inside a bundled definition, moved to that node in the
/// sibling file it came from: its origin, pointer and `line:col` there.
pub(crate) fn relocate(error: SchemaError, sources: &[DefSource]) -> SchemaError {
    let found = sources
        .iter()
        .filter_map(|source| {
            let prefix = child_pointer("/$defs", &source.key);
            let rest = error.pointer.strip_prefix(&prefix)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((source, rest))
        })
        .max_by_key(|(source, _)| source.key.len());
    let Some((source, rest)) = found else {
        return error;
    };
    let pointer = format!("{}{rest}", source.pointer);
    let line_col = locate(&source.text, &pointer);
    // The message names nodes as the bundled schema has them.
    let prefix = child_pointer("/$defs", &source.key);
    let message = error
        .message
        .replace(
            &format!("`{prefix}`"),
            &format!("`{}`", display(&source.pointer)),
        )
        .replace(&format!("`{prefix}/"), &format!("`{}/", source.pointer));
    SchemaError {
        origin: source.origin.clone(),
        line_col,
        pointer,
        message,
    }
}

/// Bundles the sibling files `text` (the contract at `path`, shown as `origin`) refers to.
/// `Ok(None)` when it refers to none, or is not JSON (the type generation reports that).
pub(crate) fn bundle(
    text: &str,
    path: &Path,
    origin: &str,
) -> Result<Option<Bundled>, Vec<SchemaError>> {
    let Ok(mut root) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    let refs = external_refs(&root);
    if refs.is_empty() {
        return Ok(None);
    }
    let folder = path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""));
    let mut bundler = Bundler {
        root: folder.to_path_buf(),
        stack: vec![lexical(path)],
        files: BTreeMap::new(),
        order: Vec::new(),
        defs: Vec::new(),
        sources: Vec::new(),
        errors: Vec::new(),
    };
    let here = File {
        text,
        origin,
        dir: path.parent().unwrap_or(Path::new("")),
    };
    let mut edits = Vec::new();
    for (pointer, target) in refs {
        if let Some(new) = bundler.resolve(&here, &pointer, &target) {
            edits.push((pointer, new));
        }
    }
    if !bundler.errors.is_empty() {
        return Err(bundler.errors);
    }
    let existing = root.get("$defs").and_then(Value::as_object);
    for (key, _) in &bundler.defs {
        if existing.is_some_and(|d| d.contains_key(key)) {
            let message = format!(
                "`$defs` already has `{key}`, the name the bundled sibling contract takes: rename the definition"
            );
            let pointer = child_pointer("/$defs", key);
            return Err(vec![located(text, origin, &pointer, message)]);
        }
    }
    for (pointer, new) in &edits {
        if let Some(slot) = root.pointer_mut(pointer) {
            *slot = Value::String(new.clone());
        }
    }
    let spliced = splice(text, &edits, &bundler.defs);
    insert_defs(&mut root, bundler.defs);
    // The splice keeps the file's lines; if it ever disagrees with the bundled value, the
    // value wins, pretty-printed.
    let text = match spliced.and_then(|s| serde_json::from_str::<Value>(&s).ok().map(|v| (s, v))) {
        Some((s, v)) if v == root => s,
        _ => serde_json::to_string_pretty(&root).unwrap_or_default(),
    };
    Ok(Some(Bundled {
        text,
        files: bundler.order,
        sources: bundler.sources,
    }))
}

/// One file being bundled: its text (for locations), display name and folder.
struct File<'a> {
    text: &'a str,
    origin: &'a str,
    dir: &'a Path,
}

struct Bundler {
    /// The schemas folder, which no `$ref` may leave.
    root: PathBuf,
    /// The files being bundled, outermost first: a `$ref` back to one of them is a cycle.
    stack: Vec<PathBuf>,
    /// Files bundled so far and their `$defs` key.
    files: BTreeMap<PathBuf, String>,
    /// Files in the order first read.
    order: Vec<PathBuf>,
    /// The definitions to add, in the order made.
    defs: Vec<(String, Value)>,
    /// Where each definition came from.
    sources: Vec<DefSource>,
    errors: Vec<SchemaError>,
}

impl Bundler {
    /// The local `$ref` that replaces `target` (a `$ref` at `pointer` of `file`), after
    /// bundling the file it names; `None` after an error.
    fn resolve(&mut self, file: &File<'_>, pointer: &str, target: &str) -> Option<String> {
        let fail = |this: &mut Self, message: String| {
            this.errors
                .push(located(file.text, file.origin, pointer, message));
            None
        };
        let (name, fragment) = target.split_once('#').unwrap_or((target, ""));
        if name.contains(':') || Path::new(name).is_absolute() || name.starts_with('/') {
            return fail(
                self,
                format!(
                    "`$ref` `{target}` must name a contract file by a relative path inside the schemas folder"
                ),
            );
        }
        let path = lexical(&file.dir.join(name));
        if !path.starts_with(lexical(&self.root)) || !inside(&path, &self.root) {
            return fail(
                self,
                format!(
                    "`$ref` `{target}` leaves the schemas folder: contracts may only refer to the contracts of its agent folders"
                ),
            );
        }
        if let Some(at) = self.stack.iter().position(|p| *p == path) {
            let chain: Vec<String> = self.stack[at..]
                .iter()
                .chain([&path])
                .map(|p| format!("`{}`", self.display(p)))
                .collect();
            return fail(
                self,
                format!(
                    "`$ref` `{target}` makes a cycle of contract files: {}",
                    chain.join(" -> ")
                ),
            );
        }
        let key = match self.files.get(&path) {
            Some(key) => key.clone(),
            None => match self.load(&path) {
                Ok(key) => key,
                Err(message) => return fail(self, format!("`$ref` `{target}`: {message}")),
            },
        };
        match self.fragment(&key, fragment) {
            Ok(local) => Some(local),
            Err(message) => fail(self, format!("`$ref` `{target}`: {message}")),
        }
    }

    /// Reads, checks and bundles a sibling file (and the files it names); its `$defs` key.
    fn load(&mut self, path: &Path) -> Result<String, String> {
        if self.order.len() >= MAX_FILES {
            return Err(format!(
                "a contract may bundle at most {MAX_FILES} sibling files"
            ));
        }
        let shown = self.display(path);
        let size = std::fs::metadata(path)
            .map_err(|_| format!("`{shown}` does not exist"))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(format!(
                "`{shown}` has {size} bytes, more than the {MAX_FILE_BYTES} a contract may have"
            ));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
        let mut doc: Value =
            serde_json::from_str(&text).map_err(|e| format!("`{shown}` is not JSON: {e}"))?;
        if doc.get("$id").is_some() {
            return Err(format!(
                "`{shown}` has an `$id`, which would change how its `$ref`s resolve: remove it"
            ));
        }
        let key = def_key(&shown);
        if let Some((other, _)) = self.files.iter().find(|(_, k)| **k == key) {
            return Err(format!(
                "`{shown}` and `{}` would both be bundled as `{key}`: rename one",
                self.display(other)
            ));
        }
        self.files.insert(path.to_path_buf(), key.clone());
        self.order.push(path.to_path_buf());
        self.stack.push(path.to_path_buf());
        let file = File {
            text: &text,
            origin: &shown,
            dir: path.parent().unwrap_or(Path::new("")),
        };
        let edits = self.rewrite_refs(&file, &key, &doc);
        self.stack.pop();
        for (pointer, new) in edits {
            if let Some(slot) = doc.pointer_mut(&pointer) {
                *slot = Value::String(new);
            }
        }
        let shared: std::sync::Arc<str> = text.as_str().into();
        let source = |key: String, pointer: String| DefSource {
            key,
            origin: shown.clone(),
            pointer,
            text: shared.clone(),
        };
        if let Value::Object(map) = &mut doc {
            map.remove("$schema");
            for defs in ["$defs", "definitions"] {
                if let Some(Value::Object(inner)) = map.remove(defs) {
                    for (name, schema) in inner {
                        let def = format!("{key}_{}", sanitize(&name));
                        let at = child_pointer(&format!("/{defs}"), &name);
                        self.sources.push(source(def.clone(), at));
                        self.defs.push((def, schema));
                    }
                }
            }
        }
        self.sources.push(source(key.clone(), String::new()));
        self.defs.push((key.clone(), doc));
        Ok(key)
    }

    /// The new value of every `$ref` of a sibling file: its local ones moved under its key,
    /// its external ones bundled in turn.
    fn rewrite_refs(&mut self, file: &File<'_>, key: &str, doc: &Value) -> Vec<(String, String)> {
        let mut edits = Vec::new();
        for node in walk(doc).nodes {
            let Some(target) = node.schema.get("$ref").and_then(Value::as_str) else {
                continue;
            };
            let pointer = child_pointer(&node.pointer, "$ref");
            let new = match target.strip_prefix('#') {
                Some(fragment) => match self.fragment(key, fragment) {
                    Ok(local) => Some(local),
                    Err(message) => {
                        self.errors.push(located(
                            file.text,
                            file.origin,
                            &pointer,
                            format!("`$ref` `{target}`: {message}"),
                        ));
                        None
                    }
                },
                None => self.resolve(file, &pointer, target),
            };
            edits.extend(new.map(|n| (pointer, n)));
        }
        edits
    }

    /// The local `$ref` for `fragment` (after the `#`) of the file bundled as `key`: the
    /// file itself, one of its definitions, or any other schema of it, copied into a
    /// definition of its own (a `$ref` must name a definition directly).
    fn fragment(&mut self, key: &str, fragment: &str) -> Result<String, String> {
        if fragment.is_empty() {
            return Ok(format!("#/$defs/{key}"));
        }
        let Some(pointer) = fragment.strip_prefix('/') else {
            return Err("anchors are not supported: use a JSON pointer (`#/...`)".into());
        };
        let tokens: Vec<String> = pointer.split('/').map(decode_token).collect();
        if let [defs, name] = tokens.as_slice()
            && (defs == "$defs" || defs == "definitions")
        {
            return Ok(format!("#/$defs/{key}_{}", sanitize(name)));
        }
        let hoisted = format!("{key}_{}", sanitize(&tokens.join("_")));
        if self.defs.iter().any(|(k, _)| *k == hoisted) {
            return Ok(format!("#/$defs/{hoisted}"));
        }
        let Some((_, doc)) = self.defs.iter().find(|(k, _)| k == key) else {
            // The file is still being bundled (a fragment of itself): not a sibling `$ref`.
            return Err("a fragment of the file that is being bundled: use `#/$defs/...`".into());
        };
        let schema = doc
            .pointer(fragment)
            .cloned()
            .ok_or_else(|| format!("`#{fragment}` is not in the file"))?;
        if let Some(file) = self.sources.iter().find(|s| s.key == key) {
            let moved = DefSource {
                key: hoisted.clone(),
                pointer: fragment.to_owned(),
                ..file.clone()
            };
            self.sources.push(moved);
        }
        self.defs.push((hoisted.clone(), schema));
        Ok(format!("#/$defs/{hoisted}"))
    }

    /// A path as the messages show it: relative to the schemas folder's parent, so messages
    /// are the same on every machine (`budget_agent/output.schema.json`).
    fn display(&self, path: &Path) -> String {
        path.strip_prefix(lexical(&self.root))
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// `$ref`s of `root` that name another file, with the pointer of each.
fn external_refs(root: &Value) -> Vec<(String, String)> {
    walk(root)
        .nodes
        .iter()
        .filter_map(|node| {
            let target = node.schema.get("$ref")?.as_str()?;
            (!target.starts_with('#'))
                .then(|| (child_pointer(&node.pointer, "$ref"), target.to_owned()))
        })
        .collect()
}

/// `budget_agent/output.schema.json` -> `budget_agent_output`: the definition's name, and so
/// the type's (`BudgetAgentOutput`, the name the producer's own output type has).
pub(crate) fn def_key(shown: &str) -> String {
    let stem = shown
        .strip_suffix(".schema.json")
        .or_else(|| shown.strip_suffix(".json"))
        .unwrap_or(shown);
    sanitize(stem)
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// `path` with `.` and `..` resolved without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `path`, once links are followed, is still inside `root` (a link inside the
/// folder must not reach out of it). A missing file counts as inside: reading it fails.
fn inside(path: &Path, root: &Path) -> bool {
    match (path.canonicalize(), root.canonicalize()) {
        (Ok(path), Ok(root)) => path.starts_with(root),
        _ => true,
    }
}

/// A const that makes the crate rebuild when `file` changes.
pub(crate) fn track(file: &Path) -> proc_macro2::TokenStream {
    let path = file.to_string_lossy();
    quote::quote!(
        const _: &[u8] = ::core::include_bytes!(#path);
    )
}

fn located(text: &str, origin: &str, pointer: &str, message: String) -> SchemaError {
    SchemaError::new(origin, pointer, message).at(locate(text, pointer))
}

/// Adds the definitions to the bundled value's root `$defs`.
fn insert_defs(root: &mut Value, defs: Vec<(String, Value)>) {
    let Value::Object(map) = root else { return };
    let slot = map
        .entry("$defs")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(existing) = slot {
        existing.extend(defs);
    }
}

/// The contract's own text with the `$ref` strings replaced in place and the definitions
/// added without a line break, so every line and every column before an edit stays where the
/// file has it. `None` when the text is not laid out the way the splice expects.
fn splice(text: &str, edits: &[(String, String)], defs: &[(String, Value)]) -> Option<String> {
    let mut replacements: Vec<(usize, usize, String)> = Vec::new();
    for (pointer, new) in edits {
        let start = value_offset(text, pointer)?;
        let len = string_len(&text[start..])?;
        replacements.push((start, start + len, serde_json::to_string(new).ok()?));
    }
    let entries: Vec<String> = defs
        .iter()
        .map(|(k, v)| {
            Some(format!(
                "{}: {}",
                serde_json::to_string(k).ok()?,
                serde_json::to_string(v).ok()?
            ))
        })
        .collect::<Option<_>>()?;
    let entries = entries.join(", ");
    match value_offset(text, "/$defs") {
        Some(open) if text[open..].starts_with('{') => {
            let rest = text[open + 1..].trim_start();
            let sep = if rest.starts_with('}') { "" } else { ", " };
            replacements.push((open + 1, open + 1, format!("{entries}{sep}")));
        }
        Some(_) => return None,
        None => {
            let close = text.trim_end().len().checked_sub(1)?;
            if !text[close..].starts_with('}') {
                return None;
            }
            let empty = text[..close].trim_end().ends_with('{');
            let sep = if empty { "" } else { ", " };
            replacements.push((close, close, format!("{sep}\"$defs\": {{{entries}}}")));
        }
    }
    replacements.sort_by_key(|r| r.0);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new) in replacements {
        if start < at {
            return None;
        }
        out.push_str(&text[at..start]);
        out.push_str(&new);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Byte offset of the value at `pointer` (which names an object member).
fn value_offset(text: &str, pointer: &str) -> Option<usize> {
    let (line, col) = locate(text, pointer)?;
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let key_start = line_start
        + text[line_start..]
            .char_indices()
            .nth(col - 1)
            .map_or(0, |(i, _)| i);
    // Past the key string and the colon to the value.
    let key_len = string_len(&text[key_start..])?;
    let after = &text[key_start + key_len..];
    let colon = after.find(':')?;
    let value = &after[colon + 1..];
    Some(key_start + key_len + colon + 1 + (value.len() - value.trim_start().len()))
}

/// Length in bytes of the JSON string literal at the start of `text`.
fn string_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "agent-codegen-bundle-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    const BUDGET: &str = r##"{"type": "object", "required": ["total"], "properties": {"total": {"type": "number"}, "area": {"$ref": "#/$defs/area"}}, "$defs": {"area": {"type": "string"}}}"##;

    #[test]
    fn a_sibling_file_becomes_a_definition_and_lines_stay() {
        let consumer = "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"budget_agent_output\": {\"$ref\": \"../budget_agent/output.schema.json\"},\n    \"n\": {\"type\": \"integer\"}\n  }\n}\n";
        let dir = folder(
            "sibling",
            &[
                ("budget_agent/output.schema.json", BUDGET),
                ("catering_agent/input.schema.json", consumer),
            ],
        );
        let path = dir.join("catering_agent/input.schema.json");
        let bundled = bundle(consumer, &path, "catering_agent/input.schema.json")
            .unwrap()
            .unwrap();
        let value: Value = serde_json::from_str(&bundled.text).unwrap();
        assert_eq!(
            value["properties"]["budget_agent_output"]["$ref"],
            "#/$defs/budget_agent_output"
        );
        assert_eq!(
            value["$defs"]["budget_agent_output"]["properties"]["area"]["$ref"],
            "#/$defs/budget_agent_output_area"
        );
        assert_eq!(value["$defs"]["budget_agent_output_area"]["type"], "string");
        // `n` is where the file has it.
        assert_eq!(
            locate(&bundled.text, "/properties/n"),
            locate(consumer, "/properties/n")
        );
        assert_eq!(
            bundled.files,
            [lexical(&dir.join("budget_agent/output.schema.json"))]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn leaving_the_folder_a_missing_file_and_a_cycle_are_refused_at_the_ref() {
        let a = r#"{"type": "object", "properties": {"b": {"$ref": "../b/input.schema.json"}}}"#;
        let b = r#"{"type": "object", "properties": {"a": {"$ref": "../a/input.schema.json"}}}"#;
        let dir = folder(
            "refused",
            &[("a/input.schema.json", a), ("b/input.schema.json", b)],
        );
        let errors =
            bundle(a, &dir.join("a/input.schema.json"), "a/input.schema.json").unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].origin, "b/input.schema.json");
        assert_eq!(
            errors[0].message,
            "`$ref` `../a/input.schema.json` makes a cycle of contract files: `a/input.schema.json` -> `b/input.schema.json` -> `a/input.schema.json`"
        );
        let out = r#"{"properties": {"x": {"$ref": "../../secret.json"}}}"#;
        let errors =
            bundle(out, &dir.join("a/input.schema.json"), "a/input.schema.json").unwrap_err();
        assert!(errors[0].message.ends_with("leaves the schemas folder: contracts may only refer to the contracts of its agent folders"), "{}", errors[0]);
        assert_eq!(errors[0].line_col, Some((1, 23)));
        let missing = r#"{"properties": {"x": {"$ref": "../c/output.schema.json"}}}"#;
        let errors = bundle(
            missing,
            &dir.join("a/input.schema.json"),
            "a/input.schema.json",
        )
        .unwrap_err();
        assert_eq!(
            errors[0].message,
            "`$ref` `../c/output.schema.json`: `c/output.schema.json` does not exist"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn existing_definitions_stay_where_they_are() {
        let consumer = "{\n  \"properties\": {\"b\": {\"$ref\": \"../budget_agent/output.schema.json\"}},\n  \"$defs\": {\n    \"own\": {\"type\": \"string\"}\n  }\n}\n";
        let dir = folder(
            "existing",
            &[
                ("budget_agent/output.schema.json", BUDGET),
                ("c/input.schema.json", consumer),
            ],
        );
        let bundled = bundle(
            consumer,
            &dir.join("c/input.schema.json"),
            "c/input.schema.json",
        )
        .unwrap()
        .unwrap();
        let value: Value = serde_json::from_str(&bundled.text).unwrap();
        let keys: Vec<&String> = value["$defs"].as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3);
        assert_eq!(value["$defs"]["own"]["type"], "string");
        assert_eq!(
            value["$defs"]["budget_agent_output"]["required"][0],
            "total"
        );
        assert_eq!(
            locate(&bundled.text, "/$defs/own"),
            locate(consumer, "/$defs/own")
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_fragment_is_hoisted_into_a_definition() {
        let consumer = r#"{"properties": {"x": {"$ref": "../budget_agent/output.schema.json#/properties/total"}}, "$defs": {}}"#;
        let dir = folder(
            "fragment",
            &[
                ("budget_agent/output.schema.json", BUDGET),
                ("c/input.schema.json", consumer),
            ],
        );
        let bundled = bundle(
            consumer,
            &dir.join("c/input.schema.json"),
            "c/input.schema.json",
        )
        .unwrap()
        .unwrap();
        let value: Value = serde_json::from_str(&bundled.text).unwrap();
        assert_eq!(
            value["properties"]["x"]["$ref"],
            "#/$defs/budget_agent_output_properties_total"
        );
        assert_eq!(
            value["$defs"]["budget_agent_output_properties_total"]["type"],
            "number"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
