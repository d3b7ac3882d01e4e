//! Schema/type agreement: for every contract in `schemas/` (input and output of each agent)
//! and a set of valid and invalid instances, the schema and the generated type agree. The
//! types are the build script's (`agent_examples::agents`), deserialized the way the runtime
//! does (`T::deserialize(&Value)`).
//!
//! What "agree" means, as a sandwich: every instance the schema accepts, the type deserializes
//! (no valid call is refused by the type); and every instance the type deserializes, the
//! schema's structure accepts: the schema without its validation-only keywords (`minimum`,
//! `minItems`, ..., which typify leaves to the validator) and with `null` allowed for optional
//! properties (typed as `Option`). The runtime always checks the schema before it
//! deserializes, so what the type accepts beyond the schema never gets through.
//!
//! Instances: the hand-written fixtures, an example generated from each schema, and variations
//! of it: every value replaced by each probe (wrong types, edge numbers, empty strings and
//! containers), every key removed, an unknown key added, arrays emptied and doubled.
//!
//! A disagreement is a bug in the codegen's rejection rules. The ones that stand are listed in
//! [`KNOWN_REFUSED`] and [`KNOWN_ACCEPTED`] with why; any other fails the test.

use agent_contracts::contract::ContractChecks;
use agent_contracts::{Agent, AgentInput, Contract, DynAgent};
use agent_examples::agents;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// A contract, its name, its structure, and how its typed side deserializes.
struct Side {
    label: String,
    contract: &'static Contract,
    structure: Contract,
    typed: fn(&Value) -> bool,
    /// The fast path's verdict: deserialized as the checks assume, and the generated checks
    /// pass.
    fast: fn(&Value) -> bool,
}

impl Side {
    fn new(
        label: String,
        contract: &'static Contract,
        typed: fn(&Value) -> bool,
        fast: fn(&Value) -> bool,
    ) -> Self {
        let structure = structural(contract.schema());
        let structure = Contract::new(&label, contract.kind(), structure).unwrap();
        Self {
            label,
            contract,
            structure,
            typed,
            fast,
        }
    }
}

fn deserializes<T: DeserializeOwned>(value: &Value) -> bool {
    T::deserialize(value).is_ok()
}

fn passes_checks<T: DeserializeOwned + ContractChecks>(value: &Value) -> bool {
    agent_contracts::__private::deserialize_strict::<T, _>(value)
        .is_ok_and(|t| t.satisfies_contract())
}

fn sides_of<A: Agent>() -> Vec<Side>
where
    A::Input: ContractChecks,
    A::Output: ContractChecks,
{
    let mut sides = vec![Side::new(
        format!("{}/input", A::NAME),
        A::Input::input_contract(),
        deserializes::<A::Input>,
        passes_checks::<A::Input>,
    )];
    if let Some(contract) = A::output_contract() {
        sides.push(Side::new(
            format!("{}/output", A::NAME),
            contract,
            deserializes::<A::Output>,
            passes_checks::<A::Output>,
        ));
    }
    sides
}

/// Every agent of `schemas/`, typed. `every_contract_of_schemas_is_covered` keeps this list
/// complete.
fn sides() -> Vec<Side> {
    let mut sides = Vec::new();
    sides.extend(sides_of::<agents::AccessibilityAgent>());
    sides.extend(sides_of::<agents::BudgetAgent>());
    sides.extend(sides_of::<agents::CateringAgent>());
    sides.extend(sides_of::<agents::Consolidation>());
    sides.extend(sides_of::<agents::Delegation>());
    sides.extend(sides_of::<agents::DiscoveryAgent>());
    sides.extend(sides_of::<agents::LogisticsAgent>());
    sides.extend(sides_of::<agents::PlanGeneratorAgent>());
    sides.extend(sides_of::<agents::SelectorAgent>());
    sides.extend(sides_of::<agents::VenueAgent>());
    sides
}

/// Values put in place of every value of an example.
const PROBES: &[&str] = &[
    "null",
    "true",
    "0",
    "1",
    "-1",
    "7",
    "101",
    "2.5",
    "-0.5",
    "-0.0",
    "1.0",
    "1e2",
    "1e30",
    "18446744073709551616",
    "-9223372036854775809",
    "\"\"",
    "\"a\"",
    "\"é\"",
    "\"A\"",
    "\"success\"",
    "\"discovery_agent\"",
    "[]",
    "[\"a\"]",
    "[1]",
    "[{}]",
    "{}",
    "{\"k\": \"v\"}",
    "{\"k\": 1}",
];

/// Values the schema accepts and the type refuses, by probe. JSON Schema's `integer` is any
/// number with a zero fractional part, of any size; the generated integer fields take
/// integral floats (`1.0`, `1e2`, `-0.0`) but hold only 64 bits. Such a value is never taken
/// silently: the typed path returns the retry error naming its path
/// (`tests/realworld.rs`).
const KNOWN_REFUSED: &[(&str, &str)] = &[
    (
        "1e30",
        "an integer beyond 64 bits: integer to the schema, out of range for i64/u64",
    ),
    (
        "18446744073709551616",
        "an integer beyond 64 bits: integer to the schema, out of range for i64/u64",
    ),
];

/// Values the type accepts beyond the schema's structure, by probe: serde's derived structs
/// also read an object's fields from an array, in declaration order (`[{}]` is a
/// `BudgetAgentInput`). Only the validator, which runs first on every runtime path, refuses
/// them; a `#[serde]` attribute to turn this off does not exist.
const KNOWN_ACCEPTED: &[(&str, &str)] = &[
    ("[]", "serde structs read their fields from an array"),
    ("[\"a\"]", "serde structs read their fields from an array"),
    ("[1]", "serde structs read their fields from an array"),
    ("[{}]", "serde structs read their fields from an array"),
];

/// Keywords that constrain values without changing their Rust type: typify leaves them to
/// the validator.
const VALIDATION_ONLY: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "format",
    // Conditions: the type is built from the rest of the node.
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
];

/// The schema's structure, as the generated type sees it: validation-only keywords and the
/// `const` of properties dropped, optional properties also `null`.
fn structural(schema: &Value) -> Value {
    let mut schema = schema.clone();
    strip(&mut schema);
    schema
}

fn strip(schema: &mut Value) {
    let Value::Object(node) = schema else {
        return;
    };
    for keyword in VALIDATION_ONLY {
        node.remove(*keyword);
    }
    let required: Vec<String> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            // A `const` on a property leaves its type (a string stays a `String`).
            if let Value::Object(p) = property {
                p.remove("const");
            }
            strip(property);
            if !required.contains(name) {
                *property = json!({"anyOf": [{"type": "null"}, property.take()]});
            }
        }
    }
    for map in ["$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(children)) = node.get_mut(map) {
            children.values_mut().for_each(strip);
        }
    }
    for single in ["items", "additionalProperties", "not", "propertyNames"] {
        if let Some(child) = node.get_mut(single) {
            strip(child);
        }
    }
    for list in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = node.get_mut(list) {
            children.iter_mut().for_each(strip);
        }
    }
}

/// A valid instance of `schema`, as small as the schema allows but with every property.
fn example(root: &Value, schema: &Value) -> Value {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).expect("local $ref"),
        None => schema,
    };
    if let Some(v) = schema.get("const") {
        return v.clone();
    }
    if let Some(v) = schema.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    let min = |k: &str| schema.get(k).and_then(Value::as_u64).unwrap_or(0);
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str),
        other => other.and_then(Value::as_str),
    };
    match kind {
        Some("object") => {
            let mut object = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    object.insert(name.clone(), example(root, property));
                }
            }
            if let Some(extra @ Value::Object(_)) = schema.get("additionalProperties") {
                object.insert("extra".into(), example(root, extra));
            }
            // Required names without a schema are typed as any JSON value.
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = name.as_str().unwrap().to_owned();
                object.entry(name).or_insert_with(|| json!("a"));
            }
            Value::Object(object)
        }
        Some("array") => {
            let item = schema.get("items").map_or(json!("a"), |i| example(root, i));
            Value::Array(vec![item; min("minItems").max(1) as usize])
        }
        // The contracts' patterns: context IDs, and identifiers.
        Some("string") => match schema.get("pattern").and_then(Value::as_str) {
            Some(p) if p.contains("T[0-9]{2}") => json!("run.1/agent_a/1/2026-01-02T03:04:05.678Z"),
            _ => json!("a".repeat(min("minLength").max(1) as usize)),
        },
        Some("integer") => json!(schema.get("minimum").and_then(Value::as_i64).unwrap_or(0) + 1),
        Some("number") => json!(2.5),
        Some("boolean") => json!(true),
        Some("null") => Value::Null,
        _ => json!({"any": "thing"}),
    }
}

/// The instance the variations start from: the generated example, or, for a contract with
/// conditions the generator does not model (an item's `output` tied to its `agent_name` by
/// `if`/`then`, items required by `contains`), its hand-written fixture.
fn base_of(label: &str, schema: &Value) -> Value {
    if !has_conditions(schema) {
        return example(schema, schema);
    }
    fixtures()
        .into_iter()
        .find(|(l, _)| l == label)
        .unwrap_or_else(|| panic!("{label}: a contract with conditions needs a fixture"))
        .1
}

fn has_conditions(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.contains_key("if")
                || map.contains_key("contains")
                || map.values().any(has_conditions)
        }
        Value::Array(list) => list.iter().any(has_conditions),
        _ => false,
    }
}

/// JSON pointers of every value in `value`, the root first.
fn pointers(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), value)];
    while let Some((pointer, v)) = stack.pop() {
        match v {
            Value::Object(o) => {
                for (k, child) in o {
                    let token = k.replace('~', "~0").replace('/', "~1");
                    stack.push((format!("{pointer}/{token}"), child));
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    stack.push((format!("{pointer}/{i}"), child));
                }
            }
            _ => {}
        }
        out.push(pointer);
    }
    out
}

/// `(what was done, instance)`: the base, each probe at each place, each key removed, an
/// unknown key added to each object, and each array emptied and doubled.
fn variations(base: &Value) -> Vec<(String, String, Value)> {
    let probes: Vec<(&str, Value)> = PROBES
        .iter()
        .map(|p| (*p, serde_json::from_str(p).unwrap()))
        .collect();
    let mut out = vec![(String::new(), "base".to_owned(), base.clone())];
    for pointer in pointers(base) {
        for (text, probe) in &probes {
            let mut v = base.clone();
            *v.pointer_mut(&pointer).unwrap() = probe.clone();
            out.push((text.to_string(), format!("{pointer} = {text}"), v));
        }
        let mut v = base.clone();
        match v.pointer_mut(&pointer).unwrap() {
            Value::Object(o) => {
                for key in o.keys().cloned().collect::<Vec<_>>() {
                    let mut without = base.clone();
                    if let Some(Value::Object(o)) = without.pointer_mut(&pointer) {
                        o.remove(&key);
                    }
                    out.push((String::new(), format!("{pointer}/{key} removed"), without));
                }
                o.insert("zz_unknown".into(), json!("x"));
                out.push((String::new(), format!("{pointer}/zz_unknown added"), v));
            }
            Value::Array(a) => {
                let doubled: Vec<Value> = a.iter().chain(a.iter()).cloned().collect();
                a.clear();
                out.push((String::new(), format!("{pointer} emptied"), v.clone()));
                *v.pointer_mut(&pointer).unwrap() = Value::Array(doubled);
                out.push((String::new(), format!("{pointer} doubled"), v));
            }
            _ => {}
        }
    }
    out
}

/// Hand-written instances: the plan generator's fixture, and the outputs it holds, each for
/// its own agent's output contract.
fn fixtures() -> Vec<(String, Value)> {
    let kwargs: Value =
        serde_json::from_str(include_str!("../../fixtures/plan_generator/kwargs.json")).unwrap();
    let mut out = Vec::new();
    let mut context = kwargs.clone();
    context.as_object_mut().unwrap().remove("task");
    out.push(("plan_generator_agent/input".to_owned(), context));
    for item in kwargs["collected_information"].as_array().unwrap() {
        let agent = item["agent_name"].as_str().unwrap();
        out.push((format!("{agent}/output"), item["output"].clone()));
    }
    out
}

#[test]
fn schema_and_type_agree() {
    let mut checked = 0;
    let mut known_seen: BTreeSet<String> = BTreeSet::new();
    let mut disagreements = Vec::new();
    let mut agree = |side: &Side, probe: &str, what: &str, instance: &Value| {
        checked += 1;
        let schema = side
            .contract
            .check(instance, &agent_contracts::Limits::default())
            .is_ok();
        let typed = (side.typed)(instance);
        let structure = side
            .structure
            .check(instance, &agent_contracts::Limits::default())
            .is_ok();
        let (line, known) = if schema && !typed {
            (
                format!(
                    "{}: {what}: the schema accepts it, the type refuses it",
                    side.label
                ),
                KNOWN_REFUSED.iter().any(|(p, _)| *p == probe),
            )
        } else if typed && !structure {
            (
                format!(
                    "{}: {what}: the type accepts it, the schema's structure refuses it",
                    side.label
                ),
                KNOWN_ACCEPTED.iter().any(|(p, _)| *p == probe),
            )
        } else {
            return;
        };
        if known {
            known_seen.insert(line);
        } else {
            disagreements.push(line);
        }
    };
    let sides = sides();
    for (label, instance) in fixtures() {
        let side = sides.iter().find(|s| s.label == label).unwrap();
        assert!(
            side.contract
                .check(&instance, &agent_contracts::Limits::default())
                .is_ok(),
            "{label} fixture"
        );
        agree(side, "", "fixture", &instance);
    }
    for side in &sides {
        let schema = side.contract.schema();
        let base = base_of(&side.label, schema);
        assert!(
            side.contract
                .check(&base, &agent_contracts::Limits::default())
                .is_ok(),
            "{}: the generated example is invalid: {base}",
            side.label
        );
        for (probe, what, instance) in variations(&base) {
            agree(side, &probe, &what, &instance);
        }
        // Not objects at all.
        for probe in ["null", "[]", "\"x\"", "1", "[{}]"] {
            agree(side, probe, probe, &serde_json::from_str(probe).unwrap());
        }
    }
    println!("{checked} instances checked");
    println!(
        "{} known disagreements (see KNOWN_REFUSED, KNOWN_ACCEPTED):",
        known_seen.len()
    );
    for line in &known_seen {
        println!("  {line}");
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

/// The generated checks are a sound stand-in for the validator: on every instance above,
/// when the typed input deserializes (through `agent_contracts::__private::deserialize_strict`) and the
/// checks pass, the validator accepts it. A valid instance the checks do not pass (a schema
/// part they leave to the validator) is the slow path: allowed, counted.
#[test]
fn generated_checks_agree_with_the_validator() {
    let sides = sides();
    let mut instances: Vec<(&Side, Value)> = Vec::new();
    for (label, instance) in fixtures() {
        let side = sides.iter().find(|s| s.label == label).unwrap();
        instances.push((side, instance));
    }
    for side in &sides {
        let schema = side.contract.schema();
        let base = base_of(&side.label, schema);
        instances.extend(variations(&base).into_iter().map(|(_, _, i)| (side, i)));
        for probe in ["null", "[]", "\"x\"", "1", "[{}]"] {
            instances.push((side, serde_json::from_str(probe).unwrap()));
        }
    }
    let (mut fast, mut slow, mut refused) = (0, 0, 0);
    let mut unsound = Vec::new();
    let mut slow_sides = BTreeSet::new();
    for (side, instance) in &instances {
        let valid = side
            .contract
            .check(instance, &agent_contracts::Limits::default())
            .is_ok();
        match (valid, (side.fast)(instance)) {
            (true, true) => fast += 1,
            (true, false) => {
                slow += 1;
                if std::env::var_os("SHOW_SLOW").is_some() {
                    println!("slow: {}: {instance}", side.label);
                }
                slow_sides.insert(side.label.clone());
            }
            (false, false) => refused += 1,
            (false, true) => unsound.push(format!("{}: {instance}", side.label)),
        }
    }
    println!(
        "{} instances: {fast} valid on the fast path, {slow} valid left to the validator (slow path), {refused} invalid refused, {} unsound",
        instances.len(),
        unsound.len()
    );
    println!("sides with a slow path: {slow_sides:?}");
    assert!(
        unsound.is_empty(),
        "the checks pass where the validator refuses:\n{}",
        unsound.join("\n")
    );
    // The fast path is taken: most valid instances never need the validator.
    assert!(fast > slow, "{fast} fast, {slow} slow");
}

/// How many of the project's contracts compile to checks with no node left to the validator.
#[test]
fn contracts_compiled_to_checks_are_counted() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let path = e.unwrap().path();
            ["input", "output"].map(|side| path.join(format!("{side}.schema.json")))
        })
        .filter(|p| p.exists())
        .collect();
    paths.sort();
    let (mut full, mut partial, mut untyped) = (0, 0, 0);
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let shown = path.display().to_string();
        match agent_contracts_codegen::generate_types(&text, &shown, "Root") {
            Ok(types) if types.unchecked.is_empty() => full += 1,
            Ok(types) => {
                partial += 1;
                println!("{shown}: left to the validator: {:?}", types.unchecked);
            }
            // Contracts that refer to a sibling file are typed by the build script only.
            Err(_) => untyped += 1,
        }
    }
    println!(
        "{} contracts: {full} fully compiled, {partial} with nodes left to the validator, {untyped} not typed alone (sibling refs)",
        paths.len()
    );
    assert!(full > 0);
}

#[test]
fn every_contract_of_schemas_is_covered() {
    let covered: BTreeSet<String> = sides().into_iter().map(|s| s.label).collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let agent = path.file_name().unwrap().to_string_lossy().into_owned();
        for side in ["input", "output"] {
            if path.join(format!("{side}.schema.json")).exists() {
                on_disk.insert(format!("{agent}/{side}"));
            }
        }
    }
    let missing: Vec<&String> = on_disk.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "contracts without agreement checks (add them to `sides`): {missing:?}"
    );
    // And every built-in agent is one of them.
    for agent in agents::AGENTS {
        assert!(covered.contains(&format!("{}/input", agent.name())));
    }
}

/// A value the schema accepts and the type refuses is still never taken silently: the
/// runtime's typed path returns the retry error.
#[test]
fn an_integral_float_is_an_integer() {
    let answer = json!({"overall_score": 1.0, "compliance_level": "AA", "issues": []});
    let contract = <agents::AccessibilityAgent as Agent>::output_contract().unwrap();
    assert!(
        contract
            .check(&answer, &agent_contracts::Limits::default())
            .is_ok()
    );
    assert!(
        DynAgent::check_output(
            &agents::AccessibilityAgent,
            &answer,
            &agent_contracts::Limits::default()
        )
        .is_ok()
    );
}
