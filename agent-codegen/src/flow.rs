//! Data flow between a workflow's agents, checked when the crate compiles.
//!
//! A workflow runs its steps in order; each step's context is the run's input plus
//! `<agent>_output` of every step before it (agent-core's `WorkflowState::context`). So
//! every required input property of a step must be a property of the workflow's input
//! contract or the output of an earlier step, and what is provided must fit what the step
//! expects. [`check`] says, per step and field, what is missing or does not fit, and what
//! it cannot decide (a keyword it does not compare): that is reported as undecided, never
//! guessed. `#[derive(Workflow)]` (`derive/workflow.rs`) and [`crate::Builder::check_workflow`]
//! call it, so both front ends check alike.
//!
//! Stage 4 of the crate's layout: it compares contracts as JSON (the comparison itself is
//! `agent_contracts_schema::compat`, which the runtime shares), so it imports only `schema`
//! (to bundle a contract's sibling `$ref`s) and the leaf modules (`error`, `suggest`), and the
//! front ends import it.

mod collect;
mod model;

use crate::error::SchemaError;
use agent_contracts_schema::compat;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use compat::{Finding, FindingKind};
use model::properties;
pub use model::{CollectAt, Flow, FlowCollect, FlowContract, FlowProblem, FlowReport, FlowStep};

/// Who provides a context key, and the schema it has there.
struct Provider<'a> {
    who: String,
    schema: &'a Value,
    doc: &'a Value,
    /// Whether it is always there (a step's output is; an optional input property is not).
    always: bool,
}

/// Checks that every step gets the input its contract requires.
pub fn check(flow: &Flow) -> FlowReport {
    let mut report = FlowReport::default();
    let any = Value::Bool(true);
    let mut provided: Vec<(String, Provider<'_>)> = Vec::new();
    if let Some(input) = &flow.input {
        let required = required(&input.schema);
        for (key, schema) in properties(&input.schema) {
            provided.push((
                key.clone(),
                Provider {
                    who: "the workflow's input".into(),
                    schema,
                    doc: &input.schema,
                    always: required.contains(&key.as_str()),
                },
            ));
        }
    }
    let consumers: Vec<Option<usize>> = (0..flow.collects.len())
        .map(|c| collect_consumer(flow, c))
        .collect();
    for (c, consumer) in consumers.iter().enumerate() {
        match consumer {
            Some(index) => collect::check(flow, c, *index, &mut report),
            None => report.errors.push(collect::nobody_reads(flow, c)),
        }
    }
    for (index, step) in flow.steps.iter().enumerate() {
        let collected: Vec<&str> = consumers
            .iter()
            .zip(&flow.collects)
            .filter(|(consumer, _)| **consumer == Some(index))
            .map(|(_, c)| c.field.as_str())
            .collect();
        check_step(flow, index, &provided, &collected, &mut report);
        let key = output_key(&step.agent);
        provided.retain(|(k, _)| *k != key);
        let (schema, doc) = step
            .output
            .as_ref()
            .map_or((&any, &any), |o| (&o.schema, &o.schema));
        provided.push((
            key,
            Provider {
                who: format!("the step `{}`", step.agent),
                schema,
                doc,
                always: true,
            },
        ));
    }
    report
}

fn check_step(
    flow: &Flow,
    index: usize,
    provided: &[(String, Provider<'_>)],
    collected: &[&str],
    report: &mut FlowReport,
) {
    let step = &flow.steps[index];
    let schema = &step.input.schema;
    let required = required(schema);
    let problem = |field: &str, message: String| FlowProblem {
        step: index,
        field: field.to_owned(),
        message,
        collect: None,
    };
    let declared = properties(schema);
    for field in &required {
        if collected.contains(field) {
            continue;
        }
        if declared.iter().any(|(k, _)| k == field) || provided.iter().any(|(k, _)| k == field) {
            continue;
        }
        // Required but not declared: the contract still requires the key.
        report
            .errors
            .push(problem(field, missing(flow, index, field, provided)));
    }
    for (field, wanted) in declared {
        if collected.contains(&field.as_str()) {
            continue;
        }
        let needed = required.contains(&field.as_str());
        let Some((_, from)) = provided.iter().find(|(k, _)| *k == field) else {
            if needed {
                report
                    .errors
                    .push(problem(&field, missing(flow, index, &field, provided)));
            }
            continue;
        };
        let at = format!("step `{}`: `{field}`", step.agent);
        if needed && !from.always {
            report.errors.push(problem(
                &field,
                format!(
                    "{at} is required, but {} may leave it out: make it required there",
                    from.who
                ),
            ));
        }
        let findings = compat::compare((from.doc, from.schema), (schema, wanted), &field);
        for finding in findings {
            let message = format!("{at} from {}: {}", from.who, finding.message);
            match finding.kind {
                FindingKind::Mismatch => report.errors.push(problem(&field, message)),
                FindingKind::Undecided => report.undecided.push(problem(&field, message)),
            }
        }
    }
}

/// Why `field` reaches step `index` from nowhere, with what would fix it.
fn missing(flow: &Flow, index: usize, field: &str, provided: &[(String, Provider<'_>)]) -> String {
    let step = &flow.steps[index].agent;
    let producer = field.strip_suffix("_output");
    let later = producer.and_then(|p| {
        flow.steps
            .iter()
            .enumerate()
            .skip(index + 1)
            .find(|(_, s)| s.agent == p)
    });
    if let Some((later_index, later)) = later {
        if let Some(chain) = cycle(flow, index, later_index) {
            return format!(
                "step `{step}` needs `{field}`, but the steps need each other's output: {chain}; no order can run them"
            );
        }
        return format!(
            "step `{step}` needs `{field}`, which only the later step `{}` provides: move `{}` before `{step}`",
            later.agent, later.agent
        );
    }
    let mut message = format!(
        "step `{step}` needs `{field}`, which neither the workflow's input nor an earlier step provides"
    );
    let keys: Vec<&str> = provided.iter().map(|(k, _)| k.as_str()).collect();
    if keys.is_empty() {
        message.push_str(" (nothing is provided before it)");
    } else {
        let list: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
        message.push_str(&format!(" (provided: {})", list.join(", ")));
    }
    match producer.filter(|p| flow.agents.iter().any(|a| a == p)) {
        Some(p) => message.push_str(&format!(": add the step `{p}` before `{step}`")),
        None => {
            if let Some(close) = crate::suggest::closest(field, keys.iter().copied()) {
                message.push_str(&format!(" (did you mean `{close}`?)"));
            }
        }
    }
    message
}

/// Steps that need each other's output, `index` first, if `later` (whose output `index`
/// needs) needs `index`'s output, directly or through other steps: no order runs them.
fn cycle(flow: &Flow, index: usize, later: usize) -> Option<String> {
    let needs = |i: usize| -> Vec<usize> {
        required(&flow.steps[i].input.schema)
            .iter()
            .filter_map(|f| f.strip_suffix("_output"))
            .filter_map(|p| flow.steps.iter().position(|s| s.agent == p))
            .collect()
    };
    let mut seen = vec![index, later];
    let mut frontier = vec![vec![index, later]];
    while let Some(route) = frontier.pop() {
        let at = *route.last()?;
        for next in needs(at) {
            let mut route = route.clone();
            route.push(next);
            if next == index {
                let mut chain = format!("`{}`", flow.steps[route[0]].agent);
                for (n, &i) in route.iter().enumerate().skip(1) {
                    let joint = if n == 1 {
                        " needs the output of"
                    } else {
                        ", which needs the output of"
                    };
                    chain.push_str(&format!("{joint} `{}`", flow.steps[i].agent));
                }
                return Some(chain);
            }
            if !seen.contains(&next) {
                seen.push(next);
                frontier.push(route);
            }
        }
    }
    None
}

/// The step that reads collect `c`: the first whose input contract declares its field.
pub fn collect_consumer(flow: &Flow, c: usize) -> Option<usize> {
    let field = &flow.collects.get(c)?.field;
    flow.steps
        .iter()
        .position(|s| properties(&s.input.schema).iter().any(|(k, _)| k == field))
}

/// `<agent>_output`: the key a step's output has in the context of the steps after it.
pub fn output_key(agent: &str) -> String {
    format!("{agent}_output")
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Reads the contracts of `agent` from the schemas folder, sibling `$ref`s bundled. Files
/// read are appended to `read`.
pub fn load_step(
    schemas: &Path,
    agent: &str,
    read: &mut Vec<PathBuf>,
) -> Result<FlowStep, Vec<SchemaError>> {
    let dir = schemas.join(agent);
    if !dir.join("input.schema.json").is_file() {
        let message = format!("`{agent}` is not an agent folder (it has no `input.schema.json`)");
        return Err(vec![SchemaError::new(agent, "", message)]);
    }
    let input = load_contract(&dir.join("input.schema.json"), read)?;
    let output_path = dir.join("output.schema.json");
    let output = if output_path.is_file() {
        Some(load_contract(&output_path, read)?)
    } else {
        None
    };
    Ok(FlowStep {
        agent: agent.to_owned(),
        input,
        output,
    })
}

/// Reads one contract file, sibling `$ref`s bundled.
pub fn load_contract(
    path: &Path,
    read: &mut Vec<PathBuf>,
) -> Result<FlowContract, Vec<SchemaError>> {
    let origin = display(path);
    read.push(path.to_path_buf());
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![SchemaError::new(
            &origin,
            "",
            format!("cannot read the contract: {e}"),
        )]
    })?;
    let text = match crate::schema::bundle::bundle(&text, path, &origin)? {
        Some(bundled) => {
            read.extend(bundled.files);
            bundled.text
        }
        None => text,
    };
    let schema = serde_json::from_str(&text)
        .map_err(|e| vec![SchemaError::new(&origin, "", format!("not JSON: {e}"))])?;
    Ok(FlowContract { schema, origin })
}

/// `.../schemas/catering_agent/input.schema.json` -> `catering_agent/input.schema.json`.
fn display(path: &Path) -> String {
    let parts: Vec<String> = path
        .iter()
        .rev()
        .take(2)
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// The agent folders of a schemas folder, in name order.
pub fn agent_folders(schemas: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(schemas)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().join("input.schema.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
