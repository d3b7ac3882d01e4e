//! `agent-contract bench`, run as a process: one JSON line with the documented keys.

use assert_cmd::Command;

const KWARGS: &str = "../tests/fixtures/plan_generator/kwargs.json";

fn cli() -> Command {
    let mut command = Command::cargo_bin("agent-contract").unwrap();
    command.args(["--schemas", "../schemas"]);
    command
}

fn bench(args: &[&str]) -> serde_json::Map<String, serde_json::Value> {
    let out = cli().arg("bench").args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    value.as_object().unwrap().clone()
}

fn assert_report(report: &serde_json::Map<String, serde_json::Value>, bytes: Option<u64>) {
    let keys: Vec<&str> = report.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        // Sorted, as the parsed `Value` holds them.
        [
            "agent",
            "bytes",
            "floor_ns",
            "iterations",
            "lex_ns",
            "pipeline_ns",
            "ratio"
        ]
    );
    assert_eq!(report["agent"], "plan_generator_agent");
    if let Some(bytes) = bytes {
        assert_eq!(report["bytes"].as_u64(), Some(bytes));
    }
    assert_eq!(report["iterations"].as_u64(), Some(2));
    for key in ["floor_ns", "lex_ns", "pipeline_ns"] {
        assert!(report[key].as_u64().is_some(), "{key}: {}", report[key]);
    }
    assert!(
        report["ratio"].as_f64().unwrap() > 0.0,
        "{}",
        report["ratio"]
    );
}

#[test]
fn bench_prints_one_json_line_of_medians() {
    let size = std::fs::metadata(KWARGS).unwrap().len();
    let report = bench(&[
        "plan_generator_agent",
        KWARGS,
        "--iterations",
        "2",
        "--rounds",
        "3",
    ]);
    assert_report(&report, Some(size));
}

#[test]
fn bench_times_the_retry_path() {
    let out = cli()
        .args([
            "bench",
            "plan_generator_agent",
            KWARGS,
            "--without",
            "target_url",
            "--iterations",
            "2",
            "--rounds",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "agent-contract: the kwargs break the contract: timed the retry path\n"
    );
    let report = bench(&[
        "plan_generator_agent",
        KWARGS,
        "--without",
        "target_url",
        "--iterations",
        "2",
        "--rounds",
        "1",
    ]);
    assert_report(&report, None);
    assert!(report["bytes"].as_u64() > Some(0));
}

#[test]
fn bench_usage_errors_exit_2() {
    let out = cli()
        .args(["bench", "no_such_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = cli()
        .args([
            "bench",
            "plan_generator_agent",
            KWARGS,
            "--without",
            "no_such_key",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_key"));
}
