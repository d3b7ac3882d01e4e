//! Code generation time for the workspace's own contracts (`schemas/`, the event-planning and
//! plan-pipeline agents): what a build script or `#[derive(Agent)]` spends in agent-codegen.
//!
//! ```sh
//! cargo bench -p agent-codegen --bench generate
//! ```
//!
//! `types` runs `generate_types_with` on each contract (typed and printed, as the goldens read
//! them); `builder` runs the whole build-script front end on the folder (every agent's types,
//! the template checks and the pretty-printed file that `build.rs` writes).

use std::path::{Path, PathBuf};

use agent_contracts_codegen::{Builder, ContractKind, TypeOptions, generate_types_with};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every contract of `schemas/` as `(origin, text, root type name, kind)`, in name order.
fn contracts() -> Vec<(String, String, String, ContractKind)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace().join("schemas"))
        .expect("schemas/ is readable")
        .map(|entry| entry.expect("schemas/ entry").path())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        for (file, kind, suffix) in [
            ("input.schema.json", ContractKind::Input, "Input"),
            ("output.schema.json", ContractKind::Output, "Output"),
        ] {
            let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
                continue;
            };
            let origin = dir.join(file).display().to_string();
            out.push((origin, text, format!("Root{suffix}"), kind));
        }
    }
    out
}

/// Every contract's types.
#[divan::bench(sample_count = 20)]
fn types(bencher: Bencher) {
    let contracts = contracts();
    bencher.bench(|| {
        let printed = contracts.iter().map(|(origin, text, root, kind)| {
            let options = TypeOptions {
                kind: *kind,
                ..TypeOptions::default()
            };
            let types = generate_types_with(text, origin, root, &options).expect("contract types");
            types.pretty().len()
        });
        black_box(printed.sum::<usize>())
    });
}

/// The build-script front end on `schemas/`, as `examples/build.rs` runs it.
#[divan::bench(sample_count = 20)]
fn builder(bencher: Bencher) {
    let builder = Builder::new("../schemas").manifest_dir(workspace().join("examples"));
    bencher.bench(|| black_box(builder.generate().expect("schemas/ generates").len()));
}
