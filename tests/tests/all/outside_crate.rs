//! The new crate of issue 55, written the way a user writes it outside the repository
//! (`tests/fixtures/triage_crate`): a classifier whose output has a bounded string (a newtype),
//! an enum and an optional nested object, a drafter whose input `$ref`s it, and a producer
//! whose types live under `$defs` with a consumer that `$ref`s both the whole file and one of
//! its definitions. The crate derives the four agents (`types` naming the generated module's
//! type for one, the agent module's re-export for the other) and generates them again with the
//! build script; its `main` only compiles if each consumer's fields are the producer's types,
//! and runs the pipeline on both routes. `Builder::check`, what `agent-contract check` prints,
//! agrees: nothing to report.
//!
//! The crate is copied under `CARGO_TARGET_TMPDIR` with a `[workspace]` of its own, built with
//! cargo (`--offline`, this workspace's `Cargo.lock`) into the target folder the `rebuild`
//! scratch crates use, so the dependencies are compiled once for both; it must build without
//! a warning (no unread `task`, no unused import in the generated code).

use std::path::{Path, PathBuf};
use std::process::Command;

const EXPECTED: &str = "\
derived: Reply to a billing ticket: Charged twice
Order A-17
 => We refunded the second charge.
derived: [\"Lyon\", \"Paris\"] Ship to Lyon, else to Paris
built: Reply to a billing ticket: Charged twice
Order A-17
 => We refunded the second charge.
built: [\"Lyon\", \"Paris\"] Ship to Lyon, else to Paris
";

#[test]
fn a_crate_of_ones_own_shares_types_through_the_derive_and_the_build_script() {
    let dir = scratch_crate("triage_crate");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rebuild");
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--offline"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", tmp.join("target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the crate failed:\n{stderr}");
    assert!(!stderr.contains("warning"), "the crate warned:\n{stderr}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), EXPECTED);

    let checks = agent_contracts_codegen::Builder::new("schemas")
        .manifest_dir(&dir)
        .check()
        .unwrap();
    let verdicts: Vec<(&str, usize, usize)> = checks
        .iter()
        .map(|c| (c.name.as_str(), c.errors.len(), c.warnings.len()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("address_agent", 0, 0),
            ("classifier_agent", 0, 0),
            ("drafter_agent", 0, 0),
            ("shipper_agent", 0, 0)
        ],
        "{checks:#?}"
    );
}

/// The fixture crate `name` copied under `CARGO_TARGET_TMPDIR`, with a manifest naming this
/// workspace's crates by path and this workspace's `Cargo.lock`.
fn scratch_crate(name: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rebuild")
        .join(name);
    let _ = std::fs::remove_dir_all(dir.join("src"));
    let _ = std::fs::remove_dir_all(dir.join("schemas"));
    let _ = std::fs::remove_dir_all(dir.join("templates"));
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
        &dir,
    );
    let path = |krate: &str| workspace.join(krate).display().to_string();
    // `[workspace]`: the crate sits under this workspace's folder, not in it.
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nagent-contracts = {{ path = {:?} }}\nserde_json = \"1\"\n\
         tokio = {{ version = \"1\", features = [\"macros\", \"rt\"] }}\n\n\
         [build-dependencies]\nagent-contracts-codegen = {{ path = {:?} }}\n\n[workspace]\n",
        path("agent-contracts"),
        path("agent-codegen"),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
