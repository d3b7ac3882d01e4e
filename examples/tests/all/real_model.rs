//! `plan-pipeline --model openai:M` and `--model anthropic:M` against a loopback server that
//! speaks each provider's wire format and replays the plan-generator story: a refused first
//! request, the retry error, the golden prompt, an output retry, then the plan. And
//! `event-planning --model ...` the same way, through its question to the user.

use agent_contracts::transcript::Event;
use agent_contracts::workflow::WorkflowOutcome;
use agent_contracts::{Message, model::Role};
use agent_examples::{event_planning, pipeline};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const PLAN_PIPELINE: &str = env!("CARGO_BIN_EXE_plan-pipeline");
const EVENT_PLANNING: &str = env!("CARGO_BIN_EXE_event-planning");
const GOLDEN: &str = include_str!("../../../tests/fixtures/plan_generator/expected_user_prompt.md");

/// The assistant replies of a transcript, in call order.
fn replies(events: Vec<Event>) -> Vec<Message> {
    events
        .into_iter()
        .filter_map(|event| match event {
            Event::Message { message, .. } if message.role == Role::Assistant => Some(message),
            _ => None,
        })
        .collect()
}

/// The scripted workflow's replies, through the question and after the answer.
async fn event_planning_story() -> Vec<Message> {
    let workflow = event_planning::workflow();
    let runner = workflow.runner(Arc::new(event_planning::scripted_model()));
    let Ok(WorkflowOutcome::NeedsInput { state, .. }) = runner.start(event_planning::REQUEST).await
    else {
        panic!("the scripted workflow asks the user");
    };
    let finished = runner.resume(state, event_planning::HUMAN_ANSWER).await;
    assert!(matches!(finished, Ok(WorkflowOutcome::Finished { .. })));
    replies(runner.transcript().events())
}

/// The scripted model's replies in call order, with a plan that breaks the output contract
/// before the good one.
async fn story() -> Vec<Message> {
    story_with(r#"{"plan_file_path": "", "status": "done"}"#).await
}

/// The scripted model's replies in call order, with `bad` (a plan that breaks the output
/// contract) before the good one.
pub(crate) async fn story_with(bad: &str) -> Vec<Message> {
    let (runtime, outcome) = pipeline::run(Arc::new(pipeline::scripted_model())).await;
    outcome.expect("the scripted pipeline finishes");
    let mut replies = replies(runtime.transcript().events());
    let last = replies
        .iter()
        .rposition(|m| {
            m.tool_calls
                .iter()
                .any(|c| c.name == "run_plan_generator_agent")
        })
        .expect("a plan call");
    replies.insert(last + 1, Message::assistant(bad));
    replies
}

fn openai_body(n: usize, m: &Message) -> String {
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .map(|c| {
            json!({"id": format!("call_{n}"),
        "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    let message = match calls.is_empty() {
        true => json!({"role": "assistant", "content": m.content}),
        false => json!({"role": "assistant", "content": null, "tool_calls": calls}),
    };
    json!({"id": format!("chatcmpl-{n}"), "model": "m", "choices": [{"message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
    .to_string()
}

/// Built as text so that `input` is the call's argument text exactly, as the API sends it.
fn anthropic_body(n: usize, m: &Message) -> String {
    let mut content = Vec::new();
    if !m.content.is_empty() {
        content.push(json!({"type": "text", "text": m.content}).to_string());
    }
    for c in &m.tool_calls {
        let name = Value::from(c.name.as_str());
        content.push(format!(
            r#"{{"type":"tool_use","id":"toolu_{n}","name":{name},"input":{}}}"#,
            c.arguments
        ));
    }
    format!(
        r#"{{"id":"msg_{n}","type":"message","model":"m","content":[{}],"stop_reason":"end_turn","usage":{{"input_tokens":100,"output_tokens":10}}}}"#,
        content.join(",")
    )
}

/// Turns the `n`th reply into a provider's response body.
type WireBody = fn(usize, &Message) -> String;

/// Answers requests in order with the story's bodies.
struct Replay(Mutex<std::vec::IntoIter<String>>);

impl Respond for Replay {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        match self.0.lock().ok().and_then(|mut bodies| bodies.next()) {
            Some(body) => ResponseTemplate::new(200).set_body_raw(body, "application/json"),
            None => ResponseTemplate::new(599),
        }
    }
}

/// Runs `binary --model provider:test-model` against a server replaying `replies` in the
/// provider's format; its stdout and the request bodies the server received.
async fn run_binary(
    binary: &str,
    provider: &str,
    replies: Vec<Message>,
    body: WireBody,
) -> (String, Vec<Value>) {
    let bodies: Vec<String> = replies
        .iter()
        .enumerate()
        .map(|(n, m)| body(n, m))
        .collect();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Replay(Mutex::new(bodies.into_iter())))
        .mount(&server)
        .await;
    let uri = server.uri();
    let command = tokio::process::Command::new(binary)
        .args(["--model", &format!("{provider}:test-model")])
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{uri}/v1"))
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &uri)
        .output()
        .await
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&command.stdout).into_owned();
    assert!(
        command.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&command.stderr)
    );
    let requests = server.received_requests().await.unwrap_or_default();
    let requests = requests
        .iter()
        .map(|r| r.body_json().expect("JSON"))
        .collect();
    (stdout, requests)
}

fn assert_story(stdout: &str, requests: &[Value]) {
    assert!(stdout.contains("retry error from run_plan_generator_agent (input contract)"));
    assert!(stdout.contains("[plan_generator_agent] retry error (output contract)"));
    assert!(
        stdout.contains(
            "=== summary ===\n11 model calls, 1 input retry, 1 output retry; 1100 input tokens (0 cached), 110 output tokens"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("=== [main_agent] assistant ===\nThe crawl plan is written to plans/login_form_automation.md")
    );
    let text = serde_json::to_string(requests).unwrap_or_default();
    assert_eq!(
        text.matches(&serde_json::to_string(GOLDEN).unwrap_or_default())
            .count(),
        2,
        "the golden prompt, asked twice"
    );
}

#[tokio::test]
async fn plan_pipeline_runs_on_chat_completions() {
    let (stdout, requests) = run_binary(PLAN_PIPELINE, "openai", story().await, openai_body).await;
    assert_story(&stdout, &requests);
    assert!(requests.iter().all(|r| r["model"] == "test-model"));
}

#[tokio::test]
async fn plan_pipeline_runs_on_messages() {
    let (stdout, requests) =
        run_binary(PLAN_PIPELINE, "anthropic", story().await, anthropic_body).await;
    assert_story(&stdout, &requests);
    assert!(requests.iter().all(|r| r["system"].is_string()));
}

#[tokio::test]
async fn event_planning_runs_on_both_wire_formats() {
    let formats: [(&str, WireBody); 2] = [("openai", openai_body), ("anthropic", anthropic_body)];
    for (provider, body) in formats {
        let replies = event_planning_story().await;
        let calls = replies.len();
        let (stdout, requests) = run_binary(EVENT_PLANNING, provider, replies, body).await;
        assert_eq!(requests.len(), calls);
        let usage = format!(
            "=== summary ===\n{calls} model calls, 0 input retries, 0 output retries; {} input tokens",
            calls * 100
        );
        assert!(stdout.contains(&usage), "{stdout}");
        assert!(
            stdout.contains(&format!("=== plan ===\n{}", event_planning::PLAN)),
            "{stdout}"
        );
    }
}

/// The Anthropic bodies of the story, answered by `claude-b`.
fn claude_b_body(n: usize, m: &Message) -> String {
    anthropic_body(n, m).replace(r#""model":"m""#, r#""model":"claude-b""#)
}

#[tokio::test]
async fn a_model_list_falls_back_from_a_503_to_the_next_model() {
    let replies = story().await;
    let calls = replies.len();
    let bodies: Vec<String> = replies
        .iter()
        .enumerate()
        .map(|(n, m)| claude_b_body(n, m))
        .collect();
    let server = MockServer::start().await;
    // OpenAI is down: every attempt a 503, each retry after a millisecond.
    let unavailable = ResponseTemplate::new(503)
        .insert_header("retry-after-ms", "1")
        .set_body_string(r#"{"error":{"message":"Service Unavailable"}}"#);
    Mock::given(method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(unavailable)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(wiremock::matchers::path("/v1/messages"))
        .respond_with(Replay(Mutex::new(bodies.into_iter())))
        .mount(&server)
        .await;
    let uri = server.uri();
    let output = tokio::process::Command::new(PLAN_PIPELINE)
        .args(["--model", "openai:gpt-a,anthropic:claude-b"])
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{uri}/v1"))
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &uri)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("=== model: openai:gpt-a,anthropic:claude-b ===\n"));
    assert!(
        stdout.contains(&format!(
            "=== summary ===\n{calls} model calls, 1 input retry, 1 output retry"
        )),
        "{stdout}"
    );
    // Every answer came from the second model, and the transcript says so.
    assert_eq!(
        stdout.matches(" out (claude-b) ===").count(),
        calls,
        "{stdout}"
    );
    let requests = server.received_requests().await.unwrap_or_default();
    let to = |path: &str| requests.iter().filter(|r| r.url.path() == path).count();
    assert_eq!(to("/v1/messages"), calls);
    assert_eq!(to("/v1/chat/completions"), calls * 4, "4 attempts per call");
    // The retries and the fallback showed as they happened.
    assert!(stderr.contains("model call failed, retrying"), "{stderr}");
    assert!(stderr.contains("falling back to the next"), "{stderr}");
}

#[test]
fn the_binaries_print_their_version() {
    for (binary, name) in [
        (PLAN_PIPELINE, "plan-pipeline"),
        (EVENT_PLANNING, "event-planning"),
        (env!("CARGO_BIN_EXE_agent-demo"), "agent-demo"),
    ] {
        let output = std::process::Command::new(binary)
            .arg("--version")
            .output()
            .expect("the binary runs");
        assert!(output.status.success(), "{name}");
        let expected = format!("{name} {}\n", env!("CARGO_PKG_VERSION"));
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
    }
}
