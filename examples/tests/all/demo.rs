//! The examples' binaries run as processes: `agent-demo` (the compiled-in agents' prompts,
//! payload and benches, and each exit code), `plan-pipeline` (the main job, the declared
//! workflow, an `mcpServers` file), and the convention all three state in `--help`.

use assert_cmd::Command;

const KWARGS: &str = "../tests/fixtures/plan_generator/kwargs.json";
const GOLDEN: &str = include_str!("../../../tests/fixtures/plan_generator/expected_user_prompt.md");

fn demo() -> Command {
    Command::cargo_bin("agent-demo").unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn list_prints_one_compiled_in_agent_per_line() {
    let out = demo().arg("list").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "accessibility_agent\nbudget_agent\ncatering_agent\nconsolidation\ndelegation\n\
         discovery_agent\nlogistics_agent\nplan_generator_agent\nselector_agent\nvenue_agent\n"
    );
}

/// The compiled-in template renders the golden prompt (`agent-contract render` on a folder
/// has only the default prompt: a template is compiled with its crate).
#[test]
fn render_from_file_and_stdin() {
    let out = demo()
        .args(["render", "plan_generator_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Byte for byte: the prompt ends where the golden does, with no newline added.
    assert_eq!(stdout(&out), GOLDEN);
    let kwargs = std::fs::read_to_string(KWARGS).unwrap();
    let out = demo()
        .args(["render", "plan_generator_agent", "-"])
        .write_stdin(kwargs)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), GOLDEN);
}

#[test]
fn each_exit_code_of_the_demo() {
    // 1: the input broke the contract; the retry error is on stdout.
    let out = demo()
        .args(["render", "plan_generator_agent"])
        .write_stdin(r#"{"task": "Generate plan"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["missing_fields"],
        serde_json::json!(["target_url", "task_name", "collected_information"])
    );
    // 2: usage and I/O errors, on stderr.
    let out = demo()
        .args(["render", "no_such_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with(
        "agent-demo: unknown agent `no_such_agent`; known agents: accessibility_agent"
    ));
    let out = demo()
        .args(["render", "plan_generator_agent", "/no/such/file.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("agent-demo: cannot read `/no/such/file.json`")
    );
    let out = demo().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Each binary's `--help` states the exit codes and lists the variables it reads, a key's
/// value never shown.
#[test]
fn every_binary_states_the_convention_in_its_help() {
    let convention = "Exit status:\n  0  success\n  1  the input broke a contract, a check found problems, or a run failed\n  2  a usage or I/O error";
    for (bin, args, vars) in [
        (
            "plan-pipeline",
            &["--help"][..],
            &["RUST_LOG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"][..],
        ),
        (
            "event-planning",
            &["--help"],
            &[
                "RUST_LOG",
                "OPENAI_API_KEY",
                "AGENT_CONTRACT_REQUEST_TIMEOUT",
            ],
        ),
        ("agent-demo", &["--help"], &["RUST_LOG"]),
        ("agent-demo", &["render", "--help"], &["RUST_LOG"]),
        (
            "agent-demo",
            &["mcp", "--help"],
            &[
                "RUST_LOG",
                "AGENT_CONTRACT_MCP_TOKEN",
                "AGENT_CONTRACT_MCP_KEY",
                "OPENAI_API_KEY",
                "AZURE_OPENAI_API_KEY",
            ],
        ),
    ] {
        let out = Command::cargo_bin(bin)
            .unwrap()
            .args(args)
            .env("OPENAI_API_KEY", "sk-never-shown-0123456789")
            .env("AGENT_CONTRACT_MCP_TOKEN", "token-never-shown-0123456789")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{bin} {args:?}");
        let text = stdout(&out);
        assert!(text.contains(convention), "{bin} {args:?}: {text}");
        // clap wraps lines at the terminal's width: one space between words.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for var in vars {
            assert!(
                text.contains(&format!("[env: {var}")),
                "{bin}: {var}: {text}"
            );
        }
        assert!(!text.contains("never-shown"), "{bin}: {text}");
        // A usage error is 2 for each.
        let out = Command::cargo_bin(bin)
            .unwrap()
            .arg("--no-such-flag")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bin}");
    }
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
fn plan_pipeline_offers_the_tools_of_an_mcp_servers_file() {
    let dir = std::env::temp_dir().join(format!("plan-pipeline-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let server = serde_json::json!({"mcpServers": {"agents": {
        "command": env!("CARGO_BIN_EXE_agent-demo"),
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
    // The served agents and the two workflows' two tools each, offered to the main agent.
    let tools = agent_examples::agents::AGENTS.len() + 4;
    assert!(
        text.contains(&format!("=== MCP server `agents`: {tools} tools ===")),
        "{text}"
    );
    assert!(text.contains("=== [main_agent] assistant ===\nThe crawl plan is written to"));
    // A file that is not an mcpServers file: a usage error, said with its path.
    std::fs::write(&config, "{}").unwrap();
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .arg("--mcp-config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mcp.json: the mcpServers file: no `mcpServers` object"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Kills a server when the test ends, passed or not.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command`, and reads the first line its `stream` writes.
fn started(mut command: std::process::Command, stderr: bool) -> (Running, String) {
    use std::io::BufRead as _;
    let piped = std::process::Stdio::piped;
    let mut child = match stderr {
        true => command.stderr(piped()).spawn().unwrap(),
        false => command.stdout(piped()).spawn().unwrap(),
    };
    let mut line = String::new();
    match stderr {
        true => std::io::BufReader::new(child.stderr.take().unwrap()).read_line(&mut line),
        false => std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line),
    }
    .unwrap();
    (Running(child), line)
}

#[test]
fn plan_pipeline_offers_the_skills_of_a2a_agents() {
    // `agent-demo a2a`, offline on canned answers: every agent and the workflow.
    let mut demo = std::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"));
    demo.args(["a2a", "--http", "127.0.0.1:0"])
        .env_remove("AGENT_CONTRACT_MCP_TOKEN");
    let (_demo, line) = started(demo, true);
    let demo_url = line
        .strip_prefix("agent-demo: serving A2A at ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    let mut args = vec!["--a2a".to_owned(), demo_url.clone()];
    // An agent served by the official Python SDK, when python3 has it (.ci/run installs it).
    let python = std::process::Command::new("python3")
        .args(["-c", "import a2a.server, uvicorn, starlette"])
        .output()
        .is_ok_and(|out| out.status.success());
    let calls =
        std::env::temp_dir().join(format!("plan-pipeline-a2a-{}.jsonl", std::process::id()));
    let _python = python.then(|| {
        let mut server = std::process::Command::new("python3");
        server
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../agent-a2a/tests/python/server.py"
            ))
            .arg(&calls);
        let (running, line) = started(server, false);
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_owned();
        args.extend(["--a2a".to_owned(), url]);
        running
    });
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    // Every agent and the workflow (its questions pause the calling run: no tool answers
    // them).
    let skills = agent_examples::agents::AGENTS.len() + 1;
    assert!(
        text.contains(&format!("=== A2A agent {demo_url}: {skills} skills (")),
        "{text}"
    );
    if python {
        assert!(text.contains(": 1 skills (add) ==="), "{text}");
        // The scripted main agent never calls it: nothing reached the agent.
        assert!(!calls.exists());
    }
    assert!(text.contains("=== [main_agent] assistant ===\nThe crawl plan is written to"));
    // An address with no agent: a usage error naming it.
    let out = Command::cargo_bin("plan-pipeline")
        .unwrap()
        .args(["--a2a", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the A2A agent at http://127.0.0.1:9 could not be reached"),
        "{stderr}"
    );
}

#[test]
fn agent_demo_a2a_answers_a_task_paused_through_another_instance_on_its_store() {
    let python = std::process::Command::new("python3")
        .args(["-c", "import a2a.client"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !python {
        eprintln!("skipped: python3 has no `a2a` package (pip install a2a-sdk; .ci/run does)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("agent-demo-a2a-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let instance = || {
        let mut demo = std::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"));
        demo.args(["a2a", "--http", "127.0.0.1:0", "--store", &url])
            .env(
                "AGENT_CONTRACT_MCP_KEY",
                "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef",
            )
            .env_remove("AGENT_CONTRACT_MCP_TOKEN");
        let (running, line) = started(demo, true);
        let base = line
            .strip_prefix("agent-demo: serving A2A at ")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{line}"))
            .to_owned();
        (running, base)
    };
    let (_first, first) = instance();
    let (_second, second) = instance();
    // The official client: the run pauses through the first instance, an empty answer is
    // refused and the real one finishes it through the second.
    let out = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../agent-a2a/tests/python/client.py"
        ))
        .args(["workflow", &first, &second])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdict: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        verdict["paused"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    assert_eq!(
        verdict["empty"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let answered = &verdict["answered"];
    assert_eq!(answered["id"], verdict["paused"]["id"]);
    assert_eq!(
        answered["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert_eq!(
        answered["artifacts"][0]["parts"][0]["data"]["output"],
        agent_examples::event_planning::PLAN
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `agent-demo bench`: one JSON line with the documented keys.
fn bench(args: &[&str]) -> serde_json::Map<String, serde_json::Value> {
    let out = demo().arg("bench").args(args).output().unwrap();
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

fn assert_report(report: &serde_json::Map<String, serde_json::Value>, agent: &str) {
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
    assert_eq!(report["agent"], agent);
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
fn bench_times_the_compiled_agent_the_retry_path_and_the_synthetic_payload() {
    let size = std::fs::metadata(KWARGS).unwrap().len();
    let report = bench(&[
        "plan_generator_agent",
        KWARGS,
        "--iterations",
        "2",
        "--rounds",
        "3",
    ]);
    assert_report(&report, "plan_generator_agent");
    assert_eq!(report["bytes"].as_u64(), Some(size));
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
    assert_report(&report, "plan_generator_agent");
    let report = bench(&[
        "plan_generator_agent",
        "--synthetic-items",
        "3",
        "--iterations",
        "2",
        "--rounds",
        "1",
    ]);
    assert_report(&report, "plan_generator_agent");
    let payload = demo()
        .args(["payload", "--synthetic-items", "3"])
        .output()
        .unwrap();
    assert_eq!(report["bytes"].as_u64(), Some(payload.stdout.len() as u64));
    let report = bench(&[
        "plan_generator_agent",
        "--synthetic-items",
        "3",
        "--assume-checks-pass",
        "--iterations",
        "2",
        "--rounds",
        "1",
    ]);
    assert_report(&report, "plan_generator_agent_assumed_checks");
}

#[test]
fn payload_is_the_plan_generators_valid_kwargs() {
    let out = demo()
        .args(["payload", "--synthetic-items", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let kwargs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        kwargs["collected_information"].as_array().map(Vec::len),
        Some(2)
    );
    let out = demo()
        .args(["render", "plan_generator_agent"])
        .write_stdin(out.stdout)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn bench_usage_errors_exit_2() {
    let out = demo()
        .args(["bench", "no_such_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = demo()
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
    let out = demo()
        .args(["bench", "discovery_agent", KWARGS, "--assume-checks-pass"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
