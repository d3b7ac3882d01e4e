//! `agent-contract`, run as a process: each subcommand on a folder of agent folders, and its
//! exit code.

use assert_cmd::Command;

/// The repository's agents: the contracts the examples compile in.
const SCHEMAS: &str = "../schemas";
const KWARGS: &str = "../tests/fixtures/plan_generator/kwargs.json";
const USER_CRATE: &str = "../tests/fixtures/user_crate";
const USER_SCHEMAS: &str = "../tests/fixtures/user_crate/schemas";

fn cli() -> Command {
    let mut command = Command::cargo_bin("agent-contract").unwrap();
    command.env_remove("AGENT_CONTRACT_SCHEMAS");
    command
}

/// `agent-contract --schemas ../schemas ...`.
fn on_schemas() -> Command {
    let mut command = cli();
    command.args(["--schemas", SCHEMAS]);
    command
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn list_prints_one_agent_per_line() {
    let out = on_schemas().arg("list").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "accessibility_agent\nbudget_agent\ncatering_agent\nconsolidation\ndelegation\n\
         discovery_agent\nlogistics_agent\nplan_generator_agent\nselector_agent\nvenue_agent\n"
    );
}

#[test]
fn tool_in_both_formats() {
    let out = on_schemas()
        .args(["tool", "plan_generator_agent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["function"]["name"], "run_plan_generator_agent");
    let out = on_schemas()
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
fn kwargs_that_are_not_utf8_get_a_retry_error() {
    let mut kwargs = br#"{"task": "Generate plan", "target_url": "https://a.example/"#.to_vec();
    kwargs.extend_from_slice(&[0xff, 0xfe]);
    kwargs.extend_from_slice(br#""}"#);
    for command in ["render", "validate"] {
        let out = on_schemas()
            .args([command, "plan_generator_agent"])
            .write_stdin(kwargs.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{command}");
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
fn render_invalid_prints_the_retry_error_and_exits_1() {
    let out = on_schemas()
        .args(["render", "plan_generator_agent"])
        .write_stdin(r#"{"task": "Generate plan"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"], "Input contract validation failed");
    assert_eq!(
        v["missing_fields"],
        serde_json::json!(["target_url", "task_name", "collected_information"])
    );
}

#[test]
fn validate_input_and_output() {
    let out = on_schemas()
        .args(["validate", "plan_generator_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // The checked context (the kwargs without their reserved keys), and no repair.
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let kwargs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(KWARGS).unwrap()).unwrap();
    assert_eq!(
        v["value"]["collected_information"],
        kwargs["collected_information"]
    );
    assert!(v["value"].get("task").is_none());
    assert_eq!(v["repairs"], serde_json::json!([]));
    let clean = serde_json::json!(
        {"plan_file_path": "p.md", "status": "success", "agent_response_content": "ok"}
    );
    let out = on_schemas()
        .args(["validate", "plan_generator_agent", "--output"])
        .write_stdin(clean.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap(),
        serde_json::json!({"value": clean, "repairs": []})
    );
    // Lossless repairs: the value the clean answer has, and each fix.
    let out = on_schemas()
        .args(["validate", "plan_generator_agent", "--output"])
        .write_stdin(
            "Here: {plan_file_path: 'p.md', \"status\": \"Success\", \"agent_response_content\": \"ok\",}",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["value"], clean);
    assert_eq!(
        v["repairs"],
        serde_json::json!([
            {"path": "", "kind": "unquoted_key", "before": "plan_file_path", "after": "\"plan_file_path\""},
            {"path": "", "kind": "single_quotes", "before": "'p.md'", "after": "\"p.md\""},
            {"path": "", "kind": "trailing_comma", "before": ",", "after": ""},
            {"path": "/status", "kind": "enum_case", "before": "\"Success\"", "after": "\"success\""}
        ])
    );
    let out = on_schemas()
        .args(["validate", "plan_generator_agent", "--output", "-"])
        .write_stdin(r#"{"plan_file_path": "p.md", "status": "maybe"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"], "Output contract validation failed");
    assert_eq!(
        v["missing_fields"],
        serde_json::json!(["agent_response_content"])
    );
}

#[test]
fn usage_errors_exit_2_on_stderr() {
    let out = on_schemas()
        .args(["render", "no_such_agent", KWARGS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "agent-contract: unknown agent `no_such_agent` in ../schemas; known agents: accessibility_agent, budget_agent,"
        ),
        "{err}"
    );
    // A name is one folder of the folder, not a path out of it.
    let out = on_schemas()
        .args(["tool", "../schemas/discovery_agent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = on_schemas()
        .args(["render", "plan_generator_agent", "/no/such/file.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("agent-contract: cannot read `/no/such/file.json`")
    );
    let out = cli().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A folder without agents says what an agent is.
    let out = cli()
        .args(["--schemas", USER_CRATE, "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("an agent is a folder with an `input.schema.json`"),
        "{err}"
    );
}

#[test]
fn help_on_each_subcommand() {
    for sub in [
        &["--help"][..],
        &["check", "--help"],
        &["list", "--help"],
        &["tool", "--help"],
        &["render", "--help"],
        &["validate", "--help"],
        &["bench", "--help"],
        &["mcp", "--help"],
        &["completions", "--help"],
    ] {
        let out = cli().args(sub).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{sub:?}");
        assert!(stdout(&out).contains("Usage: agent-contract"), "{sub:?}");
    }
}

#[test]
fn check_reports_every_problem_per_agent_with_its_location() {
    let out = cli()
        .args(["--schemas", USER_SCHEMAS, "check", "--root", USER_CRATE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty());
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
    let out = on_schemas()
        .args(["check", "--root", "../examples"])
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
    assert_eq!(stdout(&out), "{\"repairs\":[],\"value\":{\"count\":5.0}}\n");
    let out = validate(&[], r#"{"task": "t", "count": "5"}"#);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "{\"repairs\":[{\"after\":\"5\",\"before\":\"\\\"5\\\"\",\"kind\":\"number_string\",\"path\":\"/count\"}],\"value\":{\"count\":5}}\n"
    );
    // Only a fix that changes the meaning would do: the retry error of the call as written.
    for kwargs in [
        r#"{"task": "t", "count": "x"}"#,
        r#"{"task": "t", "count": "5.5"}"#,
    ] {
        let out = validate(&[], kwargs);
        assert_eq!(out.status.code(), Some(1), "{kwargs}");
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["path"], serde_json::json!(["count"]));
    }
    let out = validate(&["--output"], r#"{"total": -1}"#);
    assert_eq!(out.status.code(), Some(1));
    let out = cli()
        .args(["tool", "nope", "--schemas", USER_SCHEMAS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
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
    // Said on stderr, since the folder names a template.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "agent-contract: note: a build renders `search_agent` with its template `search_user.md`; this is the default prompt (a template is compiled with its crate)\n"
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
    // A call the contract refuses gets its retry error.
    let out = cli()
        .args(["render", "search_agent", "--schemas", USER_SCHEMAS])
        .write_stdin(r#"{"task": "Find it"}"#)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["missing_fields"], serde_json::json!(["query"]));
}

/// The strict-output table of the project's schemas, pinned: which provider gets which
/// contract strict, rewritten how, or why not.
#[test]
fn check_providers_prints_the_strict_output_table() {
    let out = on_schemas()
        .args(["check", "--providers", "--root", "../examples"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let expected = include_str!("../../../tests/fixtures/providers/strict_table.txt");
    assert_eq!(stdout(&out), expected);
}

/// The crate of `tests/fixtures/triage_crate`, which `agent-tests` builds through the derive
/// and the build script: `check` agrees that all of it builds (types shared across contracts,
/// a bounded string's newtype included), and reports a field read through an optional value
/// at the template's `line:col` with the `if let` that reads it, as both front ends do.
#[test]
fn check_agrees_with_the_build_on_shared_types_and_optional_fields() {
    const TRIAGE: &str = "../tests/fixtures/triage_crate";
    let out = cli()
        .args([
            "--schemas",
            &format!("{TRIAGE}/schemas"),
            "check",
            "--root",
            TRIAGE,
        ])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out),
        "ok address_agent\nok classifier_agent\nok drafter_agent\nok shipper_agent\n"
    );
    assert_eq!(out.status.code(), Some(0));

    let copy = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("triage_optional");
    let _ = std::fs::remove_dir_all(&copy);
    for dir in [
        "schemas/classifier_agent",
        "schemas/drafter_agent",
        "templates",
    ] {
        std::fs::create_dir_all(copy.join(dir)).unwrap();
        for file in std::fs::read_dir(std::path::Path::new(TRIAGE).join(dir)).unwrap() {
            let file = file.unwrap();
            std::fs::copy(file.path(), copy.join(dir).join(file.file_name())).unwrap();
        }
    }
    std::fs::write(
        copy.join("templates/drafter_user.md"),
        "Reply about order {{ classifier_agent_output.order.id }}\n",
    )
    .unwrap();
    let out = cli()
        .args(["--schemas"])
        .arg(copy.join("schemas"))
        .args(["check", "--root"])
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out),
        "\
ok classifier_agent
error drafter_agent
  error: templates/drafter_user.md:1:22: template uses `classifier_agent_output.order.id`, but `classifier_agent_output.order` may be absent (the contract does not require it), and an absent value has no fields: read it inside `{% if let Some(o) = classifier_agent_output.order %}{{ o.id }}{% endif %}`
"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// A folder whose agent takes a PNG screenshot, a PDF invoice and a receipt by URL.
const MEDIA_SCHEMAS: &str = "../tests/fixtures/media";

#[test]
fn render_shows_each_media_part_in_place_and_never_its_bytes() {
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let png = b64(include_bytes!("../../../tests/fixtures/media/pixel.png"));
    let pdf = b64(include_bytes!("../../../tests/fixtures/media/invoice.pdf"));
    let kwargs = serde_json::json!({
        "task": "Which total?", "customer": "Ada", "screenshot": png, "invoice": pdf,
        "receipt": "https://example.com/r.jpg",
    });
    let out = cli()
        .args(["render", "invoice_reader_agent", "--schemas", MEDIA_SCHEMAS])
        .write_stdin(kwargs.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "Which total?\n[image/png, 69 B]\n[application/pdf, 327 B]\n[image/jpeg at https://example.com/r.jpg]\n\n## Context\n```json\n{\n  \"customer\": \"Ada\"\n}\n```"
    );
    // A `file:` URL is refused with the field named.
    let mut bad = kwargs.clone();
    bad["receipt"] = "file:///etc/passwd".into();
    let out = cli()
        .args(["render", "invoice_reader_agent", "--schemas", MEDIA_SCHEMAS])
        .write_stdin(bad.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["path"], serde_json::json!(["receipt"]));
}

#[test]
fn check_providers_says_which_provider_takes_each_media_field() {
    let out = cli()
        .args(["--schemas", MEDIA_SCHEMAS, "check", "--providers"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    let media = text.split_once("media field").expect("a media table").1;
    let lines: Vec<&str> = media.lines().skip(1).map(str::trim_end).collect();
    let expected: Vec<String> = [
        ("screenshot", "openai", "taken", ""),
        ("screenshot", "anthropic", "taken", ""),
        ("invoice", "openai", "taken", ""),
        ("invoice", "anthropic", "taken", ""),
        ("receipt", "openai", "taken", ""),
        ("receipt", "anthropic", "taken", ""),
    ]
    .iter()
    .map(|(field, provider, kind, why)| {
        format!(
            "{:31}  {provider:9}  {kind:10} {why}",
            format!("invoice_reader_agent.{field}")
        )
        .trim_end()
        .to_owned()
    })
    .collect();
    assert_eq!(lines, expected, "{text}");
}

/// A tool has no media arguments (nor has MCP): a media field is a base64 string, or a URL, in
/// the arguments, its media type declared.
#[test]
fn a_media_field_is_a_string_in_the_tools_arguments() {
    let out = cli()
        .args(["tool", "invoice_reader_agent", "--schemas", MEDIA_SCHEMAS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let tool: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let properties = &tool["function"]["parameters"]["properties"];
    assert_eq!(properties["screenshot"]["type"], "string");
    assert_eq!(properties["screenshot"]["contentEncoding"], "base64");
    assert_eq!(properties["screenshot"]["contentMediaType"], "image/png");
    assert_eq!(properties["receipt"]["format"], "uri");
}
