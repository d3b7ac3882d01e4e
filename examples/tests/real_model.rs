//! `plan-pipeline --model openai:M` and `--model anthropic:M` against a loopback server that
//! speaks each provider's wire format and replays the plan-generator story: a refused first
//! request, the retry error, the golden prompt, an output retry, then the plan.

use agent_core::transcript::Event;
use agent_core::{Message, Role};
use agent_examples::pipeline;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const GOLDEN: &str = include_str!("../../tests/fixtures/plan_generator/expected_user_prompt.md");

/// The scripted model's replies in call order, with a plan that breaks the output contract
/// before the good one.
async fn story() -> Vec<Message> {
    let (runtime, outcome) = pipeline::run(Arc::new(pipeline::scripted_model())).await;
    outcome.expect("the scripted pipeline finishes");
    let mut replies: Vec<Message> = runtime
        .transcript()
        .events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Message { message, .. } if message.role == Role::Assistant => Some(message),
            _ => None,
        })
        .collect();
    let last = replies
        .iter()
        .rposition(|m| {
            m.tool_calls
                .iter()
                .any(|c| c.name == "run_plan_generator_agent")
        })
        .expect("a plan call");
    let bad = r#"{"plan_file_path": "", "status": "done"}"#;
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

async fn run_binary(provider: &str, body: fn(usize, &Message) -> String) -> (String, Vec<Value>) {
    let bodies: Vec<String> = story()
        .await
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
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_plan-pipeline"))
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
            "=== usage ===\n11 model calls, 1100 input tokens (0 cached), 110 output tokens"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("=== done ===\nThe crawl plan is written to plans/login_form_automation.md")
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
    let (stdout, requests) = run_binary("openai", openai_body).await;
    assert_story(&stdout, &requests);
    assert!(requests.iter().all(|r| r["model"] == "test-model"));
}

#[tokio::test]
async fn plan_pipeline_runs_on_messages() {
    let (stdout, requests) = run_binary("anthropic", anthropic_body).await;
    assert_story(&stdout, &requests);
    assert!(requests.iter().all(|r| r["system"].is_string()));
}
