//! Types every JSON-Schema-Test-Suite schema (draft 2020-12) the code generator accepts, as the
//! one required property `x` of a contract, into `OUT_DIR/suite.rs`: a module per schema and
//! a table of them.

use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;

/// The suite's schema as the required property `x` of an object root, its `$defs` hoisted to
/// the root (where contracts keep them), as `agent-codegen/tests/all/suite_schemas.rs` does.
fn as_contract(schema: &Value) -> String {
    let mut property = schema.clone();
    let mut root = json!({ "type": "object", "properties": {}, "required": ["x"] });
    if let Value::Object(p) = &mut property {
        if let Some(defs) = p.remove("$defs") {
            root["$defs"] = defs;
        }
        p.remove("$schema");
        p.remove("$id");
    }
    root["properties"]["x"] = property;
    serde_json::to_string_pretty(&root).unwrap()
}

/// Suite schemas whose generated types do not compile (code generator defects, reported
/// apart): left out here so the rest is checked.
const DOES_NOT_COMPILE: &[(&str, usize, &str)] = &[
    (
        "ref.json",
        14,
        "a `default` object on an untyped object (`RawObject`) is built with `collect`",
    ),
    (
        "required.json",
        3,
        "property names differing only in escapes (`foo\\nbar`, `foo\\\"bar`) become one field name",
    ),
];

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/JSON-Schema-Test-Suite/tests/draft2020-12");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut modules = String::new();
    let mut table = String::from("pub static SCHEMAS: &[Schema] = &[\n");
    let mut n = 0;
    for path in files {
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (i, group) in groups.as_array().unwrap().iter().enumerate() {
            if DOES_NOT_COMPILE
                .iter()
                .any(|(f, g, _)| *f == name && *g == i)
            {
                continue;
            }
            let contract = as_contract(&group["schema"]);
            let Ok(types) = agent_codegen::generate_types(&contract, &name, "Root") else {
                continue;
            };
            let tests = serde_json::to_string(&group["tests"]).unwrap();
            writeln!(
                modules,
                "#[allow(warnings, clippy::all)]\npub mod s{n} {{\n#[allow(unused_imports)]\nuse ::agent_core::__private::serde::{{Deserialize as _, Serialize as _}};\n{}\n}}",
                types.pretty()
            )
            .unwrap();
            writeln!(
                table,
                "    Schema {{ file: {name:?}, group: {i}, contract: {contract:?}, tests: {tests:?}, unchecked: &{:?}, fast: fast::<s{n}::Root> }},",
                types.unchecked
            )
            .unwrap();
            n += 1;
        }
    }
    table.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("suite.rs");
    std::fs::write(out, modules + &table).unwrap();
}
