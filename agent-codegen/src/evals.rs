//! Eval datasets checked against an agent's contracts before any model runs them: one JSON
//! Lines file per agent (`<agent>.jsonl`), one case a line:
//! `{"name": ..., "kwargs": {...}, "expect": [...]}`, or with `"expect_retry": [fields]` beside
//! an empty `expect` for a case whose input must be refused.
//!
//! Each case's kwargs are checked against the input contract (unless the case expects the
//! refusal), each assertion's JSON pointer against the output contract (a path no answer that
//! passes the contract can hold is an error), and each value against the schema at that path
//! (`"equals": "sucess"` where the schema has an enum). Every error is at the dataset's
//! `line:col` (1-based) and says what was probably meant.
//!
//! The derive (`evals = "..."`), the build script's `Builder::evals` and
//! `agent-contract check --evals` / `eval` all run this one check.
//!
//! May import: `schema/` (locating a pointer in a line) and the leaf modules.

use crate::error::SchemaError;
use crate::schema::locate::locate;
use crate::schema::walk::decode_token;
use crate::suggest::closest;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The keys a case may have.
const CASE_KEYS: [&str; 4] = ["name", "kwargs", "expect", "expect_retry"];
/// The checks an assertion on a path may make (`min` and `max` may go together).
const CHECKS: [&str; 7] = [
    "equals", "matches", "one_of", "min", "max", "contains", "exists",
];
/// Most `$ref`s, `allOf`/`anyOf`/`oneOf`/`if` branches followed at one step of a path: a
/// schema is finite, but a `$ref` cycle is not.
const MAX_BRANCHES: usize = 256;
/// Most cases one dataset may hold (a dataset is read whole into a build).
pub const MAX_CASES: usize = 100_000;

/// The contracts a dataset is checked against: an agent's bundled schemas, as a build reads
/// them.
pub(crate) struct Contracts<'a> {
    pub agent: &'a str,
    pub input: &'a Value,
    pub output: Option<&'a Value>,
}

/// Every problem of the dataset `text` (shown as `origin`) against `contracts`, each at its
/// line and column; and how many cases it holds.
pub(crate) fn check_dataset_text(
    text: &str,
    origin: &str,
    contracts: &Contracts<'_>,
) -> (usize, Vec<SchemaError>) {
    let mut errors = Vec::new();
    let input = compile(contracts.input, contracts.input, origin, &mut errors);
    let mut names = BTreeSet::new();
    let mut cases = 0;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        cases += 1;
        if cases > MAX_CASES {
            errors.push(at_line(
                origin,
                index + 1,
                1,
                format!("a dataset may hold at most {MAX_CASES} cases"),
            ));
            break;
        }
        let mut case = Case {
            origin,
            line_no: index + 1,
            line,
            errors: &mut errors,
        };
        case.check(contracts, input.as_ref(), &mut names);
    }
    if cases == 0 {
        errors.push(SchemaError::new(origin, "", "the dataset holds no case"));
    }
    (cases, errors)
}

fn at_line(origin: &str, line: usize, col: usize, message: String) -> SchemaError {
    SchemaError::new(origin, "", message).at(Some((line, col)))
}

/// One line of the dataset being checked.
struct Case<'a> {
    origin: &'a str,
    line_no: usize,
    line: &'a str,
    errors: &'a mut Vec<SchemaError>,
}

impl Case<'_> {
    /// An error at the member `pointer` of this line's case (its key, or its value in an
    /// array).
    fn error(&mut self, pointer: &str, message: String) {
        let col = locate(self.line, pointer).map_or(1, |(_, col)| col);
        self.errors
            .push(SchemaError::new(self.origin, pointer, message).at(Some((self.line_no, col))));
    }

    fn check(
        &mut self,
        contracts: &Contracts<'_>,
        input: Option<&jsonschema::Validator>,
        names: &mut BTreeSet<String>,
    ) {
        let value: Value = match serde_json::from_str(self.line) {
            Ok(value) => value,
            Err(e) => {
                let message = format!("the case is not JSON: {e}");
                let message = message
                    .rsplit_once(" at line")
                    .map_or(message.clone(), |(m, _)| m.to_owned());
                self.errors.push(at_line(
                    self.origin,
                    self.line_no,
                    e.column().max(1),
                    message,
                ));
                return;
            }
        };
        let Some(case) = value.as_object() else {
            self.error(
                "",
                "a case is a JSON object: `{\"name\": ..., \"kwargs\": {...}, \"expect\": [...]}`"
                    .into(),
            );
            return;
        };
        for key in case.keys() {
            if !CASE_KEYS.contains(&key.as_str()) {
                let hint = did_you_mean(key, CASE_KEYS.iter().copied());
                self.error(
                    &pointer(&[key]),
                    format!("unknown key `{key}` in a case{hint}"),
                );
            }
        }
        match case.get("name") {
            Some(Value::String(name)) if !name.is_empty() => {
                if !names.insert(name.clone()) {
                    self.error(
                        "/name",
                        format!(
                            "a case named `{name}` is already in the dataset: names must be unique"
                        ),
                    );
                }
            }
            Some(_) => self.error("/name", "`name` is a non-empty string".into()),
            None => self.error("", "a case needs a `name`".into()),
        }
        let retry = match case.get("expect_retry") {
            None => None,
            Some(Value::Array(fields)) if fields.iter().all(Value::is_string) => Some(fields),
            Some(_) => {
                self.error(
                    "/expect_retry",
                    "`expect_retry` lists the missing or invalid input fields, as strings".into(),
                );
                return;
            }
        };
        match case.get("kwargs") {
            Some(Value::Object(kwargs)) => {
                if let Some(fields) = retry {
                    self.check_retry_fields(fields, contracts.input);
                } else if let Some(validator) = input {
                    self.check_kwargs(kwargs, validator, contracts.agent);
                }
            }
            Some(_) => self.error(
                "/kwargs",
                "`kwargs` is the tool call's arguments, a JSON object".into(),
            ),
            None => self.error("", "a case needs its `kwargs`".into()),
        }
        let Some(expect) = case.get("expect") else {
            self.error(
                "",
                "a case needs `expect`, its assertions (`[]` for none)".into(),
            );
            return;
        };
        let Some(expect) = expect.as_array() else {
            self.error("/expect", "`expect` is an array of assertions".into());
            return;
        };
        if retry.is_some() && !expect.is_empty() {
            self.error("/expect", "a case that expects its input refused (`expect_retry`) has an empty `expect`: no answer is made".into());
            return;
        }
        for (index, assertion) in expect.iter().enumerate() {
            let at = format!("/expect/{index}");
            self.check_assertion(&at, assertion, contracts);
        }
    }

    /// `expect_retry`'s fields are the input contract's.
    fn check_retry_fields(&mut self, fields: &[Value], input: &Value) {
        let known = top_properties(input);
        for (index, field) in fields.iter().enumerate() {
            let field = field.as_str().unwrap_or_default();
            if !known.iter().any(|k| k == field) {
                let hint = did_you_mean(field, known.iter().map(String::as_str));
                self.error(
                    &format!("/expect_retry/{index}"),
                    format!("`{field}` is not a field of the input contract{hint}"),
                );
            }
        }
    }

    fn check_kwargs(
        &mut self,
        kwargs: &Map<String, Value>,
        validator: &jsonschema::Validator,
        agent: &str,
    ) {
        // The runtime takes the reserved keys (`task`, ...) out of the call before the
        // contract sees the rest.
        let context: Map<String, Value> = kwargs
            .iter()
            .filter(|(key, _)| !agent_contracts_schema::RESERVED_KEYS.contains(&key.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let context = Value::Object(context);
        let mut problems: Vec<(String, String)> = validator
            .iter_errors(&context)
            .map(|e| (e.instance_path().as_str().to_owned(), e.to_string()))
            .collect();
        problems.sort();
        problems.dedup();
        for (path, message) in problems {
            self.error(
                &format!("/kwargs{path}"),
                format!("the kwargs break the input contract of `{agent}` at `{}`: {message} (a case whose input must be refused says so with `expect_retry`)", if path.is_empty() { "/" } else { &path }),
            );
        }
    }

    fn check_assertion(&mut self, at: &str, assertion: &Value, contracts: &Contracts<'_>) {
        let Some(map) = assertion.as_object() else {
            self.error(at, "an assertion is an object: `{\"path\": \"/field\", \"equals\": ...}` or `{\"judge\": \"a rubric\"}`".into());
            return;
        };
        if let Some(rubric) = map.get("judge") {
            if rubric.as_str().is_none_or(|r| r.trim().is_empty()) {
                self.error(
                    &format!("{at}/judge"),
                    "`judge` is the rubric a judge model reads, a non-empty string".into(),
                );
            }
            if let Some(other) = map.keys().find(|k| *k != "judge") {
                self.error(
                    &pointer_in(at, other),
                    format!("a `judge` assertion has no other key than `judge`, not `{other}`"),
                );
            }
            return;
        }
        for key in map.keys() {
            if key != "path" && !CHECKS.contains(&key.as_str()) {
                let hint = did_you_mean(key, CHECKS.iter().copied().chain(["path", "judge"]));
                self.error(
                    &pointer_in(at, key),
                    format!("unknown key `{key}` in an assertion{hint}"),
                );
                return;
            }
        }
        let Some(path) = map.get("path") else {
            self.error(
                at,
                "an assertion needs a `path` (a JSON pointer into the output) or is a `judge`"
                    .into(),
            );
            return;
        };
        let Some(path) = path.as_str().filter(|p| p.is_empty() || p.starts_with('/')) else {
            self.error(
                &format!("{at}/path"),
                "`path` is a JSON pointer into the output: `\"\"` or starting with `/`".into(),
            );
            return;
        };
        let checks: Vec<&str> = CHECKS
            .iter()
            .copied()
            .filter(|c| map.contains_key(*c))
            .collect();
        let range = !checks.is_empty() && checks.iter().all(|c| *c == "min" || *c == "max");
        if checks.is_empty() || (checks.len() > 1 && !range) {
            self.error(
                at,
                format!(
                    "an assertion makes one check of `{}` (or `min` with `max`); this one makes {}",
                    CHECKS.join("`, `"),
                    checks.len()
                ),
            );
            return;
        }
        let Some(output) = contracts.output else {
            self.error(&format!("{at}/path"), format!("`{}` has no output contract: its answers are not typed, so nothing can be asserted on a path (use a `judge`)", contracts.agent));
            return;
        };
        let schemas = match resolve_path(output, path) {
            Ok(schemas) => schemas,
            Err(missing) => {
                self.error(
                    &format!("{at}/path"),
                    missing.message(path, contracts.agent),
                );
                return;
            }
        };
        for check in checks {
            let value = &map[check];
            let at_check = pointer_in(at, check);
            if let Err(message) = check_value(output, &schemas, check, value) {
                self.error(&at_check, format!("`{check}` at `{path}`: {message}"));
            }
        }
    }
}

/// The JSON pointer of `key` under `base`, escaped.
fn pointer_in(base: &str, key: &str) -> String {
    format!("{base}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn pointer(keys: &[&str]) -> String {
    keys.iter().fold(String::new(), |p, k| pointer_in(&p, k))
}

fn did_you_mean<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    closest(name, candidates).map_or_else(String::new, |c| format!("; did you mean `{c}`?"))
}

/// A validator of `schema` (a part of `root`), the root's definitions beside it so its
/// `$ref`s resolve. `None` after an error.
fn compile(
    root: &Value,
    schema: &Value,
    origin: &str,
    errors: &mut Vec<SchemaError>,
) -> Option<jsonschema::Validator> {
    match agent_contracts_schema::validator_options().build(&standalone(root, schema)) {
        Ok(v) => Some(v),
        Err(e) => {
            errors.push(SchemaError::new(
                origin,
                "",
                format!("the contract does not compile: {e}"),
            ));
            None
        }
    }
}

/// `schema` with `root`'s `$defs` and `definitions`, so that the local `$ref`s of a part of a
/// contract resolve as they do in the whole.
fn standalone(root: &Value, schema: &Value) -> Value {
    let mut map = match schema {
        Value::Object(map) => map.clone(),
        Value::Bool(true) => Map::new(),
        other => return other.clone(),
    };
    for key in ["$defs", "definitions"] {
        if let Some(defs) = root.get(key) {
            map.entry(key).or_insert_with(|| defs.clone());
        }
    }
    Value::Object(map)
}

/// The names of a contract's top-level properties.
fn top_properties(schema: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for branch in branches(schema, schema) {
        if let Some(props) = branch.get("properties").and_then(Value::as_object) {
            names.extend(props.keys().cloned());
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Every schema a value at `schema` must or may also pass: itself, its `$ref` target, and
/// the branches of `allOf`, `anyOf`, `oneOf` and `if`'s `then`/`else`, followed through.
fn branches<'a>(root: &'a Value, schema: &'a Value) -> Vec<&'a Value> {
    let mut out: Vec<&'a Value> = Vec::new();
    let mut todo = vec![schema];
    while let Some(s) = todo.pop() {
        if out.len() >= MAX_BRANCHES {
            break;
        }
        if out.iter().any(|seen: &&Value| std::ptr::eq(*seen, s)) {
            continue;
        }
        out.push(s);
        let Some(map) = s.as_object() else { continue };
        let target = map.get("$ref").and_then(Value::as_str);
        if let Some(t) = target
            .and_then(|t| t.strip_prefix('#'))
            .and_then(|p| root.pointer(p))
        {
            todo.push(t);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(items) = map.get(key).and_then(Value::as_array) {
                todo.extend(items.iter());
            }
        }
        for key in ["then", "else"] {
            if let Some(branch) = map.get(key) {
                todo.push(branch);
            }
        }
    }
    out
}

/// Why a path cannot be in an answer: the step it fails at and the names it could have used.
#[derive(Debug)]
struct Missing {
    /// The path up to and including the token that fails.
    prefix: String,
    token: String,
    known: Vec<String>,
    /// An index into something that is never an array.
    not_array: bool,
}

impl Missing {
    fn message(&self, path: &str, agent: &str) -> String {
        let Missing {
            prefix,
            token,
            known,
            ..
        } = self;
        let mut message = format!(
            "the output contract of `{agent}` has no `{prefix}`: no answer that passes it holds `{path}`"
        );
        if self.not_array {
            message.push_str(" (the value there is not an array)");
        }
        let parent = &prefix[..prefix.rfind('/').unwrap_or(0)];
        let near = closest(token, known.iter().map(String::as_str));
        if let Some(near) = near {
            let escaped = near.replace('~', "~0").replace('/', "~1");
            message.push_str(&format!("; did you mean `{parent}/{escaped}`?"));
        } else if !known.is_empty() {
            message.push_str(&format!("; it has `{}`", known.join("`, `")));
        }
        message
    }
}

/// The schemas an answer's value at `path` is checked by (each with its branches), or why the
/// contract has no such path. An empty list means the value is untyped there (anything goes).
fn resolve_path<'a>(root: &'a Value, path: &str) -> Result<Vec<&'a Value>, Missing> {
    let mut current = vec![root];
    if path.is_empty() {
        return Ok(current);
    }
    let mut prefix = String::new();
    for raw in path[1..].split('/') {
        let token = decode_token(raw);
        prefix.push('/');
        prefix.push_str(raw);
        let mut next = Vec::new();
        let mut known = Vec::new();
        let mut open = false;
        let mut any_object = false;
        for schema in &current {
            for branch in branches(root, schema) {
                match step(branch, &token) {
                    Step::Into(s) => next.push(s),
                    Step::Open => open = true,
                    Step::No(names) => {
                        any_object |= branch.get("properties").is_some();
                        known.extend(names);
                    }
                }
            }
        }
        if open {
            // Untyped below: any path goes and any value does.
            return Ok(Vec::new());
        }
        if next.is_empty() {
            known.sort();
            known.dedup();
            let not_array = !any_object && token.parse::<usize>().is_ok();
            return Err(Missing {
                prefix,
                token,
                known,
                not_array,
            });
        }
        current = next;
    }
    Ok(current)
}

enum Step<'a> {
    /// The member's schema.
    Into(&'a Value),
    /// The branch says nothing of the member: the value there is untyped.
    Open,
    /// The branch cannot hold the member; the names it can.
    No(Vec<String>),
}

/// One step of a path through one branch (its `$ref`s and combinators already followed by
/// the caller).
fn step<'a>(branch: &'a Value, token: &str) -> Step<'a> {
    let Some(map) = branch.as_object() else {
        return match branch {
            Value::Bool(true) => Step::Open,
            _ => Step::No(Vec::new()),
        };
    };
    let index = token.parse::<usize>().ok();
    // Arrays: `prefixItems`, then `items`.
    if let Some(index) = index {
        if let Some(item) = map
            .get("prefixItems")
            .and_then(Value::as_array)
            .and_then(|p| p.get(index))
        {
            return Step::Into(item);
        }
        if let Some(items) = map.get("items") {
            return Step::Into(items);
        }
    }
    let props = map.get("properties").and_then(Value::as_object);
    if let Some(schema) = props.and_then(|p| p.get(token)) {
        return Step::Into(schema);
    }
    if let Some(patterns) = map.get("patternProperties").and_then(Value::as_object) {
        for (pattern, schema) in patterns {
            if regex::Regex::new(pattern).is_ok_and(|re| re.is_match(token)) {
                return Step::Into(schema);
            }
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => return Step::Open,
        Some(schema @ Value::Object(_)) => return Step::Into(schema),
        _ => {
            // Nothing said: a free-form object (no `properties`) is untyped; one that declares
            // its properties holds only those in its typed form.
            let typed = props.is_some()
                || map.contains_key("patternProperties")
                || map.contains_key("items")
                || map.contains_key("prefixItems");
            let scalar = matches!(
                map.get("type").and_then(Value::as_str),
                Some("string" | "number" | "integer" | "boolean" | "null")
            );
            if !typed
                && !scalar
                && !has_any(
                    map,
                    &[
                        "$ref", "allOf", "anyOf", "oneOf", "then", "else", "enum", "const",
                    ],
                )
            {
                return Step::Open;
            }
        }
    }
    Step::No(
        props
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default(),
    )
}

fn has_any(map: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().any(|k| map.contains_key(*k))
}

/// JSON types a schema admits, by its `type` (and `enum`/`const`); `None` when it says
/// nothing.
fn admits(root: &Value, schemas: &[&Value], kind: &str) -> bool {
    if schemas.is_empty() {
        return true;
    }
    schemas.iter().any(|schema| {
        branches(root, schema).iter().all(|branch| {
            let Some(map) = branch.as_object() else {
                return !matches!(branch, Value::Bool(false));
            };
            let by_type = match map.get("type") {
                Some(Value::String(t)) => type_admits(t, kind),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|t| type_admits(t, kind)),
                _ => true,
            };
            let listed: Option<Vec<&Value>> = match (map.get("enum"), map.get("const")) {
                (Some(Value::Array(values)), _) => Some(values.iter().collect()),
                (_, Some(value)) => Some(vec![value]),
                _ => None,
            };
            let by_values = listed.is_none_or(|values| {
                values
                    .iter()
                    .any(|v| kind_of(v) == kind || (kind == "number" && v.is_number()))
            });
            by_type && by_values
        })
    })
}

fn type_admits(t: &str, kind: &str) -> bool {
    t == kind || (kind == "number" && t == "integer")
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `value` passes any of `schemas` (all when untyped); the reason it does not.
fn fits(root: &Value, schemas: &[&Value], value: &Value) -> Result<(), String> {
    if schemas.is_empty() {
        return Ok(());
    }
    let mut reasons = Vec::new();
    for schema in schemas {
        let Ok(validator) =
            agent_contracts_schema::validator_options().build(&standalone(root, schema))
        else {
            return Ok(());
        };
        match validator.validate(value) {
            Ok(()) => return Ok(()),
            Err(e) => reasons.push(e.to_string()),
        }
    }
    let allowed: Vec<&str> = schemas
        .iter()
        .flat_map(|s| branches(root, s))
        .filter_map(|b| b.get("enum").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut message = format!(
        "{value} is not a value the output contract allows there ({})",
        reasons.join("; ")
    );
    if let Some(text) = value.as_str() {
        message.push_str(&did_you_mean(text, allowed.iter().copied()));
    }
    Err(message)
}

/// The value of one check, against the schemas at its path.
fn check_value(root: &Value, schemas: &[&Value], check: &str, value: &Value) -> Result<(), String> {
    match check {
        "equals" => fits(root, schemas, value),
        "one_of" => {
            let Some(values) = value.as_array().filter(|v| !v.is_empty()) else {
                return Err("`one_of` lists the values allowed, a non-empty array".into());
            };
            values.iter().try_for_each(|v| fits(root, schemas, v))
        }
        "matches" => {
            let Some(pattern) = value.as_str() else {
                return Err("`matches` is a regular expression, a string".into());
            };
            regex::Regex::new(pattern).map_err(|e| format!("not a regular expression: {e}"))?;
            if admits(root, schemas, "string") {
                Ok(())
            } else {
                Err("the value there is never a string".into())
            }
        }
        "min" | "max" => {
            if !value.is_number() {
                return Err(format!("`{check}` is a number"));
            }
            if admits(root, schemas, "number")
                || admits(root, schemas, "array")
                || admits(root, schemas, "string")
            {
                Ok(())
            } else {
                Err("the value there is never a number, an array or a string (whose length is compared)".into())
            }
        }
        "contains" => {
            if admits(root, schemas, "array") {
                let items: Vec<&Value> = schemas
                    .iter()
                    .flat_map(|s| branches(root, s))
                    .filter_map(|b| b.get("items"))
                    .collect();
                return fits(root, &items, value).map_err(|m| format!("no item can be that: {m}"));
            }
            if admits(root, schemas, "string") {
                return match value {
                    Value::String(_) => Ok(()),
                    _ => {
                        Err("the value there is a string: `contains` looks for a substring".into())
                    }
                };
            }
            Err("the value there is neither an array nor a string".into())
        }
        "exists" => match value {
            Value::Bool(_) => Ok(()),
            _ => Err("`exists` is `true` or `false`".into()),
        },
        _ => Ok(()),
    }
}

/// The dataset file `dataset` (shown as `origin`) checked against the contracts of the agent folder `agent_dir`
/// (as a build reads them: sibling `$ref`s bundled): how many cases it holds, or every
/// problem, each `path:line:col: message`. Files read go to `read`.
pub(crate) fn check_dataset(
    dataset: &std::path::Path,
    origin: &str,
    agent_dir: &std::path::Path,
    read: &mut Vec<std::path::PathBuf>,
) -> Result<usize, Vec<String>> {
    let agent = agent_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    read.push(dataset.to_path_buf());
    let text = std::fs::read_to_string(dataset)
        .map_err(|e| vec![format!("{origin}: cannot read the dataset: {e}")])?;
    let load =
        |file: &str, read: &mut Vec<std::path::PathBuf>| -> Result<Option<Value>, Vec<String>> {
            let path = agent_dir.join(file);
            if !path.is_file() {
                return Ok(None);
            }
            read.push(path.clone());
            let text = std::fs::read_to_string(&path)
                .map_err(|e| vec![format!("cannot read {}: {e}", path.display())])?;
            let shown = path.display().to_string();
            let text = match crate::schema::bundle::bundle(&text, &path, &shown) {
                Ok(None) => text,
                Ok(Some(bundled)) => {
                    read.extend(bundled.files);
                    bundled.text
                }
                Err(problems) => return Err(problems.iter().map(ToString::to_string).collect()),
            };
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| vec![format!("{}: {e}", path.display())])
        };
    let input = load("input.schema.json", read)?
        .ok_or_else(|| vec![format!("{origin}: `{agent}` has no input.schema.json")])?;
    let output = load("output.schema.json", read)?;
    let contracts = Contracts {
        agent: &agent,
        input: &input,
        output: output.as_ref(),
    };
    let (cases, errors) = check_dataset_text(&text, origin, &contracts);
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors.iter().map(ToString::to_string).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(output: &Value, line: &str) -> Vec<String> {
        let input = json!({"type": "object", "required": ["url"],
            "properties": {"url": {"type": "string", "minLength": 1}}});
        let contracts = Contracts {
            agent: "a",
            input: &input,
            output: Some(output),
        };
        let (_, errors) = check_dataset_text(line, "a.jsonl", &contracts);
        errors.iter().map(ToString::to_string).collect()
    }

    fn output() -> Value {
        json!({"type": "object", "additionalProperties": false,
            "properties": {
                "status": {"enum": ["success", "partial", "failed"]},
                "n": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
                "item": {"$ref": "#/$defs/item"},
                "free": {"type": "object"},
                "map": {"type": "object", "additionalProperties": {"type": "boolean"}}
            },
            "$defs": {"item": {"type": "object", "properties": {"id": {"type": "string"}}}}})
    }

    fn case(expect: &str) -> String {
        format!(r#"{{"name": "c", "kwargs": {{"url": "u"}}, "expect": [{expect}]}}"#)
    }

    #[test]
    fn a_path_the_contract_holds_passes() {
        for expect in [
            r#"{"path": "/status", "equals": "success"}"#,
            r#"{"path": "/status", "one_of": ["success", "partial"]}"#,
            r#"{"path": "/n", "min": 1, "max": 5}"#,
            r#"{"path": "/tags", "contains": "x"}"#,
            r#"{"path": "/tags/0", "equals": "y"}"#,
            r#"{"path": "/item/id", "matches": "^a"}"#,
            r#"{"path": "/free/anything/below", "exists": true}"#,
            r#"{"path": "/map/k", "equals": true}"#,
            r#"{"judge": "the plan is complete"}"#,
        ] {
            assert_eq!(
                problems(&output(), &case(expect)),
                Vec::<String>::new(),
                "{expect}"
            );
        }
    }

    #[test]
    fn a_path_or_value_the_contract_cannot_hold_is_an_error_at_its_column() {
        let cases = [
            (
                r#"{"path": "/statsu", "equals": "success"}"#,
                "\"path\"",
                "did you mean `/status`?",
            ),
            (
                r#"{"path": "/status", "equals": "sucess"}"#,
                "\"equals\"",
                "did you mean `success`?",
            ),
            (
                r#"{"path": "/status", "one_of": ["success", "parital"]}"#,
                "\"one_of\"",
                "did you mean `partial`?",
            ),
            (
                r#"{"path": "/tags", "contains": "z"}"#,
                "\"contains\"",
                "no item can be that",
            ),
            (
                r#"{"path": "/n", "matches": "^1"}"#,
                "\"matches\"",
                "never a string",
            ),
            (
                r#"{"path": "/item/idd", "equals": "a"}"#,
                "\"path\"",
                "did you mean `/item/id`?",
            ),
            (r#"{"path": "/n/0", "equals": 1}"#, "\"path\"", "no `/n/0`"),
            (
                r#"{"path": "/map/k", "equals": "yes"}"#,
                "\"equals\"",
                "not a value",
            ),
            (
                r#"{"path": "/status", "equal": "success"}"#,
                "\"equal\"",
                "did you mean `equals`?",
            ),
            (
                r#"{"path": "/status", "equals": "success", "exists": true}"#,
                "{\"path\"",
                "one check",
            ),
        ];
        for (expect, needle, says) in cases {
            let line = case(expect);
            let col = line.find(needle).unwrap() + 1;
            let found = problems(&output(), &line);
            assert_eq!(found.len(), 1, "{expect}: {found:?}");
            assert!(
                found[0].starts_with(&format!("a.jsonl:1:{col}: ")),
                "{expect}: {found:?}"
            );
            assert!(found[0].contains(says), "{expect}: {found:?}");
        }
    }

    #[test]
    fn kwargs_are_checked_unless_the_case_expects_their_refusal() {
        let refused = r#"{"name": "c", "kwargs": {"url": ""}, "expect": []}"#;
        let found = problems(&output(), refused);
        assert_eq!(found.len(), 1, "{found:?}");
        let col = refused.find("\"url\"").unwrap() + 1;
        assert!(
            found[0].starts_with(&format!("a.jsonl:1:{col}: the kwargs break")),
            "{found:?}"
        );
        let expected =
            r#"{"name": "c", "kwargs": {"url": ""}, "expect_retry": ["url"], "expect": []}"#;
        assert_eq!(problems(&output(), expected), Vec::<String>::new());
        let typo = r#"{"name": "c", "kwargs": {}, "expect_retry": ["ulr"], "expect": []}"#;
        let found = problems(&output(), typo);
        assert!(found[0].contains("did you mean `url`?"), "{found:?}");
        // Reserved keys are the runtime's, not the contract's.
        let task = r#"{"name": "c", "kwargs": {"task": "t", "url": "u"}, "expect": []}"#;
        assert_eq!(problems(&output(), task), Vec::<String>::new());
    }

    #[test]
    fn names_are_unique_and_lines_are_json() {
        let text = format!("{}\n\n{}\nnot json\n", case(""), case(""));
        let found = problems(&output(), &text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with("a.jsonl:3:") && found[0].contains("already"),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("a.jsonl:4:2: the case is not JSON"),
            "{found:?}"
        );
    }
}
