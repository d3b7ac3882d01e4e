//! The convention every binary keeps, on `agent-contract`: exit 0, 1 and 2; `--help` states
//! them and lists the environment variables (never a secret's value); `--version`; shell
//! completions.

use assert_cmd::Command;

const SCHEMAS: &str = "../schemas";

fn cli() -> Command {
    let mut command = Command::cargo_bin("agent-contract").unwrap();
    command.env_remove("AGENT_CONTRACT_SCHEMAS");
    command
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn each_exit_code_means_one_thing() {
    // 0: success.
    let out = cli()
        .args(["--schemas", SCHEMAS, "validate", "discovery_agent"])
        .write_stdin(r#"{"task": "Scan", "target_url": "https://a.example/"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // 1: the input broke the contract (its retry error on stdout, nothing on stderr).
    let out = cli()
        .args(["--schemas", SCHEMAS, "validate", "discovery_agent"])
        .write_stdin(r#"{"task": "Scan"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("\"missing_fields\""));
    assert!(out.stderr.is_empty());
    // 2: a usage error, clap's own or ours, and an I/O error.
    for args in [
        &["frobnicate"][..],
        &["validate"],
        &["tool", "discovery_agent", "--format", "xml"],
        &["--schemas", SCHEMAS, "validate", "no_such_agent"],
        &["--schemas", "/no/such/folder", "list"],
        &[
            "--schemas",
            SCHEMAS,
            "validate",
            "discovery_agent",
            "/no/such.json",
        ],
    ] {
        let out = cli().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn help_states_the_exit_codes_and_the_environment() {
    let help = |args: &[&str]| {
        let out = cli()
            .args(args)
            .env("OPENAI_API_KEY", "sk-never-shown-0123456789")
            .env("AGENT_CONTRACT_MCP_TOKEN", "token-never-shown-0123456789")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        stdout(&out)
    };
    let convention = "Exit status:\n  0  success\n  1  the input broke a contract, a check found problems, or a run failed\n  2  a usage or I/O error";
    for sub in [
        "check",
        "list",
        "tool",
        "render",
        "validate",
        "bench",
        "mcp",
        "completions",
    ] {
        let text = help(&[sub, "--help"]);
        assert!(text.contains(convention), "{sub}: {text}");
        // clap wraps lines at the terminal's width: one space between words.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("[env: AGENT_CONTRACT_SCHEMAS="),
            "{sub}: {text}"
        );
        assert!(text.contains("[env: RUST_LOG="), "{sub}: {text}");
    }
    let text = help(&["--help"]);
    assert!(text.contains(convention), "{text}");
    for sub in [
        "check",
        "list",
        "tool",
        "render",
        "validate",
        "bench",
        "mcp",
        "completions",
    ] {
        assert!(text.contains(&format!("\n  {sub} ")), "{sub}: {text}");
    }
    let text = help(&["mcp", "--help"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for var in [
        "AGENT_CONTRACT_MCP_TOKEN",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_AD_TOKEN",
        "OPENAI_API_VERSION",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "AGENT_CONTRACT_REQUEST_TIMEOUT",
    ] {
        assert!(text.contains(&format!("[env: {var}")), "{var}: {text}");
    }
    // A secret's variable is named, its value never shown.
    assert!(text.contains("[env: OPENAI_API_KEY]"), "{text}");
    for secret in ["sk-never-shown", "token-never-shown"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
}

#[test]
fn version() {
    let out = cli().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        format!("agent-contract {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn completions_for_each_shell() {
    let out = cli().args(["completions", "bash"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let script = stdout(&out);
    assert!(
        script.contains("complete -F _agent__contract") && script.contains("agent-contract"),
        "{script}"
    );
    for word in [
        "check",
        "list",
        "tool",
        "render",
        "validate",
        "bench",
        "mcp",
        "completions",
        "--schemas",
    ] {
        assert!(script.contains(word), "{word}");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = cli().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(stdout(&out).contains("validate"), "{shell}");
    }
    let out = cli().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The folder is `--schemas`, else `AGENT_CONTRACT_SCHEMAS`, else `schemas` in the current
/// folder.
#[test]
fn the_folder_comes_from_the_flag_the_variable_or_the_current_folder() {
    let expected = stdout(&cli().args(["--schemas", SCHEMAS, "list"]).output().unwrap());
    assert!(expected.starts_with("accessibility_agent\n"), "{expected}");
    let out = cli()
        .arg("list")
        .env("AGENT_CONTRACT_SCHEMAS", SCHEMAS)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), expected);
    let out = cli().arg("list").current_dir("..").output().unwrap();
    assert_eq!(stdout(&out), expected);
    // The flag wins over the variable.
    let out = cli()
        .args(["list", "--schemas", "../tests/fixtures/user_crate/schemas"])
        .env("AGENT_CONTRACT_SCHEMAS", SCHEMAS)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "broken_agent\nsearch_agent\ntagged_agent\n");
}
