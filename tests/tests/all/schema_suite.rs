//! The official JSON-Schema-Test-Suite, draft 2020-12, through the project's own validator
//! configuration: `agent_contracts::Contract::new(.., schema)` and then `check`, exactly as every
//! agent's contract runs (offline, patterns on the linear-time `regex` engine).
//!
//! The suite is vendored under `tests/fixtures/JSON-Schema-Test-Suite/` (with its LICENSE; see
//! VENDORED.md there). Every required test must pass, except the cases listed in [`SKIPPED`]
//! with their reason. The optional tests, and the optional `format` tests apart, are run and
//! counted but never fail the build: formats are annotations in 2020-12 and contracts do not
//! assert them.
//!
//! The suite's remote documents (`http://localhost:1234/...`) are its `remotes/` folder, served
//! from memory through `Contract::with_documents`: nothing is fetched (contracts are offline),
//! and schemas that do not name a remote go through `Contract::new`.

use agent_contracts::{Contract, contract::ContractKind};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/JSON-Schema-Test-Suite")
}

/// Where the suite's remote documents live; `remotes/<path>` is `REMOTE/<path>`.
const REMOTE: &str = "http://localhost:1234";

/// The suite's `remotes/` folder, as `(URI, document)` pairs.
fn remotes() -> Vec<(String, Value)> {
    let root = suite().join("remotes");
    let mut documents = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "json") {
                let relative = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let document =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                documents.push((format!("{REMOTE}/{relative}"), document));
            }
        }
    }
    documents
}

/// `(file, case description, reason)`: required cases this project does not run, and why.
const SKIPPED: &[(&str, &str, &str)] = &[];

/// Pass and fail counts of a set of suite files, with the failures described.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    skipped: Vec<String>,
    /// Cases whose instance, validated on its tape (as a call's context is, without its
    /// `Value`), got another verdict or another retry error than its `Value`: none may.
    tape: Vec<String>,
    /// How many cases were validated on their tape.
    on_tape: usize,
}

impl Tally {
    fn total(&self) -> usize {
        self.passed + self.failed.len()
    }
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn run_files(files: &[PathBuf], skipped: &[(&str, &str, &str)]) -> Tally {
    let mut tally = Tally::default();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
        for case in &cases {
            let description = case["description"].as_str().unwrap();
            let tests = case["tests"].as_array().unwrap();
            if let Some((_, _, reason)) = skipped
                .iter()
                .find(|(f, d, _)| *f == file && *d == description)
            {
                tally.skipped.push(format!(
                    "{file}: {description} ({} tests): {reason}",
                    tests.len()
                ));
                continue;
            }
            let schema = case["schema"].clone();
            let contract = if schema.to_string().contains(REMOTE) {
                Contract::with_documents("suite", ContractKind::Input, schema, remotes())
            } else {
                Contract::new("suite", ContractKind::Input, schema)
            };
            for test in tests {
                let name = format!(
                    "{file}: {description}: {}",
                    test["description"].as_str().unwrap()
                );
                let expected = test["valid"].as_bool().unwrap();
                let outcome = match &contract {
                    Ok(contract) => {
                        let limits = agent_contracts::Limits::default();
                        let by_value = contract.check(&test["data"], &limits);
                        for text in [
                            test["data"].to_string(),
                            serde_json::to_string_pretty(&test["data"]).unwrap(),
                        ] {
                            tally.on_tape += 1;
                            let on_tape = contract.check_text(&text, &limits);
                            if on_tape.as_ref() != Some(&by_value) {
                                tally.tape.push(format!(
                                    "{name}: {text}: on the tape {on_tape:?}, as a Value {by_value:?}"
                                ));
                            }
                        }
                        let valid = by_value.is_ok();
                        (valid == expected).then_some(()).ok_or_else(|| {
                            format!("{name}: expected valid = {expected}, got {valid}")
                        })
                    }
                    Err(e) => Err(format!("{name}: the schema does not compile: {e}")),
                };
                match outcome {
                    Ok(()) => tally.passed += 1,
                    Err(failure) => tally.failed.push(failure),
                }
            }
        }
    }
    tally
}

/// Every instance validated on its tape got its `Value`'s verdict and retry error.
fn assert_tape_agrees(tally: &Tally) {
    assert!(tally.on_tape > 0);
    assert!(
        tally.tape.is_empty(),
        "{} of {} disagree:\n{}",
        tally.tape.len(),
        tally.on_tape,
        tally.tape.join("\n")
    );
}

fn report(what: &str, tally: &Tally) {
    println!(
        "{what}: {} passed, {} failed, {} skipped cases (of {} tests run)",
        tally.passed,
        tally.failed.len(),
        tally.skipped.len(),
        tally.total()
    );
    for skipped in &tally.skipped {
        println!("  skipped: {skipped}");
    }
}

#[test]
fn required_tests_pass() {
    let files = json_files(&suite().join("tests/draft2020-12"));
    assert!(files.len() >= 45, "{} files", files.len());
    let tally = run_files(&files, SKIPPED);
    assert_tape_agrees(&tally);
    report("draft 2020-12, required", &tally);
    assert!(tally.passed >= 1200, "{} passed", tally.passed);
    assert!(
        tally.failed.is_empty(),
        "{} required tests failed:\n{}",
        tally.failed.len(),
        tally.failed.join("\n")
    );
}

#[test]
fn optional_tests_are_counted() {
    let files = json_files(&suite().join("tests/draft2020-12/optional"));
    let tally = run_files(&files, &[]);
    assert_tape_agrees(&tally);
    report("draft 2020-12, optional (not format)", &tally);
    for failure in &tally.failed {
        println!("  failed: {failure}");
    }
    assert!(tally.total() > 0);
}

#[test]
fn optional_format_tests_are_counted() {
    let files = json_files(&suite().join("tests/draft2020-12/optional/format"));
    let tally = run_files(&files, &[]);
    assert_tape_agrees(&tally);
    report("draft 2020-12, optional format", &tally);
    // Formats are annotations in 2020-12: a contract accepts a string whatever its format, so
    // the tests that expect a badly formatted string to be refused are the failures.
    let mut per_file: std::collections::BTreeMap<&str, usize> = Default::default();
    for failure in &tally.failed {
        let file = failure.split(':').next().unwrap_or_default();
        *per_file.entry(file).or_default() += 1;
    }
    for (file, failed) in per_file {
        println!("  {file}: {failed} failed");
    }
    assert!(tally.total() > 0);
    let refused_valid: Vec<&String> = tally
        .failed
        .iter()
        .filter(|f| !f.ends_with("expected valid = false, got true"))
        .collect();
    assert!(
        refused_valid.is_empty(),
        "a contract refused a well-formatted value:\n{refused_valid:#?}"
    );
}
