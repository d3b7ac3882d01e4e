//! The verdict-only read against the validator: every JSON-Schema-Test-Suite schema (typed or
//! not), every project contract and real-world tool schema the verdict compiler accepts, run
//! on the tape of each suite case, of generated instances and of probes. A verdict is JSON
//! Schema's own answer, so it must agree with the validator both ways; the only allowed
//! disagreement is "cannot tell" (a number no `f64` holds exactly), which answers `false`
//! and leaves the call to the validator.

use agent_checks_suite::verdicts::VERDICTS;
use agent_contracts::__private::checks::text_verdict;
use agent_contracts::{Contract, Limits, contract::ContractKind};
use serde_json::Value;

use crate::differential::{Rng, mutate, probes};

/// Numbers the verdict may leave undecided: integers past 2^53 and their floats.
fn undecidable(value: &Value) -> bool {
    match value {
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|f| f.abs() >= 9_007_199_254_740_992.0),
        Value::Array(items) => items.iter().any(undecidable),
        Value::Object(map) => map.values().any(undecidable),
        _ => false,
    }
}

#[derive(Default)]
struct Tally {
    agree: usize,
    valid: usize,
    no_tape: usize,
    undecided: usize,
    wrong: Vec<String>,
}

#[test]
fn verdicts_agree_with_the_validator_both_ways() {
    let probes = probes();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut tally = Tally::default();
    let (mut compiled, mut not_compiled) = (0, Vec::new());
    for entry in VERDICTS {
        let verdict = match entry.verdict {
            Ok(verdict) => verdict,
            Err(why) => {
                not_compiled.push(format!("{}#{}: {why}", entry.file, entry.group));
                continue;
            }
        };
        let Ok(contract) = Contract::from_json_str("suite", ContractKind::Input, entry.schema)
        else {
            continue;
        };
        compiled += 1;
        let tests: Vec<Value> = serde_json::from_str(entry.tests).unwrap();
        let mut instances: Vec<Value> = probes.clone();
        for test in &tests {
            instances.push(test["data"].clone());
            for _ in 0..20 {
                instances.push(mutate(&test["data"], &mut rng, &probes, 0));
            }
        }
        for data in instances {
            let text = serde_json::to_string(&data).unwrap();
            let valid = contract.check(&data, &Limits::default()).is_ok();
            match text_verdict(&text, verdict) {
                None => tally.no_tape += 1,
                Some(answer) if answer == valid => {
                    tally.agree += 1;
                    tally.valid += usize::from(valid);
                }
                Some(false) if undecidable(&data) => tally.undecided += 1,
                Some(answer) => tally.wrong.push(format!(
                    "{}#{}: {text}: the verdict says {answer}, the validator {valid}",
                    entry.file, entry.group
                )),
            }
        }
    }
    println!(
        "{} schemas: {compiled} with a verdict, {} without; instances: {} agree ({} valid), {} undecided, {} without a tape",
        VERDICTS.len(),
        not_compiled.len(),
        tally.agree,
        tally.valid,
        tally.undecided,
        tally.no_tape
    );
    for line in &not_compiled {
        println!("  no verdict: {line}");
    }
    assert!(
        tally.wrong.is_empty(),
        "{} verdicts disagree with the validator:\n{}",
        tally.wrong.len(),
        tally.wrong.join("\n")
    );
    // Most of the suite compiles, and the cases exercise both answers.
    assert!(compiled >= 200, "only {compiled} schemas have a verdict");
    assert!(tally.valid > 2_000 && tally.agree - tally.valid > 2_000);
}
