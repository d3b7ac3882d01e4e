//! The plan-generator story through `Runtime::run_loop`, on each provider's wire format:
//! a broken call (not JSON, for OpenAI) and a refused call come back to the main agent as
//! retry errors in tool results, the good call renders the golden prompt, the plan generator's
//! first answer breaks its output contract and the second passes.
//!
//! The server replays what the scripted pipeline's model says, turned into each provider's
//! responses, plus the story's extra turns.

use crate::common::*;
use agent_contracts_runtime::model::tool_calls;
use agent_contracts_runtime::transcript::Event;
use agent_contracts_runtime::{ChatModel, Message, Runtime, model::Role, runtime::Outcome};
use agent_examples::pipeline;
use serde_json::{Value, json};
use std::sync::Arc;
use wiremock::{MockServer, ResponseTemplate};

const GOLDEN: &str = include_str!("../../../tests/fixtures/plan_generator/expected_user_prompt.md");
const PLAN_TOOL: &str = "run_plan_generator_agent";
/// An answer that breaks the plan generator's output contract.
const BAD_PLAN: &str = r#"{"plan_file_path": "", "status": "done"}"#;
/// A call whose arguments are cut off: not JSON.
const BROKEN_CALL: &str = r#"{"task": "Generate Crawl Plan", "target_url": "#;

/// The model replies of the scripted pipeline, in call order, with the story's extra turns.
async fn story(broken_json: bool) -> Vec<Message> {
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
    let calls_plan = |m: &Message| m.tool_calls.iter().any(|c| c.name == PLAN_TOOL);
    let last = replies.iter().rposition(calls_plan).expect("a plan call");
    replies.insert(last + 1, Message::assistant(BAD_PLAN));
    if broken_json {
        let first = replies.iter().position(calls_plan).expect("a plan call");
        replies.insert(first, tool_calls([(PLAN_TOOL, BROKEN_CALL)]));
    }
    replies
}

fn openai_reply(n: usize, m: &Message) -> ResponseTemplate {
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .map(|c| {
            json!({"id": format!("call_{n}_{}", c.name),
        "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    let (message, finish) = if calls.is_empty() {
        (json!({"role": "assistant", "content": m.content}), "stop")
    } else {
        (
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
        )
    };
    ok(completion(message, finish))
}

fn anthropic_reply(n: usize, m: &Message) -> ResponseTemplate {
    anthropic_blocks(n, m, Vec::new())
}

/// The `n`th reply's thinking and redacted-thinking blocks, as the API writes them.
fn thinking_blocks(n: usize) -> [String; 2] {
    [
        format!(
            r#"{{"type":"thinking","thinking":"Step {n}: call the next agent.\nThen wait.","signature":"EqQBCkgIARAB+/sig{n}=="}}"#
        ),
        format!(r#"{{"type":"redacted_thinking","data":"EmwKAhgBEgy3va{n}/secret=="}}"#),
    ]
}

/// A thinking model's reply: its thinking blocks, then its text and tool calls.
fn thinking_reply(n: usize, m: &Message) -> ResponseTemplate {
    anthropic_blocks(n, m, thinking_blocks(n).into())
}

fn anthropic_blocks(n: usize, m: &Message, mut blocks: Vec<String>) -> ResponseTemplate {
    if !m.content.is_empty() {
        blocks.push(json!({"type": "text", "text": m.content}).to_string());
    }
    for c in &m.tool_calls {
        // The input is spliced in as text, as the API sends it.
        let head = json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": c.name});
        let head = head.to_string();
        blocks.push(format!(
            "{},\"input\":{}}}",
            &head[..head.len() - 1],
            c.arguments
        ));
    }
    let stop = if m.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ok(message(&blocks.join(","), stop))
}

async fn run(model: Arc<dyn ChatModel>) -> (Runtime, Outcome) {
    let runtime = Runtime::new(model);
    let outcome = runtime
        .run_loop(
            pipeline::MAIN_AGENT,
            pipeline::MAIN_SYSTEM,
            pipeline::USER_REQUEST,
            &pipeline::tools(),
        )
        .await
        .expect("the run finishes");
    (runtime, outcome)
}

/// What both wire formats must show: the final answer, the golden prompt asked twice (the
/// second time after the output retry), and an output retry in the transcript.
async fn assert_story(
    server: &MockServer,
    runtime: &Runtime,
    outcome: &Outcome,
    replies: &[Message],
) {
    assert_eq!(Some(&outcome.content), replies.last().map(|m| &m.content));
    let bodies = bodies(server).await;
    assert_eq!(bodies.len(), replies.len(), "one request per reply");
    let user_text = |m: &Value| match &m["content"] {
        Value::String(text) => text.clone(),
        blocks => blocks[0]["text"].as_str().unwrap_or_default().to_owned(),
    };
    let golden: Vec<&Value> = bodies
        .iter()
        .filter(|b| {
            b["messages"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["role"] == "user"))
                .map(user_text)
                .as_deref()
                == Some(GOLDEN)
        })
        .collect();
    assert_eq!(
        golden.len(),
        2,
        "the plan generator is asked twice on the golden prompt"
    );
    let retry = golden[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(user_text);
    let retry = retry.unwrap_or_default();
    assert!(
        retry.starts_with("Your answer broke your output contract."),
        "{retry}"
    );
    let output_retries = runtime.transcript().events().into_iter().filter(
        |e| matches!(e, Event::OutputRetry { agent, .. } if agent == "plan_generator_agent"),
    );
    assert_eq!(output_retries.count(), 1);
}

/// The tool results of the main agent's last request, parsed, as (call id, result).
fn results(last: &Value, anthropic: bool) -> Vec<(String, Value, bool)> {
    let messages = last["messages"].as_array().cloned().unwrap_or_default();
    let parse =
        |s: &Value| serde_json::from_str(s.as_str().unwrap_or_default()).unwrap_or(Value::Null);
    if !anthropic {
        return messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                    parse(&m["content"]),
                    false,
                )
            })
            .collect();
    }
    messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            (
                b["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                parse(&b["content"]),
                b["is_error"] == true,
            )
        })
        .collect()
}

#[tokio::test]
async fn the_plan_generator_story_over_chat_completions() {
    let replies = story(true).await;
    let responses = replies
        .iter()
        .enumerate()
        .map(|(n, m)| openai_reply(n, m))
        .collect();
    let server = serve(OPENAI_PATH, responses).await;
    let clock = Arc::new(agent_contracts_llm::ManualClock::new());
    let (runtime, outcome) = run(Arc::new(openai(&server, &clock))).await;
    assert_story(&server, &runtime, &outcome, &replies).await;
    let bodies = bodies(&server).await;
    let results = results(bodies.last().expect("requests"), false);
    let plan: Vec<&(String, Value, bool)> = results
        .iter()
        .filter(|(id, ..)| id.ends_with(PLAN_TOOL))
        .collect();
    assert_eq!(plan.len(), 3, "broken, refused, good");
    assert_eq!(plan[0].1["success"], false);
    assert_eq!(plan[0].1["error"], "Tool call arguments are not valid JSON");
    assert_eq!(
        plan[1].1["missing_fields"],
        json!(["collected_information"])
    );
    assert_eq!(plan[2].1["success"], true);
    // The broken text went back to the model exactly as it wrote it.
    let sent = bodies
        .last()
        .and_then(|b| b["messages"].as_array().cloned())
        .unwrap_or_default();
    let echoed = sent
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default());
    assert!(
        echoed
            .into_iter()
            .any(|c| c["function"]["arguments"] == BROKEN_CALL)
    );
}

#[tokio::test]
async fn the_plan_generator_story_over_messages() {
    let replies = story(false).await;
    let responses = replies
        .iter()
        .enumerate()
        .map(|(n, m)| anthropic_reply(n, m))
        .collect();
    let server = serve(ANTHROPIC_PATH, responses).await;
    let clock = Arc::new(agent_contracts_llm::ManualClock::new());
    let (runtime, outcome) = run(Arc::new(anthropic(&server, &clock))).await;
    assert_story(&server, &runtime, &outcome, &replies).await;
    let bodies = bodies(&server).await;
    let last = bodies.last().expect("requests");
    assert_eq!(last["system"], pipeline::MAIN_SYSTEM);
    let results = results(last, true);
    assert_eq!(results.len(), 5);
    let (_, refused, is_error) = &results[3];
    assert_eq!(refused["missing_fields"], json!(["collected_information"]));
    assert!(is_error, "a retry error is marked is_error");
    assert!(results.iter().enumerate().all(|(i, r)| r.2 == (i == 3)));
    // The full call's input (with `0.60` inside) went back byte for byte.
    let full = pipeline::full_plan_kwargs();
    let raw = String::from_utf8(
        received(&server)
            .await
            .last()
            .map(|r| r.body.clone())
            .unwrap_or_default(),
    );
    assert!(
        raw.unwrap_or_default()
            .contains(&format!("\"input\":{full}"))
    );
}

#[tokio::test]
async fn a_thinking_model_gets_its_blocks_back_unchanged() {
    let replies = story(false).await;
    let responses = replies
        .iter()
        .enumerate()
        .map(|(n, m)| thinking_reply(n, m))
        .collect();
    let server = serve(ANTHROPIC_PATH, responses).await;
    let clock = Arc::new(agent_contracts_llm::ManualClock::new());
    let model = retrying(
        anthropic_builder(&server)
            .thinking(2048)
            .build()
            .expect("a valid configuration"),
        &clock,
    );
    let (runtime, outcome) = run(Arc::new(model)).await;
    assert_story(&server, &runtime, &outcome, &replies).await;
    let bodies = bodies(&server).await;
    assert_eq!(
        bodies[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(bodies[0]["max_tokens"], 4096 + 2048, "the budget on top");
    // Every tool-calling turn goes back with its blocks first, exactly as they came.
    let raw: Vec<String> = received(&server)
        .await
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    let mut replayed = 0;
    for (n, reply) in replies.iter().enumerate() {
        if reply.tool_calls.is_empty() {
            continue;
        }
        let [thinking, redacted] = thinking_blocks(n);
        let expected = format!("{thinking},{redacted},");
        let later = raw[n + 1..].iter().filter(|body| body.contains(&expected));
        assert!(later.count() > 0, "reply {n}'s thinking comes back");
        let turn = bodies[n + 1..]
            .iter()
            .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| {
                m["content"][0] == serde_json::from_str::<Value>(&thinking).unwrap_or_default()
            });
        let turn = turn.expect("the assistant turn");
        assert_eq!(turn["role"], "assistant");
        assert_eq!(
            turn["content"][1],
            serde_json::from_str::<Value>(&redacted).unwrap_or_default()
        );
        replayed += 1;
    }
    assert!(
        replayed >= 3,
        "the main agent called tools {replayed} times"
    );
}
