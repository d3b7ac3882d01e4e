//! The check of a collect: a field a step gets as an array of `{agent_name, description,
//! output}` items, one per named earlier step (agent-core's `Workflow::collect` builds it at
//! run time). Each named step must run before the consumer, the item the run time builds for
//! it (its `agent_name`, a description, its output contract as `output`) must fit the
//! consumer's item schema, and the number of items must be within the field's
//! `minItems`/`maxItems`. A `contains` of the field (or of a member of its `allOf`) is met
//! when enough items pass it whatever the producers wrote: an item passes or fails by its
//! `agent_name`, which the collect fixes.

use super::model::{CollectAt, Flow, FlowProblem, FlowReport, properties};
use agent_contracts_schema::compat::{self, FindingKind, Holds};
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
    if let Some(close) = crate::suggest::closest(field, fields.iter().map(String::as_str)) {
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
    // The field's schema and the members of its `allOf`, each met on its own.
    let mut clauses = Vec::new();
    if !clauses_of(doc, wanted, 0, &mut clauses) {
        report.undecided.push(problem(
            None,
            format!("{at}: a `$ref` in its `allOf` that cannot be followed, or `allOf` nested deeper than {MAX_NESTING} levels"),
        ));
    }
    for clause in &clauses {
        if let Some(kind) = clause.get("type")
            && !types(kind).contains(&"array")
        {
            report.errors.push(problem(
                None,
                format!("{at} is collected as an array, and the step's contract expects {kind}"),
            ));
            return;
        }
    }
    let count = collect.from.len() as u64;
    for clause in &clauses {
        let bound = |key: &str| clause.get(key).and_then(Value::as_u64);
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
    }
    let any = Value::Bool(true);
    // Every item the run time builds, with the document its output contract is in; an item
    // of a step missing from the workflow still counts for `contains`, as any output.
    let mut built: Vec<(&Value, Value)> = Vec::new();
    for (i, producer) in collect.from.iter().enumerate() {
        let index = flow.steps.iter().position(|s| s.agent == *producer);
        let output = index
            .and_then(|index| flow.steps[index].output.as_ref())
            .map_or(&any, |o| &o.schema);
        // `#` is the producer's output contract, so that its own `#/$defs/...` references
        // resolve in its document.
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
        built.push((output, item));
        let Some(index) = index else {
            let mut message = format!(
                "{at} collects the output of `{producer}`, which is not a step of the workflow"
            );
            if flow.agents.contains(producer) {
                message.push_str(&format!(
                    ": add the step `{producer}` before `{}`",
                    step.agent
                ));
            } else if let Some(close) =
                crate::suggest::closest(producer, flow.steps.iter().map(|s| s.agent.as_str()))
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
        let path = format!("{field}[{producer}]");
        let (output, item) = &built[i];
        for items in clauses.iter().filter_map(|c| c.get("items")) {
            for finding in compat::compare((output, item), (doc, items), &path) {
                let message = format!("{at} collects `{producer}`: {}", finding.message);
                match finding.kind {
                    FindingKind::Mismatch => report.errors.push(problem(Some(i), message)),
                    FindingKind::Undecided => report.undecided.push(problem(Some(i), message)),
                }
            }
        }
    }
    for clause in &clauses {
        let Some(schema) = clause.get("contains") else {
            continue;
        };
        let min = clause
            .get("minContains")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let max = clause.get("maxContains").and_then(Value::as_u64);
        // Items that pass `contains` whatever they hold, and those that may.
        let (mut always, mut may) = (0u64, 0u64);
        for (output, item) in &built {
            match compat::holds((output, item), (doc, schema)) {
                Holds::Always => (always, may) = (always + 1, may + 1),
                Holds::Unknown => may += 1,
                Holds::Never => {}
            }
        }
        let named = agent_named(doc, schema);
        let what = match named {
            Some(agent) => format!("with `agent_name` `{agent}`"),
            None => "passing its `contains` schema".to_owned(),
        };
        if may < min {
            let has = if may == 0 {
                "none".to_owned()
            } else {
                may.to_string()
            };
            let mut message = if min == 1 {
                format!("{at} must contain an item {what} (`contains`), and the collect has none")
            } else {
                format!(
                    "{at} must contain at least {min} items {what} (`minContains`), and the collect has {has}"
                )
            };
            if let Some(agent) = named.filter(|_| may == 0) {
                message.push_str(&add_hint(flow, consumer, agent));
            }
            report.errors.push(problem(None, message));
        } else if let Some(max) = max.filter(|max| always > *max) {
            report.errors.push(problem(
                None,
                format!(
                    "{at} may contain at most {max} item(s) {what} (`maxContains`), and the collect has {always}"
                ),
            ));
        } else if always < min || max.is_some_and(|max| may > max) {
            report.undecided.push(problem(
                None,
                format!("{at}: whether the collected items meet the step's `contains` depends on their values"),
            ));
        }
    }
}

/// Appends `schema` (resolved in `doc`) and, in turn, the members of its `allOf`; false when
/// a `$ref` cannot be followed.
fn clauses_of<'a>(
    doc: &'a Value,
    schema: &'a Value,
    depth: usize,
    out: &mut Vec<&'a Value>,
) -> bool {
    let Some(schema) = compat::resolve(doc, schema).filter(|_| depth <= MAX_NESTING) else {
        return false;
    };
    out.push(schema);
    let members = schema.get("allOf").and_then(Value::as_array);
    // Every member is gathered, even after one that cannot be followed.
    let mut ok = true;
    for member in members.into_iter().flatten() {
        ok &= clauses_of(doc, member, depth + 1, out);
    }
    ok
}

/// Deepest `allOf` inside `allOf` followed at the field.
const MAX_NESTING: usize = 8;

/// The agent a `contains` schema asks for, when it is `agent_name` of one constant value.
fn agent_named<'a>(doc: &'a Value, schema: &'a Value) -> Option<&'a str> {
    let name = compat::resolve(doc, schema)?
        .get("properties")?
        .get("agent_name")?;
    let name = compat::resolve(doc, name)?;
    match (
        name.get("const"),
        name.get("enum").and_then(Value::as_array),
    ) {
        (Some(one), _) => one.as_str(),
        (None, Some(values)) if values.len() == 1 => values[0].as_str(),
        _ => None,
    }
}

/// What adds the item of `agent` to the collect read by step `consumer`.
fn add_hint(flow: &Flow, consumer: usize, agent: &str) -> String {
    let step = &flow.steps[consumer].agent;
    match flow.steps.iter().position(|s| s.agent == agent) {
        Some(index) if index < consumer => format!(": add `{agent}` to the collect"),
        Some(index) if index > consumer => {
            format!(": move `{agent}` before `{step}` and add it to the collect")
        }
        Some(_) => String::new(),
        None if flow.agents.iter().any(|a| a == agent) => format!(
            "; `{agent}` is not a step of the workflow: add the step `{agent}` before `{step}` and add it to the collect"
        ),
        None => {
            let mut hint = format!("; `{agent}` is not a step of the workflow");
            if let Some(close) =
                crate::suggest::closest(agent, flow.steps.iter().map(|s| s.agent.as_str()))
            {
                hint.push_str(&format!(" (did you mean `{close}`?)"));
            }
            hint
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

#[cfg(test)]
mod tests {
    use super::super::{FlowCollect, FlowContract, FlowStep, check, load_contract};
    use super::*;

    const PRODUCERS: [&str; 3] = ["discovery_agent", "selector_agent", "accessibility_agent"];

    fn contract(schema: Value) -> FlowContract {
        FlowContract {
            schema,
            origin: "test".to_owned(),
        }
    }

    /// A producer's output contract, as its agent folder has it.
    fn output_of(agent: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../schemas")
            .join(agent)
            .join("output.schema.json");
        load_contract(&path, &mut Vec::new())
            .expect("the producer's contract loads")
            .schema
    }

    /// The plan generator's input contract: every collected item is an `agentOutput`, whose
    /// `output` is the producer's contract (bundled) by its `agent_name`, and the field must
    /// hold the discovery and the selector items.
    fn plan_generator_input() -> Value {
        let mut defs = serde_json::Map::new();
        let mut branches = Vec::new();
        for agent in PRODUCERS {
            let mut bundled = output_of(agent);
            bundled.as_object_mut().unwrap().remove("$schema");
            let key = format!("{agent}_output");
            defs.insert(key.clone(), bundled);
            branches.push(json!({
                "if": {"required": ["agent_name"], "properties": {"agent_name": {"const": agent}}},
                "then": {"properties": {"output": {"$ref": format!("#/$defs/{key}")}}}
            }));
        }
        defs.insert(
            "agentOutput".to_owned(),
            json!({
                "type": "object",
                "required": ["agent_name", "output", "description"],
                "properties": {
                    "agent_name": {"type": "string", "enum": ["discovery_agent", "selector_agent", "accessibility_agent", "data_prep_agent"]},
                    "output": {"type": "object", "additionalProperties": true},
                    "description": {"type": "string"}
                },
                "allOf": branches
            }),
        );
        let must_hold = |agent: &str| json!({"contains": {"required": ["agent_name"], "properties": {"agent_name": {"const": agent}}}});
        json!({
            "type": "object",
            "required": ["target_url", "collected_information"],
            "properties": {
                "target_url": {"type": "string", "minLength": 1},
                "collected_information": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"$ref": "#/$defs/agentOutput"},
                    "allOf": [must_hold("discovery_agent"), must_hold("selector_agent")]
                }
            },
            "$defs": defs
        })
    }

    /// The producers named by `steps`, then the plan generator, which collects `from`.
    fn flow(steps: &[&str], from: &[&str]) -> Flow {
        let mut all: Vec<FlowStep> = steps
            .iter()
            .map(|agent| FlowStep {
                agent: (*agent).to_owned(),
                input: contract(json!({"type": "object"})),
                output: Some(contract(output_of(agent))),
            })
            .collect();
        all.push(FlowStep {
            agent: "plan_generator_agent".to_owned(),
            input: contract(plan_generator_input()),
            output: None,
        });
        Flow {
            name: "crawl".to_owned(),
            input: Some(contract(json!({
                "type": "object",
                "required": ["target_url"],
                "properties": {"target_url": {"type": "string", "minLength": 1}}
            }))),
            steps: all,
            agents: PRODUCERS
                .iter()
                .chain(&["plan_generator_agent"])
                .map(|a| (*a).to_owned())
                .collect(),
            collects: vec![FlowCollect {
                field: "collected_information".to_owned(),
                from: from.iter().map(|a| (*a).to_owned()).collect(),
            }],
        }
    }

    fn messages(problems: &[FlowProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.message.as_str()).collect()
    }

    #[test]
    fn the_plan_generator_contract_fits_its_collect() {
        let report = check(&flow(&PRODUCERS, &PRODUCERS));
        assert!(report.errors.is_empty(), "{:#?}", report.errors);
        assert!(report.undecided.is_empty(), "{:#?}", report.undecided);
    }

    #[test]
    fn a_missing_contained_item_names_the_producer() {
        let report = check(&flow(
            &PRODUCERS,
            &["selector_agent", "accessibility_agent"],
        ));
        assert_eq!(
            messages(&report.errors),
            [
                "step `plan_generator_agent`: `collected_information` must contain an item with `agent_name` `discovery_agent` (`contains`), and the collect has none: add `discovery_agent` to the collect"
            ]
        );
        assert_eq!(
            report.errors[0].collect,
            Some(CollectAt {
                collect: 0,
                item: None
            })
        );
        assert!(report.undecided.is_empty(), "{:#?}", report.undecided);

        let report = check(&flow(
            &["selector_agent", "accessibility_agent"],
            &["selector_agent", "accessibility_agent"],
        ));
        assert_eq!(
            messages(&report.errors),
            [
                "step `plan_generator_agent`: `collected_information` must contain an item with `agent_name` `discovery_agent` (`contains`), and the collect has none; `discovery_agent` is not a step of the workflow: add the step `discovery_agent` before `plan_generator_agent` and add it to the collect"
            ]
        );
    }

    #[test]
    fn contains_counts_items_by_what_they_may_hold() {
        let mut f = flow(&PRODUCERS, &PRODUCERS);
        let field = &mut f.steps[3].input.schema["properties"]["collected_information"];
        field["allOf"] = json!([{
            "contains": {"properties": {"agent_name": {"enum": ["selector_agent", "accessibility_agent"]}}},
            "maxContains": 1
        }]);
        assert_eq!(
            messages(&check(&f).errors),
            [
                "step `plan_generator_agent`: `collected_information` may contain at most 1 item(s) passing its `contains` schema (`maxContains`), and the collect has 2"
            ]
        );
        // What the producer wrote decides it: undecided.
        let field = &mut f.steps[3].input.schema["properties"]["collected_information"];
        field["allOf"] =
            json!([{"contains": {"properties": {"output": {"required": ["warnings"]}}}}]);
        let report = check(&f);
        assert!(report.errors.is_empty(), "{:#?}", report.errors);
        assert_eq!(
            messages(&report.undecided),
            [
                "step `plan_generator_agent`: `collected_information`: whether the collected items meet the step's `contains` depends on their values"
            ]
        );
    }
}
