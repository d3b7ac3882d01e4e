//! The generated checks against the validator, on every JSON-Schema-Test-Suite case whose
//! schema the code generator types, plus generated instances: whenever the typed value
//! deserializes and the checks pass, the validator must accept the instance. A valid instance
//! the fast path does not take (a schema part left to the validator, a number the type does
//! not hold) is the slow path: allowed, and counted.

use agent_checks_suite::{SCHEMAS, Schema};
use agent_contracts::{Contract, contract::ContractKind};
use serde_json::{Value, json};

/// Values put in place of the suite's data, and of every value inside it.
pub(crate) fn probes() -> Vec<Value> {
    let texts = [
        "null",
        "true",
        "false",
        "0",
        "-1",
        "1",
        "1.0",
        "1.5",
        "2",
        "3",
        "10",
        "-0.0",
        "1e300",
        "9007199254740993",
        "18446744073709551616",
        "\"\"",
        "\"a\"",
        "\"foo\"",
        "\"é😀\"",
        "\"1\"",
        "\"aaa\"",
        "[]",
        "[1]",
        "[1, 1]",
        "[1, 1.0]",
        "[\"a\", 2]",
        "[[]]",
        "[{}]",
        "{}",
        "{\"a\": 1}",
        "{\"foo\": null}",
        "{\"foo\": \"bar\"}",
        "{\"a\": [], \"b\": {}}",
    ];
    texts
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect()
}

/// A small deterministic generator (xorshift): the same instances on every run.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `value` with the node at a random position replaced by a probe or by a random value.
pub(crate) fn mutate(value: &Value, rng: &mut Rng, probes: &[Value], depth: usize) -> Value {
    let replace = depth > 3 || rng.below(3) == 0;
    match value {
        Value::Array(items) if !replace && !items.is_empty() => {
            let mut items = items.clone();
            let i = rng.below(items.len());
            match rng.below(4) {
                0 => {
                    items.remove(i);
                }
                1 => items.push(items[i].clone()),
                _ => items[i] = mutate(&items[i], rng, probes, depth + 1),
            }
            Value::Array(items)
        }
        Value::Object(map) if !replace && !map.is_empty() => {
            let mut map = map.clone();
            let key = map.keys().nth(rng.below(map.len())).unwrap().clone();
            match rng.below(4) {
                0 => {
                    map.remove(&key);
                }
                1 => {
                    map.insert(format!("{key}x"), probes[rng.below(probes.len())].clone());
                }
                _ => {
                    let child = mutate(&map[&key], rng, probes, depth + 1);
                    map.insert(key, child);
                }
            }
            Value::Object(map)
        }
        _ => probes[rng.below(probes.len())].clone(),
    }
}

#[derive(Default)]
struct Tally {
    fast: usize,
    slow: usize,
    refused: usize,
    unsound: Vec<String>,
}

impl Tally {
    fn record(&mut self, schema: &Schema, contract: &Contract, data: &Value, what: &str) {
        let instance = if schema.wrapped {
            json!({ "x": data })
        } else {
            data.clone()
        };
        let valid = contract
            .check(&instance, &agent_contracts::Limits::default())
            .is_ok();
        match (valid, (schema.fast)(&instance)) {
            (true, true) => self.fast += 1,
            (true, false) => self.slow += 1,
            (false, false) => self.refused += 1,
            (false, true) => self.unsound.push(format!(
                "{}#{} {what}: {data}: the checks pass, the validator refuses",
                schema.file, schema.group
            )),
        }
    }
}

#[test]
fn generated_checks_never_accept_what_the_validator_refuses() {
    let probes = probes();
    let mut suite = Tally::default();
    let mut generated = Tally::default();
    let mut suite_slow_on_compiled = Vec::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let compiled = SCHEMAS.iter().filter(|s| s.unchecked.is_empty()).count();
    for schema in SCHEMAS {
        let contract = Contract::from_json_str("suite", ContractKind::Input, schema.contract)
            .unwrap_or_else(|e| panic!("{}#{}: {e}", schema.file, schema.group));
        let tests: Vec<Value> = serde_json::from_str(schema.tests).unwrap();
        for test in &tests {
            let data = &test["data"];
            let before = suite.slow;
            suite.record(
                schema,
                &contract,
                data,
                test["description"].as_str().unwrap_or(""),
            );
            if suite.slow > before && schema.unchecked.is_empty() {
                suite_slow_on_compiled.push(format!("{}#{}: {data}", schema.file, schema.group));
            }
            for _ in 0..20 {
                let instance = mutate(data, &mut rng, &probes, 0);
                generated.record(schema, &contract, &instance, "generated");
            }
        }
        for probe in &probes {
            generated.record(schema, &contract, probe, "probe");
        }
    }
    println!(
        "{} suite schemas typed; checks fully compiled for {compiled}, partly left to the validator for {}",
        SCHEMAS.len(),
        SCHEMAS.len() - compiled
    );
    for (what, tally) in [("suite cases", &suite), ("generated instances", &generated)] {
        println!(
            "{what}: {} valid on the fast path, {} valid left to the validator (slow path), {} invalid refused, {} unsound",
            tally.fast,
            tally.slow,
            tally.refused,
            tally.unsound.len()
        );
    }
    println!("slow-path suite cases of fully compiled schemas (the type refuses them):");
    for line in &suite_slow_on_compiled {
        println!("  {line}");
    }
    let unsound: Vec<&String> = suite.unsound.iter().chain(&generated.unsound).collect();
    assert!(
        unsound.is_empty(),
        "{} unsound verdicts:\n{}",
        unsound.len(),
        unsound
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(suite.fast > 0 && generated.fast > 0);
}
