//! Golden tests: the pretty-printed types for checked-in schemas must match
//! the checked-in `.rs` files byte for byte. Run with `UPDATE_GOLDEN=1` to
//! rewrite them after an intended change, then review the diff.

use std::path::PathBuf;

use agent_codegen::{ContractKind, TypeOptions, generate_types_with};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Generates `<name>.schema.json` and compares with `<name>.rs`.
fn check_golden(name: &str, root_name: &str, kind: ContractKind) {
    let dir = golden_dir();
    let schema_path = dir.join(format!("{name}.schema.json"));
    let schema = std::fs::read_to_string(&schema_path).expect("golden schema is readable");
    let options = TypeOptions {
        kind,
        ..TypeOptions::default()
    };
    let generated = generate_types_with(
        &schema,
        &schema_path.display().to_string(),
        root_name,
        &options,
    )
    .unwrap_or_else(|errors| panic!("golden schema rejected: {errors:#?}"));
    let actual = generated.pretty();
    let golden_path = dir.join(format!("{name}.rs"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden_path, actual).expect("golden file is writable");
        return;
    }
    let expected = std::fs::read_to_string(&golden_path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", golden_path.display()));
    assert!(
        expected == actual,
        "{} differs from the generated code (run with UPDATE_GOLDEN=1 and review the diff)",
        golden_path.display()
    );
}

#[test]
fn plan_generator_input() {
    check_golden(
        "plan_generator_agent_input",
        "PlanGeneratorAgentInput",
        ContractKind::Input,
    );
}

#[test]
fn plan_generator_output() {
    check_golden(
        "plan_generator_agent_output",
        "PlanGeneratorAgentOutput",
        ContractKind::Output,
    );
}

#[test]
fn kitchen_sink() {
    check_golden("kitchen_sink", "KitchenSink", ContractKind::Input);
}
