//! The Anthropic wire format against a loopback server: the top-level system prompt, tool
//! results in one user message, raw `tool_use.input`, retries and failures.

use crate::common::*;
use agent_contracts_llm::ManualClock;
use agent_contracts_runtime::model::ToolChoice;
use agent_contracts_runtime::{
    ChatModel, Message, contract::ToolDefinition, model::ChatRequest, model::ModelError,
    model::ModelOptions, model::ToolCallRequest, model::Usage,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use wiremock::ResponseTemplate;

fn request() -> ChatRequest {
    ChatRequest::new(
        "main_agent",
        vec![Message::system("be brief"), Message::user("plan it")],
        Vec::new(),
    )
}

fn text_reply() -> ResponseTemplate {
    ok(message(r#"{"type":"text","text":"done"}"#, "end_turn"))
}

fn call(id: &str, arguments: &str) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: "run_discovery_agent".into(),
        arguments: arguments.into(),
    }
}

#[tokio::test]
async fn a_reply_brings_text_tool_calls_usage_and_stop_reason() {
    let input =
        r#"{"z": "last key first", "count": 123456789012345678901234567890, "confidence": 0.60}"#;
    let blocks = format!(
        r#"{{"type":"thinking","thinking":"hm"}},{{"type":"text","text":"Calling."}},{{"type":"tool_use","id":"toolu_1","name":"run_discovery_agent","input":{input}}}"#
    );
    let server = serve(ANTHROPIC_PATH, vec![ok(message(&blocks, "tool_use"))]).await;
    let clock = Arc::new(ManualClock::new());
    let response = anthropic(&server, &clock)
        .complete(&request())
        .await
        .expect("a reply");
    assert_eq!(response.message.content, "Calling.");
    assert_eq!(response.message.tool_calls, [call("toolu_1", input)]);
    let thinking = agent_contracts_runtime::model::Thinking::Thinking {
        thinking: "hm".into(),
        signature: String::new(),
    };
    assert_eq!(response.message.thinking, [thinking]);
    let usage = Usage::new(15, 6)
        .with_cached_tokens(3)
        .with_cache_write_tokens(2)
        .with_reasoning_tokens(0);
    assert_eq!(response.usage, Some(usage));
    assert_eq!(response.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(response.model.as_deref(), Some("claude-test-2026"));
    assert_eq!(response.id.as_deref(), Some("msg_1"));
}

#[tokio::test]
async fn the_request_speaks_the_messages_api() {
    let server = serve(ANTHROPIC_PATH, vec![text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let tool = ToolDefinition {
        name: "run_discovery_agent".into(),
        description: "Finds elements".into(),
        parameters: json!({"type": "object"}),
    };
    let mut request = request();
    request.tools = vec![tool.clone()];
    request.messages.extend([
        Message::assistant("Two calls.").with_tool_calls(vec![
            call("toolu_1", r#"{"task":"a"}"#),
            call("toolu_2", "{\"task\": "),
        ]),
        Message::tool("toolu_1", r#"{"success":true,"output":{}}"#),
        Message::tool(
            "toolu_2",
            r#"{"success":false,"error_type":"invalid_json"}"#,
        ),
        Message::user("and then?"),
    ]);
    request.options = ModelOptions::default()
        .with_temperature(0.5)
        .with_tool_choice(ToolChoice::Required)
        .with_parallel_tool_calls(false)
        .with_extra([("top_k".to_owned(), json!(5))].into_iter().collect());
    anthropic(&server, &clock)
        .complete(&request)
        .await
        .expect("a reply");
    let received = received(&server).await;
    let header = |name| received[0].headers.get(name).and_then(|v| v.to_str().ok());
    assert_eq!(header("x-api-key"), Some(KEY));
    assert_eq!(header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(header("authorization"), None);
    let body: Value = serde_json::from_slice(&received[0].body).expect("JSON");
    assert_eq!(
        body,
        json!({
            "model": "claude-test",
            "max_tokens": 4096,
            "system": "be brief",
            "tools": [{
                "name": "run_discovery_agent",
                "description": "Finds elements",
                "input_schema": {"type": "object"},
            }],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "temperature": 0.5,
            "top_k": 5,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "plan it"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Two calls."},
                    {"type": "tool_use", "id": "toolu_1", "name": "run_discovery_agent",
                     "input": {"task": "a"}},
                    // Text that is not an object never came from the API: it goes back empty.
                    {"type": "tool_use", "id": "toolu_2", "name": "run_discovery_agent",
                     "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": "{\"success\":true,\"output\":{}}"},
                    {"type": "tool_result", "tool_use_id": "toolu_2",
                     "content": "{\"success\":false,\"error_type\":\"invalid_json\"}",
                     "is_error": true},
                    {"type": "text", "text": "and then?"},
                ]},
            ],
        })
    );
}

#[tokio::test]
async fn tool_use_input_goes_back_byte_for_byte() {
    let input = r#"{"z": 1, "count": 123456789012345678901234567890, "a": [0.60, 1e400]}"#;
    let blocks = format!(
        r#"{{"type":"tool_use","id":"toolu_1","name":"run_discovery_agent","input":{input}}}"#
    );
    let server = serve(
        ANTHROPIC_PATH,
        vec![ok(message(&blocks, "tool_use")), text_reply()],
    )
    .await;
    let clock = Arc::new(ManualClock::new());
    let model = anthropic(&server, &clock);
    let mut request = request();
    let first = model.complete(&request).await.expect("a reply").message;
    assert_eq!(first.tool_calls[0].arguments, input);
    request.messages.push(first);
    request.messages.push(Message::tool("toolu_1", "{}"));
    model.complete(&request).await.expect("a reply");
    let sent = String::from_utf8(received(&server).await[1].body.clone()).expect("UTF-8");
    assert!(sent.contains(&format!(r#""input":{input}"#)), "{sent}");
}

#[tokio::test]
async fn a_429_with_retry_after_then_a_529_are_retried() {
    let responses = vec![
        status(429).insert_header("retry-after", "2"),
        status(529),
        text_reply(),
    ];
    let server = serve(ANTHROPIC_PATH, responses).await;
    let clock = Arc::new(ManualClock::new());
    let response = anthropic(&server, &clock)
        .complete(&request())
        .await
        .expect("a reply");
    assert_eq!(response.message.content, "done");
    assert_eq!(
        clock.sleeps(),
        [Duration::from_secs(2), Duration::from_millis(1000)]
    );
}

#[tokio::test]
async fn repeated_500s_end_in_an_error_after_the_bound() {
    let server = serve(ANTHROPIC_PATH, (0..6).map(|_| status(500)).collect()).await;
    let clock = Arc::new(ManualClock::new());
    let error = anthropic(&server, &clock)
        .complete(&request())
        .await
        .expect_err("an error");
    assert!(
        matches!(&error, ModelError::GaveUp { attempts: 4, last } if matches!(**last, ModelError::Status { status: 500, .. })),
        "{error:?}"
    );
    assert_eq!(received(&server).await.len(), 4);
}

#[tokio::test]
async fn a_400_and_a_401_are_sent_exactly_once() {
    for code in [400, 401] {
        let server = serve(ANTHROPIC_PATH, vec![status(code), text_reply()]).await;
        let clock = Arc::new(ManualClock::new());
        let error = anthropic(&server, &clock)
            .complete(&request())
            .await
            .expect_err("an error");
        let body = format!(r#"{{"error":{{"message":"status {code}","type":"test"}}}}"#);
        let expected = ModelError::Status {
            status: code,
            body,
            retry_after: None,
            should_retry: None,
        };
        assert_eq!(error, expected);
        assert_eq!(received(&server).await.len(), 1, "HTTP {code}");
    }
}

#[tokio::test]
async fn a_malformed_body_and_a_missing_content_are_errors() {
    let server = serve(
        ANTHROPIC_PATH,
        vec![ok("{\"content\": [tru"), ok(r#"{"id":"m"}"#)],
    )
    .await;
    let clock = Arc::new(ManualClock::new());
    let model = anthropic(&server, &clock);
    let first = model.complete(&request()).await.expect_err("an error");
    assert!(matches!(first, ModelError::Malformed(_)), "{first:?}");
    let second = model.complete(&request()).await.expect_err("an error");
    assert_eq!(
        second,
        ModelError::Malformed(r#"the response has no `content`; body starts: {"id":"m"}"#.into())
    );
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let server = serve(
        ANTHROPIC_PATH,
        vec![text_reply().set_delay(Duration::from_secs(5))],
    )
    .await;
    let model = anthropic_builder(&server)
        .timeout(Duration::from_millis(150))
        .build()
        .expect("a model");
    assert_eq!(model.complete(&request()).await, Err(ModelError::Timeout));
}

#[tokio::test]
async fn an_empty_answer_goes_back_as_a_non_empty_turn() {
    let server = serve(ANTHROPIC_PATH, vec![text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let mut request = request();
    request
        .messages
        .extend([Message::assistant(""), Message::user("again")]);
    anthropic(&server, &clock)
        .complete(&request)
        .await
        .expect("a reply");
    let messages = &bodies(&server).await[0]["messages"];
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "(empty)"}]})
    );
}

#[test]
fn a_thinking_budget_below_the_minimum_is_refused() {
    let error = agent_contracts_llm::HttpModel::builder(
        agent_contracts_llm::Provider::Anthropic,
        "claude-test",
    )
    .thinking(1000)
    .build()
    .err()
    .map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some(
            "the setting `thinking` is invalid: a budget of 1000 tokens is below the API's minimum of 1024"
        )
    );
}
