//! Golden tests: the pretty-printed types for checked-in schemas must match
//! the checked-in `.rs` files byte for byte. Run with `UPDATE_GOLDEN=1` to
//! rewrite them after an intended change, then review the diff.

use std::path::PathBuf;

use agent_contracts_codegen::{ContractKind, TypeOptions, generate_types_with};

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

/// The partial types of every output contract of the project (`schemas/*/output.schema.json`),
/// each pinned in `tests/golden/partial/<agent>.rs`.
#[test]
fn partial_types_of_the_project_contracts() {
    let schemas = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mut names: Vec<String> = std::fs::read_dir(&schemas)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| schemas.join(name).join("output.schema.json").exists())
        .collect();
    names.sort();
    assert_eq!(names.len(), 10);
    let mut differ = Vec::new();
    for name in names {
        let path = schemas.join(&name).join("output.schema.json");
        let schema = std::fs::read_to_string(&path).unwrap();
        let root: String = name
            .split('_')
            .map(|w| w[..1].to_uppercase() + &w[1..])
            .collect::<String>()
            + "Output";
        let options = TypeOptions {
            kind: ContractKind::Output,
            ..TypeOptions::default()
        };
        let generated = generate_types_with(&schema, &path.display().to_string(), &root, &options)
            .unwrap_or_else(|errors| panic!("{name} rejected: {errors:#?}"));
        let actual = generated.pretty_partial();
        assert!(actual.contains(&format!(
            "impl ::agent_contracts::__private::PartialOutput for {root}"
        )));
        let golden = golden_dir().join("partial").join(format!("{name}.rs"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, actual).unwrap();
            continue;
        }
        if std::fs::read_to_string(&golden).ok().as_deref() != Some(actual) {
            differ.push(golden.display().to_string());
        }
    }
    assert!(
        differ.is_empty(),
        "{differ:?} differ from the generated code (run with UPDATE_GOLDEN=1 and review the diff)"
    );
}
