//! `agent-contract eval` and `check --evals` on the plan generator's dataset of a known mix
//! (tests/fixtures/evals/mix: one case passes, one fails, one errors, one expects its input
//! refused), run against a model on loopback that answers by the case's `task_name`: the
//! exact verdicts in the markdown, JUnit and JSON reports, the exit codes, recording and
//! replay; and the same dataset with a misspelt path or an enum value the schema lacks,
//! refused at its line and column before any model call.

use assert_cmd::Command;
use serde_json::{Value, json};
use std::io::{BufRead as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const MIX: &str = "../tests/fixtures/evals/mix";

/// A model endpoint on loopback speaking OpenAI's chat completions: the answer for each
/// request is `answer(body)`; the request bodies are kept.
fn fake_model(answer: fn(&str) -> String) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = std::io::BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let request = String::from_utf8_lossy(&request).into_owned();
            let body = json!({
                "id": "chatcmpl-1",
                "model": "test-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer(&request)}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20},
            })
            .to_string();
            kept.lock().unwrap().push(request);
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = reader.get_mut().write_all(response.as_bytes());
        }
    });
    (url, seen)
}

/// The plan generator's answer for the case whose `task_name` the prompt holds: a plan that
/// passes, one with `status: partial`, or one the contract refuses every time.
fn plan_answer(request: &str) -> String {
    let plan = |status: &str| {
        json!({"plan_file_path": "plans/x.md", "status": status, "agent_response_content": "Fill the form."})
            .to_string()
    };
    if request.contains("fail_case") {
        plan("partial")
    } else if request.contains("error_case") {
        plan("done")
    } else {
        plan("success")
    }
}

fn temp(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("agent-contract-eval-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn eval(url: &str, evals: &str, extra: &[&str]) -> std::process::Output {
    Command::cargo_bin("agent-contract")
        .unwrap()
        .args([
            "--schemas",
            "../schemas",
            "eval",
            evals,
            "--model",
            "openai:test-model",
        ])
        .args(extra)
        .env("OPENAI_BASE_URL", url)
        .env("OPENAI_API_KEY", "sk-test")
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The mix gives exactly its verdicts in all three reports, and exit 1.
#[test]
fn the_mix_gives_its_verdicts_in_every_report() {
    let (url, seen) = fake_model(plan_answer);
    let dir = temp("mix");
    let (json_path, junit_path, prices) =
        (dir.join("r.json"), dir.join("r.xml"), dir.join("p.json"));
    std::fs::write(&prices, r#"{"test-model": {"input": 1.0, "output": 2.0}}"#).unwrap();
    let out = eval(
        &url,
        MIX,
        &[
            "--json",
            json_path.to_str().unwrap(),
            "--junit",
            junit_path.to_str().unwrap(),
            "--prices",
            prices.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Markdown: one line per case, its name, verdict word and pass rate.
    for (name, verdict) in [
        ("passes", "pass"),
        ("fails", "fail"),
        ("errors", "error"),
        ("refused", "pass"),
    ] {
        let line = format!("| plan_generator_agent | {name} | {verdict} | ");
        let rate = if verdict == "pass" {
            "1/1 (100%)"
        } else {
            "0/1 (0%)"
        };
        assert!(
            stdout.contains(&format!("{line}{rate} |")),
            "{name}: {stdout}"
        );
    }
    assert!(
        stdout.contains("`/status` equals \"success\", seen \"partial\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("4 cases: 2 pass, 1 fail, 1 error"),
        "{stdout}"
    );
    // JSON, in the issue's shape.
    let report = read_json(&json_path);
    assert_eq!(
        verdicts(&report),
        [
            ("passes", "pass"),
            ("fails", "fail"),
            ("errors", "error"),
            ("refused", "pass")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let cases = report["cases"].as_array().unwrap();
    let keys: Vec<&str> = cases[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "agent",
        "name",
        "verdict",
        "failures",
        "error",
        "tokens",
        "cost",
        "prompt_changed",
        "judged",
        "runs",
        "passes",
        "pass_rate",
    ] {
        assert!(keys.contains(&key), "{key}: {keys:?}");
    }
    assert_eq!(
        cases[1]["failures"],
        json!([{"path": "/status", "check": "equals", "expected": "success", "seen": "partial"}])
    );
    assert_eq!(cases[0]["failures"], json!([]));
    assert!(
        cases[2]["error"].as_str().unwrap().contains("output"),
        "{}",
        cases[2]
    );
    assert_eq!(
        cases[3]["tokens"],
        json!({"input": 0, "output": 0}),
        "refused before any call"
    );
    // One call each for the two that answered, the errors case asked until its retries ran out.
    assert_eq!(cases[0]["tokens"], json!({"input": 100, "output": 20}));
    assert_eq!(cases[0]["cost"], json!((100.0 * 1.0 + 20.0 * 2.0) / 1e6));
    let calls = seen.lock().unwrap().len() as u64;
    assert_eq!(report["total"]["tokens"]["input"], json!(100 * calls));
    assert!(calls > 3, "the errors case was asked again: {calls}");
    assert_eq!(report["total"]["pass"], 2);
    assert_eq!(report["total"]["fail"], 1);
    assert_eq!(report["total"]["error"], 1);
    // JUnit: a failure for `fails`, an error for `errors`, nothing in the others.
    let junit = std::fs::read_to_string(&junit_path).unwrap();
    assert!(
        junit.contains(
            r#"<testsuite name="plan_generator_agent" tests="4" failures="1" errors="1">"#
        ),
        "{junit}"
    );
    assert!(
        junit.contains(r#"<testcase classname="plan_generator_agent" name="passes"></testcase>"#),
        "{junit}"
    );
    assert!(
        junit.contains(r#"<testcase classname="plan_generator_agent" name="refused"></testcase>"#),
        "{junit}"
    );
    let fails = junit.split(r#"name="fails">"#).nth(1).unwrap();
    assert!(fails.trim_start().starts_with("<failure message=\"1 assertion(s) failed\">`/status` equals &quot;success&quot;, seen &quot;partial&quot;</failure>"), "{junit}");
    let errors = junit.split(r#"name="errors">"#).nth(1).unwrap();
    assert!(
        errors.trim_start().starts_with("<error message="),
        "{junit}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// With `--baseline`, exit 1 only when a case that passed there fails or errors now.
#[test]
fn a_baseline_fails_only_on_regressions() {
    let (url, _) = fake_model(plan_answer);
    let dir = temp("baseline");
    let now = dir.join("now.json");
    let out = eval(&url, MIX, &["--json", now.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    // The same verdicts as before: no regression.
    let out = eval(&url, MIX, &["--baseline", now.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A baseline in which `fails` passed: it regressed.
    let mut report = read_json(&now);
    report["cases"][1]["verdict"] = json!("pass");
    let before = dir.join("before.json");
    std::fs::write(&before, report.to_string()).unwrap();
    let out = eval(&url, MIX, &["--baseline", before.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    // A baseline that is no report is a usage error.
    std::fs::write(&before, "{}").unwrap();
    let out = eval(&url, MIX, &["--baseline", before.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir);
}

/// `--repeat` runs each case N times; a case's verdict is its worst run.
#[test]
fn repeats_give_pass_rates() {
    let (url, seen) = fake_model(plan_answer);
    let dir = temp("repeat");
    let json_path = dir.join("r.json");
    let out = eval(
        &url,
        MIX,
        &[
            "--repeat",
            "3",
            "--concurrency",
            "2",
            "--json",
            json_path.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = read_json(&json_path);
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(
        (cases[0]["runs"].as_u64(), cases[0]["passes"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(cases[0]["pass_rate"], json!(1.0));
    assert_eq!(
        (cases[1]["runs"].as_u64(), cases[1]["passes"].as_u64()),
        (Some(3), Some(0))
    );
    assert_eq!(report["total"]["runs"], 12);
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .filter(|r| r.contains("pass_case"))
            .count()
            == 3
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("| passes | pass | 3/3 (100%) |"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A recording replays offline (no `--model`) to the same verdicts; a case whose prompt
/// changed since is named.
#[test]
fn a_replay_names_the_cases_whose_prompt_changed() {
    let (url, seen) = fake_model(plan_answer);
    let dir = temp("replay");
    let recording = dir.join("recorded.json");
    let first = dir.join("first.json");
    let out = eval(
        &url,
        MIX,
        &[
            "--record",
            recording.to_str().unwrap(),
            "--json",
            first.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let calls = seen.lock().unwrap().len();
    let replay = |evals: &Path, json_path: &Path| {
        Command::cargo_bin("agent-contract")
            .unwrap()
            .args(["--schemas", "../schemas", "eval"])
            .arg(evals)
            .args([
                "--replay",
                recording.to_str().unwrap(),
                "--json",
                json_path.to_str().unwrap(),
            ])
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    };
    let again = dir.join("again.json");
    let out = replay(Path::new(MIX), &again);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(seen.lock().unwrap().len(), calls, "no model call");
    let (first, again) = (read_json(&first), read_json(&again));
    assert_eq!(verdicts(&first), verdicts(&again));
    assert_eq!(again["total"]["prompt_changed"], 0);
    assert_eq!(first["total"]["tokens"], again["total"]["tokens"]);
    // The dataset edited: `passes` asks for another target page; its prompt changed.
    let edited = dir.join("edited");
    std::fs::create_dir_all(&edited).unwrap();
    let text = std::fs::read_to_string(Path::new(MIX).join("plan_generator_agent.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[0] = lines[0].replace("https://myapp.com/login", "https://myapp.com/signin");
    std::fs::write(edited.join("plan_generator_agent.jsonl"), lines.join("\n")).unwrap();
    let changed = dir.join("changed.json");
    let out = replay(&edited, &changed);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let changed = read_json(&changed);
    let names: Vec<&str> = changed["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["prompt_changed"] == json!(true))
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["passes"]);
    assert!(
        stdout.contains("prompt changed since the recording: plan_generator_agent/passes"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Where the dataset holds `needle` on line `line`: its 1-based column.
fn column(dataset: &str, line: usize, needle: &str) -> usize {
    let text =
        std::fs::read_to_string(Path::new(dataset).join("plan_generator_agent.jsonl")).unwrap();
    text.lines().nth(line - 1).unwrap().find(needle).unwrap() + 1
}

/// A misspelt path and an enum value the schema lacks are refused at their line and column,
/// with a did-you-mean, by `eval` (exit 2, before any model call) and `check --evals` (exit 1).
#[test]
fn a_misspelt_path_or_enum_value_is_refused_at_its_line() {
    let (url, seen) = fake_model(plan_answer);
    let cases = [
        (
            "../tests/fixtures/evals/typo_path",
            2,
            "\"path\": \"/statsu\"",
            "did you mean `/status`?",
        ),
        (
            "../tests/fixtures/evals/typo_enum",
            1,
            "\"equals\": \"sucess\"",
            "did you mean `success`?",
        ),
    ];
    for (dir, line, needle, hint) in cases {
        let col = column(dir, line, needle);
        let at = format!("plan_generator_agent.jsonl:{line}:{col}: ");
        let out = eval(&url, dir, &[]);
        assert_eq!(out.status.code(), Some(2), "{dir}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(&at), "{at}: {stderr}");
        assert!(stderr.contains(hint), "{stderr}");
        let out = Command::cargo_bin("agent-contract")
            .unwrap()
            .args([
                "--schemas",
                "../schemas",
                "check",
                "--root",
                "..",
                "--evals",
                dir,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{dir}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains("error plan_generator_agent"), "{stdout}");
        assert!(
            stdout.contains(&at) && stdout.contains(hint),
            "{at}: {stdout}"
        );
        assert!(stdout.contains("ok discovery_agent"), "{stdout}");
    }
    assert!(seen.lock().unwrap().is_empty(), "no model was asked");
    // The dataset as written passes the check.
    let out = Command::cargo_bin("agent-contract")
        .unwrap()
        .args([
            "--schemas",
            "../schemas",
            "check",
            "--root",
            "..",
            "--evals",
            MIX,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The shipped datasets (evals/, beside schemas/) pass on their recorded answers, offline.
#[test]
fn the_shipped_datasets_pass_on_their_recorded_answers() {
    let out = Command::cargo_bin("agent-contract")
        .unwrap()
        .args([
            "--schemas",
            "../schemas",
            "eval",
            "../evals",
            "--replay",
            "../evals/recorded.json",
        ])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains("| fail |") && !stdout.contains("| error |"),
        "{stdout}"
    );
    assert!(!stdout.contains("prompt changed"), "{stdout}");
}

/// Usage errors exit 2: neither `--model` nor `--replay`; both `--record` and `--replay`.
#[test]
fn eval_usage_errors_exit_2() {
    let out = Command::cargo_bin("agent-contract")
        .unwrap()
        .args(["--schemas", "../schemas", "eval", MIX])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::cargo_bin("agent-contract")
        .unwrap()
        .args([
            "--schemas",
            "../schemas",
            "eval",
            MIX,
            "--replay",
            "a.json",
            "--record",
            "b.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::cargo_bin("agent-contract")
        .unwrap()
        .args([
            "--schemas",
            "../schemas",
            "eval",
            MIX,
            "--replay",
            "/no/such/recording.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The plan generator's answers as [`plan_answer`]; a judge's (its system prompt names it) is
/// a refusal with its reason.
fn judged_answer(request: &str) -> String {
    if request.contains("evaluation judge") {
        json!({"pass": false, "reason": "no fallback selector is named"}).to_string()
    } else {
        plan_answer(request)
    }
}

/// A `judge` assertion asks the `--judge-model` (its answer held to `{pass, reason}`): the
/// case is marked judged, with the reason; without a judge model it is skipped, and said so.
#[test]
fn judges_decide_rubrics_or_are_skipped() {
    let (url, seen) = fake_model(judged_answer);
    let dir = temp("judged");
    let json_path = dir.join("r.json");
    let evals = "../tests/fixtures/evals/judged";
    let out = eval(
        &url,
        evals,
        &[
            "--json",
            json_path.to_str().unwrap(),
            "--judge-model",
            "openai:judge-model",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = read_json(&json_path);
    let case = &report["cases"][0];
    assert_eq!(case["verdict"], "fail");
    assert_eq!(case["judged"], true);
    assert_eq!(
        case["judgements"][0]["reason"],
        "no fallback selector is named"
    );
    assert_eq!(case["failures"][0]["check"], "judge");
    let judge_calls = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.contains("evaluation judge"))
        .count();
    assert_eq!(judge_calls, 1);
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|r| r.contains("\"model\":\"judge-model\""))
    );
    // Without a judge model: the rubric is skipped and the report says so.
    let out = eval(&url, evals, &["--json", json_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("1 judge assertion(s) skipped: no `--judge-model`"),
        "{stdout}"
    );
    let report = read_json(&json_path);
    assert_eq!(report["cases"][0]["judged"], false);
    assert_eq!(report["cases"][0]["judges_skipped"], 1);
    let _ = std::fs::remove_dir_all(dir);
}
