//! Types every JSON-Schema-Test-Suite schema (draft 2020-12) the code generator accepts, as the
//! one required property `x` of a contract, into `OUT_DIR/suite.rs`: a module per schema and
//! a table of them. The project's contracts (`schemas/*/`, those without a `$ref` to another
//! file, which only the build script's bundling resolves), the real-world tool schemas of
//! `tests/fixtures/realworld/` and this crate's `bounds.schema.json` (every typed keyword on
//! every Rust type the checks know) go in the same table, as contracts of their own.

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

/// A module and a table row for one contract; `wrapped` when the instance is `{"x": data}`.
struct Table {
    modules: String,
    rows: String,
    n: usize,
}

impl Table {
    fn add(
        &mut self,
        name: &str,
        group: usize,
        contract: &str,
        tests: &str,
        wrapped: bool,
    ) -> bool {
        let Ok(types) = agent_contracts_codegen::generate_types(contract, name, "Root") else {
            return false;
        };
        let n = self.n;
        writeln!(
            self.modules,
            "#[allow(warnings, clippy::all)]\npub mod s{n} {{\n#[allow(unused_imports)]\nuse ::agent_contracts::__private::serde::{{Deserialize as _, Serialize as _}};\n{}\n}}",
            types.pretty()
        )
        .unwrap();
        writeln!(
            self.rows,
            "    Schema {{ file: {name:?}, group: {group}, contract: {contract:?}, tests: {tests:?}, unchecked: &{:?}, wrapped: {wrapped}, fast: fast::<s{n}::Root>, checks: checks::<s{n}::Root> }},",
            types.unchecked
        )
        .unwrap();
        self.n += 1;
        true
    }
}

/// Every schema's verdict-only read (`agent_contracts_codegen::verdict_fn`), typed or not: a function
/// each, and a table row with the schema's cases; the schemas it does not compile listed.
struct Verdicts {
    modules: String,
    rows: String,
    n: usize,
}

impl Default for Verdicts {
    fn default() -> Self {
        Self {
            modules: String::new(),
            rows: String::from("pub static VERDICTS: &[Verdict] = &[\n"),
            n: 0,
        }
    }
}

impl Verdicts {
    fn add(&mut self, file: &str, group: usize, schema: &Value, tests: &Value) {
        // The suite's own `$id`s name the document; the contracts this reads have none.
        let mut schema = schema.clone();
        if let Value::Object(o) = &mut schema {
            o.remove("$id");
        }
        let text = serde_json::to_string_pretty(&schema).unwrap();
        let tests = serde_json::to_string(tests).unwrap();
        let n = self.n;
        let verdict = match agent_contracts_codegen::verdict_fn(&text, &format!("v{n}")) {
            Ok(function) => {
                self.modules.push_str("#[allow(warnings, clippy::all)]\n");
                self.modules.push_str(&function);
                format!("Ok(v{n})")
            }
            Err(why) => format!("Err({why:?})"),
        };
        writeln!(
            self.rows,
            "    Verdict {{ file: {file:?}, group: {group}, schema: {text:?}, tests: {tests:?}, verdict: {verdict} }},"
        )
        .unwrap();
        self.n += 1;
    }
}

/// The `*.schema.json` files of `dir`, sorted.
fn schema_files(dir: &Path) -> Vec<std::path::PathBuf> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    files.sort();
    files
}

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut table = Table {
        modules: String::new(),
        rows: String::from("pub static SCHEMAS: &[Schema] = &[\n"),
        n: 0,
    };
    let dir = manifest.join("../fixtures/JSON-Schema-Test-Suite/tests/draft2020-12");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut verdicts = Verdicts::default();
    for path in files {
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (i, group) in groups.as_array().unwrap().iter().enumerate() {
            verdicts.add(&name, i, &group["schema"], &group["tests"]);
            if DOES_NOT_COMPILE
                .iter()
                .any(|(f, g, _)| *f == name && *g == i)
            {
                continue;
            }
            let contract = as_contract(&group["schema"]);
            let tests = serde_json::to_string(&group["tests"]).unwrap();
            table.add(&name, i, &contract, &tests, true);
        }
    }
    // The project's contracts: every agent's input and output.
    let mut agents: Vec<_> = std::fs::read_dir(manifest.join("../../schemas"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    agents.sort();
    for agent in agents {
        for path in schema_files(&agent) {
            let text = std::fs::read_to_string(&path).unwrap();
            if text.contains("\"$ref\": \".") {
                continue;
            }
            let name = format!(
                "schemas/{}/{}",
                agent.file_name().unwrap().to_string_lossy(),
                path.file_name().unwrap().to_string_lossy()
            );
            assert!(
                table.add(&name, 0, &text, "[]", false),
                "{name} is not typed"
            );
            verdicts.add(&name, 0, &serde_json::from_str(&text).unwrap(), &json!([]));
        }
    }
    // The real-world tool schemas, and this crate's bounds.
    let realworld = manifest.join("../fixtures/realworld");
    for path in schema_files(&realworld)
        .into_iter()
        .chain([manifest.join("bounds.schema.json")])
    {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            table.add(&name, 0, &text, "[]", false),
            "{name} is not typed"
        );
        verdicts.add(&name, 0, &serde_json::from_str(&text).unwrap(), &json!([]));
    }
    table.rows.push_str("];\n");
    verdicts.rows.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("suite.rs"), table.modules + &table.rows).unwrap();
    std::fs::write(out.join("verdicts.rs"), verdicts.modules + &verdicts.rows).unwrap();
}
