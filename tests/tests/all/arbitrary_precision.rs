//! A user's crate that turned on serde_json's `arbitrary_precision` itself still reads integral
//! floats (`"service_id": 2.0`) into integer fields, as the validator accepts them.
//!
//! The feature changes serde_json for a whole build, so the crate (`tests/arbitrary-precision`)
//! is outside this workspace and built here on its own by cargo (`--offline`, with this
//! workspace's `Cargo.lock`, so nothing is fetched and versions match), in a target directory
//! kept between runs under `CARGO_TARGET_TMPDIR`: only the first run compiles the dependencies.

use std::path::Path;
use std::process::Command;

#[test]
fn a_build_with_arbitrary_precision_reads_integral_floats_into_integers() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let krate = workspace.join("tests/arbitrary-precision");
    let lock = std::fs::read_to_string(workspace.join("Cargo.lock")).unwrap();
    std::fs::write(krate.join("Cargo.lock"), lock).unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["test", "--offline", "--manifest-path"])
        .arg(krate.join("Cargo.toml"))
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("arbitrary-precision"),
        )
        // No debug info: the dependencies build faster and take less room.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the arbitrary_precision crate's tests failed:\n{stdout}\n{stderr}"
    );
    // Its three tests ran (none filtered out or skipped).
    assert!(
        stdout.contains("test result: ok. 3 passed; 0 failed"),
        "{stdout}"
    );
}
