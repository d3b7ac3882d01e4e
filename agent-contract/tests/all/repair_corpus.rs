//! Lossless repair on a corpus of the project's real tool calls and answers: the eval
//! datasets' kwargs, the recorded answers they replay, the fixtures' kwargs, and the canned
//! answers and inputs of the examples. Each is malformed once per lossless kind it admits
//! (at its first place in document order), and each must come back, with no model call, equal
//! to the clean original; malformed in ways that change meaning, none may be repaired.

use agent_contracts_contract::{
    Contract, ContractKind, Limits, RepairKind, Repairs, ToolCall, repair_answer, repair_kwargs,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One real value and the contract it passes.
struct Real {
    source: String,
    contract: PathBuf,
    kind: ContractKind,
    /// An answer, or a call's whole kwargs.
    value: Value,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn agent_schema(agent: &str, side: &str) -> PathBuf {
    root()
        .join("schemas")
        .join(agent)
        .join(format!("{side}.schema.json"))
}

/// Each `<agent>.jsonl` case's kwargs under `dir`.
fn dataset_calls(dir: &Path, corpus: &mut Vec<Real>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let agent = file.file_stem().unwrap().to_str().unwrap().to_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            let case: Value = serde_json::from_str(line).unwrap();
            // A case that expects a retry holds a broken call on purpose.
            if case.get("expect_retry").is_some() {
                continue;
            }
            corpus.push(Real {
                source: format!("{}:{}", file.display(), i + 1),
                contract: agent_schema(&agent, "input"),
                kind: ContractKind::Input,
                value: case["kwargs"].clone(),
            });
        }
    }
}

/// `const NAME: &str = r#"..."#;` of a Rust file: the string.
fn rust_const(file: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(file).unwrap();
    let start = text
        .find(&format!("const {name}: &str ="))
        .unwrap_or_else(|| panic!("{name} in {}", file.display()));
    let rest = &text[start..];
    let open = rest.find("r#").unwrap();
    let hashes = rest[open + 1..].chars().take_while(|c| *c == '#').count();
    let body_start = open + 1 + hashes + 1;
    let close = format!("\"{}", "#".repeat(hashes));
    let body_end = body_start + rest[body_start..].find(&close).unwrap();
    serde_json::from_str(&rest[body_start..body_end]).unwrap()
}

fn corpus() -> Vec<Real> {
    let mut corpus = Vec::new();
    dataset_calls(&root().join("evals"), &mut corpus);
    for dir in ["judged", "mix", "typo_enum", "typo_path"] {
        dataset_calls(&root().join("tests/fixtures/evals").join(dir), &mut corpus);
    }
    let kwargs = root().join("tests/fixtures/plan_generator/kwargs.json");
    corpus.push(Real {
        source: kwargs.display().to_string(),
        contract: agent_schema("plan_generator_agent", "input"),
        kind: ContractKind::Input,
        value: serde_json::from_str(&std::fs::read_to_string(&kwargs).unwrap()).unwrap(),
    });
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("evals/recorded.json")).unwrap())
            .unwrap();
    for answer in recorded["answers"].as_array().unwrap() {
        let case = answer["case"].as_str().unwrap();
        let agent = case.split('/').next().unwrap();
        let content = answer["response"]["message"]["content"].as_str().unwrap();
        corpus.push(Real {
            source: format!("evals/recorded.json {case}"),
            contract: agent_schema(agent, "output"),
            kind: ContractKind::Output,
            value: serde_json::from_str(content).unwrap(),
        });
    }
    let examples = root().join("examples/src");
    let triage = root().join("examples/support_triage");
    let canned = [
        (
            "event_planning.rs",
            "VENUE",
            agent_schema("venue_agent", "output"),
        ),
        (
            "event_planning.rs",
            "BUDGET",
            agent_schema("budget_agent", "output"),
        ),
        (
            "event_planning.rs",
            "CATERING",
            agent_schema("catering_agent", "output"),
        ),
        (
            "event_planning.rs",
            "LOGISTICS",
            agent_schema("logistics_agent", "output"),
        ),
        (
            "pipeline.rs",
            "DISCOVERY_OUTPUT",
            agent_schema("discovery_agent", "output"),
        ),
        (
            "pipeline.rs",
            "SELECTOR_OUTPUT",
            agent_schema("selector_agent", "output"),
        ),
        (
            "pipeline.rs",
            "ACCESSIBILITY_OUTPUT",
            agent_schema("accessibility_agent", "output"),
        ),
        (
            "pipeline.rs",
            "PLAN_OUTPUT",
            agent_schema("plan_generator_agent", "output"),
        ),
        (
            "support_triage.rs",
            "CLASSIFICATION",
            triage.join("ticket_classifier_agent/output.schema.json"),
        ),
        (
            "support_triage.rs",
            "DRAFT",
            triage.join("reply_drafter_agent/output.schema.json"),
        ),
        (
            "support_triage.rs",
            "REDRAFT",
            triage.join("reply_drafter_agent/output.schema.json"),
        ),
    ];
    for (file, name, contract) in canned {
        corpus.push(Real {
            source: format!("examples/src/{file} {name}"),
            contract,
            kind: ContractKind::Output,
            value: rust_const(&examples.join(file), name),
        });
    }
    // The triage example's ticket, as a call of its classifier.
    let mut ticket = rust_const(&examples.join("support_triage.rs"), "TICKET");
    ticket["task"] = json!("Classify the ticket");
    corpus.push(Real {
        source: "examples/src/support_triage.rs TICKET".into(),
        contract: triage.join("ticket_classifier_agent/input.schema.json"),
        kind: ContractKind::Input,
        value: ticket,
    });
    // The fixtures' datasets share cases: each value once per contract.
    let mut seen = std::collections::HashSet::new();
    corpus.retain(|real| seen.insert((real.contract.clone(), real.value.to_string())));
    corpus
}

fn load(path: &Path, kind: ContractKind) -> (Contract, Value) {
    let text = agent_contracts_codegen::read_contract(path)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let contract = Contract::from_json_str("corpus", kind, &text).unwrap();
    let schema = contract.schema().clone();
    (contract, schema)
}

/// The value a clean instance stands for: an answer, or a call's context.
fn meaning(text: &str, kind: ContractKind) -> Value {
    match kind {
        ContractKind::Output => serde_json::from_str(text).unwrap(),
        _ => ToolCall::from_json_str(text, &Limits::default())
            .unwrap()
            .context()
            .clone(),
    }
}

/// What a malformed text is repaired to, as [`meaning`] says; `None` when not repaired.
fn repaired(text: &str, contract: &Contract, kind: ContractKind) -> Option<Value> {
    let limits = Limits::default();
    match kind {
        ContractKind::Output => {
            repair_answer(text, Some(contract), Repairs::all(), &limits).map(|r| r.value)
        }
        _ => {
            let fixed = repair_kwargs(text, contract, Repairs::all(), &limits)?;
            // The runtime takes the repaired text through the input path again.
            contract
                .check(
                    ToolCall::from_json_str(&fixed.text, &limits)
                        .ok()?
                        .context(),
                    &limits,
                )
                .ok()?;
            Some(fixed.value)
        }
    }
}

/// A place in a value and the schema node that governs it (local `$ref`s followed).
struct Place {
    /// JSON pointer into the value.
    at: String,
    /// JSON pointer into the schema.
    schema: String,
}

/// Every place of `value` under `schema`, in document order, following `properties`, `items`
/// and local `$ref`s (where repair's own walk goes, written apart from it).
fn places(root: &Value, schema_at: &str, value: &Value, at: &str, out: &mut Vec<Place>) {
    let mut schema_at = schema_at.to_owned();
    let mut node = root.pointer(&schema_at).unwrap_or(&Value::Null);
    while let Some(r) = node.get("$ref").and_then(Value::as_str) {
        schema_at = r.trim_start_matches('#').to_owned();
        node = root.pointer(&schema_at).unwrap_or(&Value::Null);
    }
    out.push(Place {
        at: at.to_owned(),
        schema: schema_at.clone(),
    });
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                if node
                    .pointer(&format!("/properties/{}", escape(key)))
                    .is_some()
                {
                    let sub = format!("{schema_at}/properties/{}", escape(key));
                    places(root, &sub, member, &format!("{at}/{}", escape(key)), out);
                }
            }
        }
        Value::Array(items) if node.get("items").is_some_and(Value::is_object) => {
            for (i, item) in items.iter().enumerate() {
                places(
                    root,
                    &format!("{schema_at}/items"),
                    item,
                    &format!("{at}/{i}"),
                    out,
                );
            }
        }
        _ => {}
    }
}

fn types(node: &Value) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The clean instance with its first place admitting `kind` malformed that way, as text, and
/// the clean instance it stands for: the real one, except for a single value where an array
/// is wanted when the real value has no one-item array: then a real array cut to its first
/// item is the clean instance.
fn malformed(
    clean: &Value,
    schema: &Value,
    context: &str,
    kind: RepairKind,
) -> Option<(String, Value)> {
    let text = serde_json::to_string(clean).unwrap();
    let same = |text: String| Some((text, clean.clone()));
    match kind {
        RepairKind::TrailingComma => {
            let end = text.rfind('}')?;
            return same(format!("{},{}", &text[..end], &text[end..]));
        }
        RepairKind::Comment => return same(format!("{{// checked\n{}", &text[1..])),
        RepairKind::SingleQuotes => {
            let re = regex::Regex::new(r#":"([^"\\']*)""#).unwrap();
            let m = re.captures(&text)?;
            let whole = m.get(0)?;
            return same(format!(
                "{}:'{}'{}",
                &text[..whole.start()],
                &m[1],
                &text[whole.end()..]
            ));
        }
        RepairKind::UnquotedKey => {
            let re = regex::Regex::new(r#""([A-Za-z_][A-Za-z0-9_]*)":"#).unwrap();
            return same(re.replace(&text, "$1:").into_owned());
        }
        RepairKind::SingleToArray => {
            // A one-item array as written, or else the first longer one cut to its first item.
            for cut in [false, true] {
                if let Some(found) = unwrapped(clean, schema, context, cut) {
                    return Some(found);
                }
            }
            return None;
        }
        _ => {}
    }
    // The value kinds: on the context (a call) or the answer, under the contract's schema.
    let mut found = Vec::new();
    places(schema, "", clean.pointer(context)?, "", &mut found);
    for place in found {
        let node = schema.pointer(&place.schema)?;
        let value = clean.pointer(context)?.pointer(&place.at)?;
        let wanted = types(node);
        let broken = match (kind, value) {
            (RepairKind::NumberString, Value::Number(n))
                if !wanted.contains(&"string")
                    && (wanted.contains(&"integer") || wanted.contains(&"number")) =>
            {
                Value::String(n.to_string())
            }
            (RepairKind::BooleanString, Value::Bool(b)) if wanted == ["boolean"] => {
                Value::String(b.to_string())
            }
            (RepairKind::EnumCase, Value::String(s)) if node.get("enum").is_some() => {
                let upper = s.to_uppercase();
                let other = if upper != *s { upper } else { s.to_lowercase() };
                if other == *s {
                    continue;
                }
                Value::String(other)
            }
            _ => continue,
        };
        let mut instance = clean.clone();
        *instance.pointer_mut(context)?.pointer_mut(&place.at)? = broken;
        return same(serde_json::to_string(&instance).unwrap());
    }
    None
}

/// The first array at an array-only place holding one item (or, when `cut`, more than one,
/// whose first alone is the clean instance) written as that item alone.
fn unwrapped(clean: &Value, schema: &Value, context: &str, cut: bool) -> Option<(String, Value)> {
    let mut found = Vec::new();
    places(schema, "", clean.pointer(context)?, "", &mut found);
    for place in found {
        let node = schema.pointer(&place.schema)?;
        let Some(Value::Array(items)) = clean.pointer(context)?.pointer(&place.at) else {
            continue;
        };
        let fits = if cut {
            items.len() > 1
        } else {
            items.len() == 1
        };
        let min = node.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        if !fits || types(node) != ["array"] || items[0].is_array() || min > 1 {
            continue;
        }
        let mut one = clean.clone();
        *one.pointer_mut(context)?.pointer_mut(&place.at)? = Value::Array(vec![items[0].clone()]);
        let mut broken = clean.clone();
        *broken.pointer_mut(context)?.pointer_mut(&place.at)? = items[0].clone();
        return Some((serde_json::to_string(&broken).unwrap(), one));
    }
    None
}

#[test]
fn lossless_malformations_of_real_calls_and_answers_are_repaired_to_the_original() {
    let corpus = corpus();
    let (mut tried, mut accepted) = (0usize, 0usize);
    let mut per_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failed = Vec::new();
    for real in &corpus {
        let (contract, schema) = load(&real.contract, real.kind);
        let clean = serde_json::to_string(&real.value).unwrap();
        contract
            .check(&meaning(&clean, real.kind), &Limits::default())
            .unwrap_or_else(|e| panic!("{}: the clean value fails: {e}", real.source));
        // A call's values are its context's: flat beside `task`, as the datasets write them.
        let context = "";
        for kind in RepairKind::ALL {
            let Some((text, clean)) = malformed(&real.value, &schema, context, kind) else {
                continue;
            };
            let original = meaning(&clean.to_string(), real.kind);
            if contract.check(&original, &Limits::default()).is_err() {
                continue;
            }
            tried += 1;
            let tally = per_kind.entry(kind.as_str()).or_default();
            tally.0 += 1;
            if repaired(&text, &contract, real.kind).as_ref() == Some(&original) {
                accepted += 1;
                tally.1 += 1;
            } else {
                failed.push(format!("{} {kind}: {text}", real.source));
            }
        }
    }
    let share = 100.0 * accepted as f64 / tried as f64;
    println!(
        "{} real values, {tried} lossless malformations: {accepted} repaired to the original ({share:.1} %)",
        corpus.len()
    );
    for (kind, (n, ok)) in &per_kind {
        println!("  {kind}: {ok}/{n}");
    }
    for f in &failed {
        println!("  not repaired: {f}");
    }
    assert!(corpus.len() >= 20, "the corpus shrank: {}", corpus.len());
    // Every kind has real places to break.
    for kind in RepairKind::ALL {
        assert!(
            per_kind.get(kind.as_str()).is_some_and(|(n, _)| *n > 0),
            "no real value admits {kind}"
        );
    }
    assert!(share >= 95.0, "{share:.1} % repaired");
}

#[test]
fn malformations_that_change_meaning_are_never_repaired() {
    let corpus = corpus();
    let mut tried: BTreeMap<&str, usize> = BTreeMap::new();
    let mut repaired_any = Vec::new();
    for real in &corpus {
        let (contract, schema) = load(&real.contract, real.kind);
        let mut found = Vec::new();
        places(&schema, "", &real.value, "", &mut found);
        let mut check = |what: &'static str, text: String, contract: &Contract| {
            *tried.entry(what).or_default() += 1;
            if let Some(value) = repaired(&text, contract, real.kind) {
                repaired_any.push(format!("{} {what}: {text} -> {value}", real.source));
            }
        };
        // A number with a fraction for an integer: as a number, and as a string.
        if let Some(place) = found.iter().find(|p| {
            types(schema.pointer(&p.schema).unwrap()) == ["integer"]
                && real.value.pointer(&p.at).is_some_and(Value::is_number)
        }) {
            let n = real.value.pointer(&place.at).unwrap().as_f64().unwrap();
            for broken in [json!(n + 0.5), json!(format!("{}", n + 0.5))] {
                let mut instance = real.value.clone();
                *instance.pointer_mut(&place.at).unwrap() = broken;
                check("fraction for an integer", instance.to_string(), &contract);
            }
        }
        // Two enum values that fold to one: the contract also lists the value in another
        // case, and the value is written in a third.
        if let Some(place) = found.iter().find(|p| {
            schema.pointer(&p.schema).unwrap().get("enum").is_some()
                && real.value.pointer(&p.at).is_some_and(|v| {
                    v.as_str()
                        .is_some_and(|s| s.to_uppercase() != s.to_lowercase())
                })
        }) {
            let s = real.value.pointer(&place.at).unwrap().as_str().unwrap();
            let mut chars = s.chars();
            let first = chars.next().unwrap();
            let twin = if first.is_uppercase() {
                format!("{}{}", first.to_lowercase(), chars.as_str())
            } else {
                format!("{}{}", first.to_uppercase(), chars.as_str())
            };
            let third = if s.to_uppercase() != twin && s.to_uppercase() != s {
                s.to_uppercase()
            } else {
                s.to_lowercase()
            };
            assert!(third != s && third != twin, "{s}");
            let mut widened = schema.clone();
            widened
                .pointer_mut(&format!("{}/enum", place.schema))
                .unwrap()
                .as_array_mut()
                .unwrap()
                .push(json!(twin));
            let widened = Contract::new("corpus", real.kind, widened).unwrap();
            let mut instance = real.value.clone();
            *instance.pointer_mut(&place.at).unwrap() = json!(third);
            check(
                "two enum values that fold to one",
                instance.to_string(),
                &widened,
            );
        }
        // A missing required field, with a trailing comma beside it: the comma is fixed, the
        // field is never made up.
        if let Some(field) = schema["required"].as_array().and_then(|r| r.first()) {
            let mut instance = real.value.clone();
            instance
                .as_object_mut()
                .unwrap()
                .remove(field.as_str().unwrap());
            let text = serde_json::to_string(&instance).unwrap();
            let end = text.rfind('}').unwrap();
            let text = format!("{},{}", &text[..end], &text[end..]);
            check("missing required field", text, &contract);
        }
    }
    println!(
        "meaning-changing malformations tried: {tried:?}; repaired: {}",
        repaired_any.len()
    );
    for r in &repaired_any {
        println!("  repaired: {r}");
    }
    assert!(
        tried.len() == 3 && tried.values().all(|n| *n > 0),
        "{tried:?}"
    );
    assert!(repaired_any.is_empty(), "{repaired_any:#?}");
}
