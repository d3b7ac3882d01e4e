//! The `agent-contract` CLI, run as a process: each subcommand and exit code.

use assert_cmd::Command;

const KWARGS: &str = "../tests/fixtures/plan_generator/kwargs.json";
const GOLDEN: &str = include_str!("../../../tests/fixtures/plan_generator/expected_user_prompt.md");

fn cli() -> Command {
    Command::cargo_bin("agent-contract").unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn list_prints_one_agent_per_line() {
    let out = cli().arg("list").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "accessibility_agent\nbudget_agent\ncatering_agent\nconsolidation\ndelegation\n\
         discovery_agent\nlogistics_agent\nplan_generator_agent\nselector_agent\nvenue_agent\n"
    );
}

#[test]
fn tool_in_both_formats() {
    let out = cli()
        .args(["tool", "plan_generator_agent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["function"]["name"], "run_plan_generator_agent");
    let out = cli()
        .args(["tool", "discovery_agent", "--format", "anthropic"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["name"], "run_discovery_agent");
    assert_eq!(
        v["input_schema"]["required"],
        serde_json::json!(["task", "target_url"])
    );
}

#[test]
fn render_from_file_and_stdin() {
    let out = cli()
        .args(["render", "plan_generator_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Byte for byte: the prompt ends where the golden does, with no newline added.
    assert_eq!(stdout(&out), GOLDEN);
    let kwargs = std::fs::read_to_string(KWARGS).unwrap();
    let out = cli()
        .args(["render", "plan_generator_agent", "-"])
        .write_stdin(kwargs)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), GOLDEN);
}

#[test]
fn kwargs_that_are_not_utf8_get_a_retry_error() {
    let mut kwargs = br#"{"task": "Generate plan", "target_url": "https://a.example/"#.to_vec();
    kwargs.extend_from_slice(&[0xff, 0xfe]);
    kwargs.extend_from_slice(br#""}"#);
    for command in ["render", "validate"] {
        let out = cli()
            .args([command, "plan_generator_agent"])
            .write_stdin(kwargs.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["success"], false);
        assert_eq!(v["error"], "Tool call arguments are not valid JSON");
        assert_eq!(
            v["validation_message"],
            "the input is not valid UTF-8: invalid byte at offset 59"
        );
        assert_eq!(
            v["required_fields"],
            serde_json::json!(["target_url", "task_name", "collected_information"])
        );
    }
}

#[test]
fn render_invalid_prints_the_retry_error_and_exits_2() {
    let out = cli()
        .args(["render", "plan_generator_agent"])
        .write_stdin(r#"{"task": "Generate plan"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"], "Input contract validation failed");
    assert_eq!(
        v["missing_fields"],
        serde_json::json!(["target_url", "task_name", "collected_information"])
    );
}

#[test]
fn validate_input_and_output() {
    let out = cli()
        .args(["validate", "plan_generator_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "{\"success\":true}\n".into())
    );
    let out = cli()
        .args(["validate", "plan_generator_agent", "--output"])
        .write_stdin(
            r#"{"plan_file_path": "p.md", "status": "success", "agent_response_content": "ok"}"#,
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = cli()
        .args(["validate", "plan_generator_agent", "--output", "-"])
        .write_stdin(r#"{"plan_file_path": "p.md", "status": "maybe"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"], "Output contract validation failed");
    assert_eq!(
        v["missing_fields"],
        serde_json::json!(["agent_response_content"])
    );
}

#[test]
fn usage_errors_exit_1_on_stderr() {
    let out = cli()
        .args(["render", "no_such_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with(
        "agent-contract: unknown agent `no_such_agent`; known agents: accessibility_agent"
    ));
    let out = cli()
        .args(["render", "plan_generator_agent", "/no/such/file.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("agent-contract: cannot read `/no/such/file.json`")
    );
    let out = cli().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn help_on_each_subcommand() {
    for sub in [
        &["--help"][..],
        &["list", "--help"],
        &["tool", "--help"],
        &["render", "--help"],
        &["validate", "--help"],
    ] {
        let out = cli().args(sub).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub:?}");
        assert!(stdout(&out).contains("Usage: agent-contract"), "{sub:?}");
    }
}

const USER_CRATE: &str = "../tests/fixtures/user_crate";
const USER_SCHEMAS: &str = "../tests/fixtures/user_crate/schemas";

#[test]
fn check_reports_every_problem_per_agent_with_its_location() {
    let out = cli()
        .args(["check", USER_SCHEMAS, "--root", USER_CRATE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let expected = "\
error broken_agent
  error: broken_agent/input.schema.json:6:7: `anyOf` at `/properties/values` has several branches of type `array`: typify cannot type overlapping non-object branches: merge them into one branch, or make them differ by `type`
  error: broken_agent/input.schema.json:13:62: `limit` is declared only by the `then` at `#`: declare it in the `properties` of `#` too, since the Rust type is built from those and a property only a condition names would be dropped
error search_agent
  error: templates/search_user.md:1:15: template uses `quary`, which is not a field of the contract: expected `task` or one of `filters`, `limit`, `query` (did you mean `query`?)
  error: templates/search_user.md:2:28: template uses `f.feild`, but `f` has no field `feild`: expected one of `field` (did you mean `field`?)
ok tagged_agent
  warning: tagged_agent/input.schema.json:5:37: `default` \"false\" at `/properties/verbose` does not match its own schema: it is ignored (fix or remove it)
";
    assert_eq!(stdout(&out), expected);
}

#[test]
fn check_passes_the_examples_own_schemas() {
    let out = cli()
        .args(["check", "../schemas", "--root", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).lines().all(|l| l.starts_with("ok ")));
}

#[test]
fn tool_and_validate_read_a_users_schemas_at_run_time() {
    let out = cli()
        .args(["tool", "search_agent", "--schemas", USER_SCHEMAS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["function"]["name"], "run_search_agent");
    assert_eq!(
        v["function"]["parameters"]["required"],
        serde_json::json!(["task", "query"])
    );
    let validate = |args: &[&str], stdin: &str| {
        cli()
            .args(["validate", "tagged_agent", "--schemas", USER_SCHEMAS])
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap()
    };
    let out = validate(&[], r#"{"task": "t", "count": 5.0}"#);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "{\"success\":true}\n");
    let out = validate(&[], r#"{"task": "t", "count": "x"}"#);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["path"], serde_json::json!(["count"]));
    let out = validate(&["--output"], r#"{"total": -1}"#);
    assert_eq!(out.status.code(), Some(2));
    let out = cli()
        .args(["tool", "nope", "--schemas", USER_SCHEMAS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// `plan-pipeline --declared` runs the declared workflow offline: the plan generator's
/// prompt in its transcript is the golden one, and the binary exits 0; without the flag the
/// main agent's story still shows the retry error.
#[test]
fn plan_pipeline_runs_the_declared_workflow_and_the_main_job() {
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .arg("--declared")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with(
        "Workflow `plan_pipeline` (declared, checked at compile time): discovery_agent -> selector_agent -> accessibility_agent -> plan_generator_agent\n"
    ));
    assert!(text.contains(GOLDEN.trim_end()), "{text}");
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    // The retry error the main agent got back is printed once: its tool result points to it.
    assert!(text.contains("(input contract) ===\n{\n  \"context_id\": \"run-"));
    assert!(text.contains("\"missing_fields\": [\n    \"collected_information\"\n  ],"));
    assert_eq!(text.matches("\"missing_fields\"").count(), 1, "{text}");
    assert!(text.contains("=== [main_agent] tool result ===\nthe retry error above\n"));
    // Each sub-agent's output is printed once, as its answer; its tool result points to it.
    let written = r#"{"scan_duration_ms": 234, "framework_detected": "React"}"#;
    assert_eq!(text.matches(written).count(), 1, "{text}");
    assert!(text.contains(
        "=== [main_agent] tool result ===\nthe output of discovery_agent above (success, context ID run-"
    ));
    // The main agent's answer too: the last message, which the closing line points to.
    assert_eq!(
        text.matches("The crawl plan is written to").count(),
        1,
        "{text}"
    );
    assert!(text.contains("=== [main_agent] assistant ===\nThe crawl plan is written to"));
    assert!(text.contains("=== done: `main_agent` answered ("), "{text}");
}

#[test]
fn mcp_refuses_to_serve_beyond_loopback_without_a_token() {
    let out = cli()
        .args(["mcp", "--http", "0.0.0.0:0"])
        .env_remove("AGENT_CONTRACT_MCP_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("AGENT_CONTRACT_MCP_TOKEN"), "{stderr}");
    assert!(stderr.contains("--no-auth"), "{stderr}");
    // A token too short to be a secret is refused too, on any address.
    let out = cli()
        .args(["mcp", "--http", "127.0.0.1:0"])
        .env("AGENT_CONTRACT_MCP_TOKEN", "hunter2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("shorter than 16"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "the token is never shown");
}

#[test]
fn mcp_refuses_a_signing_key_too_regular_to_be_secret() {
    let out = cli()
        .args(["mcp", "--store", "sqlite::memory:"])
        .env("AGENT_CONTRACT_MCP_KEY", "00".repeat(32))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("AGENT_CONTRACT_MCP_KEY"), "{stderr}");
    assert!(stderr.contains("1 distinct byte values"), "{stderr}");
}

#[test]
fn render_reads_a_users_agent_at_run_time_with_the_default_prompt() {
    let out = cli()
        .args(["render", "search_agent", "--schemas", USER_SCHEMAS])
        .write_stdin(r#"{"task": "Find it", "query": "rust 0.60", "limit": 3}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // The default prompt (a template is compiled with its crate): the task, then the context
    // as the caller wrote it.
    assert_eq!(
        stdout(&out),
        "Find it\n\n## Context\n```json\n{\n  \"query\": \"rust 0.60\",\n  \"limit\": 3\n}\n```"
    );
    // The same from a file (`render --schemas DIR AGENT FILE`, issue 32's form).
    let file = std::env::temp_dir().join(format!("render-kwargs-{}.json", std::process::id()));
    std::fs::write(
        &file,
        r#"{"task": "Find it", "query": "rust 0.60", "limit": 3}"#,
    )
    .unwrap();
    let from_file = cli()
        .args(["render", "--schemas", USER_SCHEMAS, "search_agent"])
        .arg(&file)
        .output()
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(from_file.status.code(), Some(0));
    assert_eq!(stdout(&from_file), stdout(&out));
    // A call the contract refuses gets its retry error, as for a compiled-in agent.
    let out = cli()
        .args(["render", "search_agent", "--schemas", USER_SCHEMAS])
        .write_stdin(r#"{"task": "Find it"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["missing_fields"], serde_json::json!(["query"]));
}

#[test]
fn plan_pipeline_offers_the_tools_of_an_mcp_servers_file() {
    let dir = std::env::temp_dir().join(format!("plan-pipeline-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let server = serde_json::json!({"mcpServers": {"agents": {
        "command": env!("CARGO_BIN_EXE_agent-contract"),
        "args": ["mcp"],
    }}});
    std::fs::write(&config, server.to_string()).unwrap();
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .arg("--mcp-config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    // The served agents and the workflow's two tools, offered to the main agent.
    let tools = agent_examples::agents::AGENTS.len() + 2;
    assert!(
        text.contains(&format!("=== MCP server `agents`: {tools} tools ===")),
        "{text}"
    );
    assert!(text.contains("=== [main_agent] assistant ===\nThe crawl plan is written to"));
    // A file that is not an mcpServers file: said, with its path.
    std::fs::write(&config, "{}").unwrap();
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .arg("--mcp-config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mcp.json: the mcpServers file: no `mcpServers` object"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The strict-output table of the project's schemas, pinned: which provider gets which
/// contract strict, rewritten how, or why not.
#[test]
fn check_providers_prints_the_strict_output_table() {
    let out = cli()
        .args(["check", "--providers", "../schemas"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let expected = include_str!("../../../tests/fixtures/providers/strict_table.txt");
    assert_eq!(stdout(&out), expected);
}
