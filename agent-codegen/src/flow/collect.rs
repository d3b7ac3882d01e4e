//! The check of a collect: a field a step gets as an array of `{agent_name, description,
//! output}` items, one per named earlier step (agent-core's `Workflow::collect` builds it at
//! run time). Each named step must run before the consumer, the item the run time builds for
//! it (its `agent_name`, a description, its output contract as `output`) must fit the
//! consumer's item schema, and the number of items must be within the field's
//! `minItems`/`maxItems`.

use super::compat::{self, FindingKind};
use super::{CollectAt, Flow, FlowProblem, FlowReport, properties};
use serde_json::{Value, json};

/// The problem of a collect whose field no step's input contract declares.
pub(super) fn nobody_reads(flow: &Flow, c: usize) -> FlowProblem {
    let field = &flow.collects[c].field;
    let mut message =
        format!("collect `{field}`: no step's input contract has the field `{field}`");
    let fields: Vec<String> = flow
        .steps
        .iter()
        .flat_map(|s| properties(&s.input.schema).into_iter().map(|(k, _)| k))
        .collect();
    if let Some(close) = crate::agent::closest(field, fields.iter().map(String::as_str)) {
        message.push_str(&format!(" (did you mean `{close}`?)"));
    }
    FlowProblem {
        step: 0,
        field: field.clone(),
        message,
        collect: Some(CollectAt {
            collect: c,
            item: None,
        }),
    }
}

/// Checks collect `c`, read by step `consumer`.
pub(super) fn check(flow: &Flow, c: usize, consumer: usize, report: &mut FlowReport) {
    let collect = &flow.collects[c];
    let field = &collect.field;
    let step = &flow.steps[consumer];
    let at = format!("step `{}`: `{field}`", step.agent);
    let problem = |item: Option<usize>, message: String| FlowProblem {
        step: consumer,
        field: field.clone(),
        message,
        collect: Some(CollectAt { collect: c, item }),
    };
    let doc = &step.input.schema;
    let wanted = properties(doc)
        .into_iter()
        .find(|(k, _)| k == field)
        .and_then(|(_, schema)| compat::resolve(doc, schema));
    let Some(wanted) = wanted else {
        report.undecided.push(problem(
            None,
            format!("{at}: a `$ref` that cannot be followed"),
        ));
        return;
    };
    if let Some(kind) = wanted.get("type")
        && !types(kind).contains(&"array")
    {
        report.errors.push(problem(
            None,
            format!("{at} is collected as an array, and the step's contract expects {kind}"),
        ));
        return;
    }
    let count = collect.from.len() as u64;
    let bound = |key: &str| wanted.get(key).and_then(Value::as_u64);
    if let Some(min) = bound("minItems").filter(|min| count < *min) {
        report.errors.push(problem(
            None,
            format!("{at} collects {count} item(s), and the step's contract needs at least {min} (`minItems`)"),
        ));
    }
    if let Some(max) = bound("maxItems").filter(|max| count > *max) {
        report.errors.push(problem(
            None,
            format!("{at} collects {count} item(s), and the step's contract allows at most {max} (`maxItems`)"),
        ));
    }
    let items = wanted.get("items");
    for (i, producer) in collect.from.iter().enumerate() {
        let Some(index) = flow.steps.iter().position(|s| s.agent == *producer) else {
            let mut message = format!(
                "{at} collects the output of `{producer}`, which is not a step of the workflow"
            );
            if flow.agents.contains(producer) {
                message.push_str(&format!(
                    ": add the step `{producer}` before `{}`",
                    step.agent
                ));
            } else if let Some(close) =
                crate::agent::closest(producer, flow.steps.iter().map(|s| s.agent.as_str()))
            {
                message.push_str(&format!(" (did you mean `{close}`?)"));
            }
            report.errors.push(problem(Some(i), message));
            continue;
        };
        if index >= consumer {
            let message = if index == consumer {
                format!("{at} collects the step's own output, which does not exist before it runs")
            } else {
                format!(
                    "{at} collects the output of `{producer}`, which runs after it: move `{producer}` before `{}`",
                    step.agent
                )
            };
            report.errors.push(problem(Some(i), message));
            continue;
        }
        let Some(items) = items else { continue };
        // The item the run time builds; `#` is the producer's output contract, so that its
        // own `#/$defs/...` references resolve in its document.
        let any = Value::Bool(true);
        let output = flow.steps[index]
            .output
            .as_ref()
            .map_or(&any, |o| &o.schema);
        let item = json!({
            "type": "object",
            "required": ["agent_name", "description", "output"],
            "properties": {
                "agent_name": {"const": producer},
                "description": {"type": "string"},
                "output": {"$ref": "#"}
            },
            "additionalProperties": false
        });
        let path = format!("{field}[{producer}]");
        for finding in compat::compare((output, &item), (doc, items), &path) {
            let message = format!("{at} collects `{producer}`: {}", finding.message);
            match finding.kind {
                FindingKind::Mismatch => report.errors.push(problem(Some(i), message)),
                FindingKind::Undecided => report.undecided.push(problem(Some(i), message)),
            }
        }
    }
}

fn types(kind: &Value) -> Vec<&str> {
    match kind {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}
