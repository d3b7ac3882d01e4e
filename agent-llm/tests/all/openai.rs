//! The OpenAI wire format against a loopback server: request shape, response parsing,
//! compatible servers' quirks, retries and failures.

use crate::common::*;
use agent_contracts_llm::{ManualClock, Retrying, StructuredOutput};
use agent_contracts_runtime::{
    ChatModel, Message, contract::ToolDefinition, model::ChatRequest, model::ModelError,
    model::ModelOptions, model::ToolCallRequest, model::Usage,
};
use agent_contracts_runtime::{model::OutputSchema, model::ToolChoice};
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

fn tool() -> ToolDefinition {
    ToolDefinition {
        name: "run_discovery_agent".into(),
        description: "Finds elements".into(),
        parameters: json!({"type": "object", "properties": {"task": {"type": "string"}}}),
    }
}

fn text_reply() -> ResponseTemplate {
    ok(completion(
        json!({"role": "assistant", "content": "done"}),
        "stop",
    ))
}

#[tokio::test]
async fn a_reply_brings_its_message_usage_finish_reason_model_and_id() {
    let reply = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_a", "type": "function",
         "function": {"name": "run_discovery_agent", "arguments": "{\"task\": \"look\"}"}}]});
    let server = serve(OPENAI_PATH, vec![ok(completion(reply, "tool_calls"))]).await;
    let clock = Arc::new(ManualClock::new());
    let response = openai(&server, &clock)
        .complete(&request())
        .await
        .expect("a reply");
    assert_eq!(response.message.content, "");
    assert_eq!(
        response.message.tool_calls,
        [ToolCallRequest {
            id: "call_a".into(),
            name: "run_discovery_agent".into(),
            arguments: r#"{"task": "look"}"#.into(),
        }]
    );
    let usage = Usage::new(12, 5)
        .with_cached_tokens(4)
        .with_cache_write_tokens(0)
        .with_reasoning_tokens(3);
    assert_eq!(response.usage, Some(usage));
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.model.as_deref(), Some("gpt-test-2026"));
    assert_eq!(response.id.as_deref(), Some("chatcmpl-1"));
}

#[tokio::test]
async fn the_request_speaks_chat_completions() {
    let server = serve(OPENAI_PATH, vec![text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let call = ToolCallRequest {
        id: "call_1".into(),
        name: "run_discovery_agent".into(),
        arguments: "{\"task\": ".into(),
    };
    let mut request = request();
    request.tools = vec![tool()];
    request
        .messages
        .push(Message::assistant("").with_tool_calls(vec![call]));
    request
        .messages
        .push(Message::tool("call_1", r#"{"success":false}"#));
    request.options = ModelOptions::default()
        .with_temperature(0.5)
        .with_max_tokens(300)
        .with_tool_choice(ToolChoice::Tool("run_discovery_agent".into()))
        .with_parallel_tool_calls(false)
        .with_extra(
            [
                ("seed".to_owned(), json!(7)),
                ("temperature".to_owned(), json!(0.25)),
            ]
            .into_iter()
            .collect(),
        );
    openai(&server, &clock)
        .complete(&request)
        .await
        .expect("a reply");
    let received = received(&server).await;
    let auth = received[0]
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    assert_eq!(auth, Some(format!("Bearer {KEY}").as_str()));
    let body: Value = serde_json::from_slice(&received[0].body).expect("JSON");
    assert_eq!(
        body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "plan it"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                    "type": "function",
                    "function": {"name": "run_discovery_agent", "arguments": "{\"task\": "}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "{\"success\":false}"},
            ],
            "tools": [{
                "type": "function",
                "function": {
                    "name": "run_discovery_agent",
                    "description": "Finds elements",
                    "parameters": {"type": "object", "properties": {"task": {"type": "string"}}},
                }
            }],
            "tool_choice": {"type": "function", "function": {"name": "run_discovery_agent"}},
            "parallel_tool_calls": false,
            "temperature": 0.25,
            "max_tokens": 300,
            "seed": 7,
        })
    );
}

#[tokio::test]
async fn compatible_servers_quirks_are_tolerated() {
    // An empty finish reason, arguments as an object, a call without an id, text in parts.
    let body = r#"{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],
        "tool_calls":[{"type":"function","function":{"name":"run_a","arguments":{"b":1.50,"a":[10000000000000000000001]}}}]},
        "finish_reason":""}]}"#;
    let server = serve(OPENAI_PATH, vec![ok(body)]).await;
    let clock = Arc::new(ManualClock::new());
    let response = openai(&server, &clock)
        .complete(&request())
        .await
        .expect("a reply");
    assert_eq!(response.finish_reason, None);
    assert_eq!(response.usage, None);
    assert_eq!(response.message.content, "ok");
    let call = &response.message.tool_calls[0];
    assert_eq!(
        call.arguments,
        r#"{"b":1.50,"a":[10000000000000000000001]}"#
    );
    assert!(call.id.starts_with("call_"), "{}", call.id);
}

#[tokio::test]
async fn big_integers_and_decimals_survive_a_round_trip() {
    let arguments = r#"{"z": 1, "count": 123456789012345678901234567890, "confidence": 0.60}"#;
    let reply = json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "run_discovery_agent", "arguments": arguments}}]});
    let server = serve(
        OPENAI_PATH,
        vec![ok(completion(reply, "tool_calls")), text_reply()],
    )
    .await;
    let clock = Arc::new(ManualClock::new());
    let model = openai(&server, &clock);
    let mut request = request();
    let first = model.complete(&request).await.expect("a reply").message;
    assert_eq!(first.tool_calls[0].arguments, arguments);
    request.messages.push(first);
    request.messages.push(Message::tool("c1", "{}"));
    model.complete(&request).await.expect("a reply");
    let sent = &bodies(&server).await[1]["messages"][2]["tool_calls"][0]["function"]["arguments"];
    assert_eq!(sent.as_str(), Some(arguments));
}

#[tokio::test]
async fn a_429_with_retry_after_35_is_waited_out_then_succeeds() {
    let limited = status(429).insert_header("retry-after", "35");
    let server = serve(OPENAI_PATH, vec![limited, text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let response = openai(&server, &clock)
        .complete(&request())
        .await
        .expect("a reply");
    assert_eq!(response.message.content, "done");
    assert_eq!(clock.sleeps(), [Duration::from_secs(35)]);
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_wait_above_the_ceiling_backs_off_instead_of_ending_the_run() {
    let limited = status(429).insert_header("retry-after", "3600");
    let server = serve(OPENAI_PATH, vec![limited, text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let response = openai(&server, &clock).complete(&request()).await;
    assert_eq!(
        response.map(|r| r.message.content).ok().as_deref(),
        Some("done")
    );
    assert_eq!(
        clock.sleeps(),
        [Duration::from_millis(500)],
        "the first backoff"
    );
}

#[tokio::test]
async fn x_should_retry_is_obeyed_over_the_status() {
    let final_503 = status(503).insert_header("x-should-retry", "false");
    let server = serve(OPENAI_PATH, vec![final_503, text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let error = openai(&server, &clock).complete(&request()).await;
    assert!(
        matches!(
            error,
            Err(ModelError::Status {
                status: 503,
                should_retry: Some(false),
                ..
            })
        ),
        "{error:?}"
    );
    assert_eq!(received(&server).await.len(), 1, "not retried");
    let quota = status(429).insert_header("x-should-retry", "false");
    let retried_409 = status(409).insert_header("x-should-retry", "true");
    let server = serve(OPENAI_PATH, vec![retried_409, quota]).await;
    let error = openai(&server, &clock).complete(&request()).await;
    assert!(
        matches!(&error, Err(ModelError::GaveUp { attempts: 2, last }) if matches!(**last, ModelError::Status { status: 429, .. })),
        "an exhausted quota is final: {error:?}"
    );
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_retry_after_date_and_retry_after_ms_are_honoured() {
    let clock = Arc::new(ManualClock::new());
    // The date is read against the system time when the response arrives.
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(4));
    let responses = vec![
        status(503).insert_header("retry-after", date.as_str()),
        status(429)
            .insert_header("retry-after-ms", "250")
            .insert_header("retry-after", "9"),
        text_reply(),
    ];
    let server = serve(OPENAI_PATH, responses).await;
    openai(&server, &clock)
        .complete(&request())
        .await
        .expect("a reply");
    let sleeps = clock.sleeps();
    assert_eq!(sleeps.len(), 2);
    // HTTP dates have whole seconds: the wait is the 4 s less what the second had run.
    assert!(
        (Duration::from_secs(2)..=Duration::from_secs(4)).contains(&sleeps[0]),
        "{sleeps:?}"
    );
    assert_eq!(sleeps[1], Duration::from_millis(250));
}

#[tokio::test]
async fn repeated_500s_end_in_an_error_after_the_bound() {
    let server = serve(OPENAI_PATH, (0..6).map(|_| status(500)).collect()).await;
    let clock = Arc::new(ManualClock::new());
    let error = openai(&server, &clock)
        .complete(&request())
        .await
        .expect_err("an error");
    assert!(
        matches!(&error, ModelError::GaveUp { attempts: 4, last } if matches!(**last, ModelError::Status { status: 500, .. })),
        "{error:?}"
    );
    assert_eq!(received(&server).await.len(), 4);
    let ms = Duration::from_millis;
    assert_eq!(clock.sleeps(), [ms(500), ms(1000), ms(2000)]);
}

#[tokio::test]
async fn a_400_and_a_401_are_sent_exactly_once() {
    for code in [400, 401] {
        // The body echoes the key, as some servers do: the error must not.
        let echo = ResponseTemplate::new(code).set_body_string(format!("bad key {KEY}"));
        let server = serve(OPENAI_PATH, vec![echo, text_reply()]).await;
        let clock = Arc::new(ManualClock::new());
        let error = openai(&server, &clock)
            .complete(&request())
            .await
            .expect_err("an error");
        assert_eq!(
            error,
            ModelError::Status {
                status: code,
                body: "bad key ****".into(),
                retry_after: None,
                should_retry: None,
            }
        );
        assert!(!error.is_retryable());
        assert_eq!(received(&server).await.len(), 1, "HTTP {code}");
        assert!(clock.sleeps().is_empty());
    }
}

#[tokio::test]
async fn a_malformed_body_is_an_error_and_not_retried() {
    let server = serve(OPENAI_PATH, vec![ok("<html>oops</html>"), text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let error = openai(&server, &clock)
        .complete(&request())
        .await
        .expect_err("an error");
    let ModelError::Malformed(text) = &error else {
        panic!("{error:?}")
    };
    assert!(text.ends_with("body starts: <html>oops</html>"), "{text}");
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_response_without_choices_is_malformed() {
    let server = serve(
        OPENAI_PATH,
        vec![ok(r#"{"id":"x","object":"chat.completion"}"#)],
    )
    .await;
    let clock = Arc::new(ManualClock::new());
    let error = openai(&server, &clock)
        .complete(&request())
        .await
        .expect_err("an error");
    assert_eq!(
        error,
        ModelError::Malformed(
            r#"the response has no `choices`; body starts: {"id":"x","object":"chat.completion"}"#
                .into()
        )
    );
}

#[tokio::test]
async fn a_slow_server_times_out_each_attempt() {
    let slow = || text_reply().set_delay(Duration::from_secs(5));
    let server = serve(OPENAI_PATH, vec![slow(), slow()]).await;
    let clock = Arc::new(ManualClock::new());
    let model = openai_builder(&server)
        .timeout(Duration::from_millis(150))
        .build()
        .expect("a model");
    let policy = exact_retries().with_max_attempts(2);
    let model = Retrying::new(model, policy).clock(clock.clone());
    let error = model.complete(&request()).await.expect_err("an error");
    assert_eq!(
        error,
        ModelError::GaveUp {
            attempts: 2,
            last: Box::new(ModelError::Timeout)
        }
    );
    assert_eq!(clock.sleeps(), [Duration::from_millis(500)]);
}

#[tokio::test]
async fn an_output_schema_asks_for_json_schema_strict_only_in_the_subset() {
    let strict = json!({"type": "object", "properties": {"a": {"type": "string"}},
        "required": ["a"], "additionalProperties": false});
    let loose = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let server = serve(OPENAI_PATH, (0..3).map(|_| text_reply()).collect()).await;
    for (schema, mode) in [
        (&strict, StructuredOutput::Auto),
        (&loose, StructuredOutput::Auto),
        (&strict, StructuredOutput::Off),
    ] {
        let model = openai_builder(&server)
            .structured_output(mode)
            .build()
            .expect("ok");
        let request = request().with_output_schema(OutputSchema::new("plan", schema.clone()));
        model.complete(&request).await.expect("a reply");
    }
    let formats: Vec<Value> = bodies(&server)
        .await
        .iter()
        .map(|b| b["response_format"].clone())
        .collect();
    let format = |schema: &Value, strict| json!({"type": "json_schema", "json_schema": {"name": "plan", "schema": schema, "strict": strict}});
    assert_eq!(
        formats,
        [format(&strict, true), format(&loose, false), Value::Null]
    );
}

#[test]
fn keys_stay_out_of_debug() {
    let model = agent_contracts_llm::HttpModel::builder(agent_contracts_llm::Provider::OpenAi, "m")
        .api_key(KEY)
        .build()
        .expect("a model");
    let text = format!("{model:?}");
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("ApiKey(****)"), "{text}");
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // A port that was just free: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let clock = Arc::new(ManualClock::new());
    let model =
        agent_contracts_llm::HttpModel::builder(agent_contracts_llm::Provider::OpenAi, "gpt-test")
            .base_url(format!("http://127.0.0.1:{port}/v1"))
            .build()
            .expect("a model");
    let policy = exact_retries().with_max_attempts(3);
    let model = Retrying::new(model, policy).clock(clock.clone());
    let error = model.complete(&request()).await.expect_err("an error");
    assert!(
        matches!(&error, ModelError::GaveUp { attempts: 3, last } if matches!(**last, ModelError::Transport(_))),
        "{error:?}"
    );
    assert!(error.is_retryable());
    // The URL shown is the one the base URL makes (`errors.rs` pins that secrets stay out).
    assert!(
        error.to_string().contains(&format!(
            "POST http://127.0.0.1:{port}/v1/chat/completions: "
        )),
        "{error}"
    );
    assert_eq!(clock.sleeps().len(), 2);
}

#[tokio::test]
async fn an_endless_body_is_cut_off() {
    let huge = ok(format!(
        "{{\"choices\": \"{}\"}}",
        "x".repeat(17 * 1024 * 1024)
    ));
    let server = serve(OPENAI_PATH, vec![huge]).await;
    let clock = Arc::new(ManualClock::new());
    let error = openai(&server, &clock)
        .complete(&request())
        .await
        .expect_err("an error");
    let expected = format!(
        "the response body is larger than {} bytes",
        16 * 1024 * 1024
    );
    assert_eq!(error, ModelError::Malformed(expected));
}

#[tokio::test]
async fn retries_stop_when_the_next_wait_would_pass_the_total_time() {
    let busy = || status(503).insert_header("retry-after", "5");
    let server = serve(OPENAI_PATH, vec![busy(), busy(), busy(), text_reply()]).await;
    let clock = Arc::new(ManualClock::new());
    let policy = exact_retries().with_max_elapsed(Duration::from_secs(8));
    let model = openai_builder(&server).build().expect("a model");
    let model = Retrying::new(model, policy).clock(clock.clone());
    let error = model.complete(&request()).await.expect_err("an error");
    assert!(
        matches!(&error, ModelError::GaveUp { attempts: 2, last } if matches!(**last, ModelError::Status { status: 503, .. })),
        "{error:?}"
    );
    assert_eq!(clock.sleeps(), [Duration::from_secs(5)]);
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_reasoning_effort_is_sent_with_max_completion_tokens() {
    let server = serve(OPENAI_PATH, vec![text_reply()]).await;
    let model = openai_builder(&server)
        .reasoning_effort(agent_contracts_llm::ReasoningEffort::Low)
        .options(ModelOptions::default().with_max_tokens(900))
        .build()
        .expect("a valid configuration");
    let response = model.complete(&request()).await.expect("a reply");
    assert_eq!(response.usage.map(|u| u.reasoning_tokens), Some(3));
    let body = &bodies(&server).await[0];
    assert_eq!(body["reasoning_effort"], "low");
    assert_eq!(body["max_completion_tokens"], 900);
    assert_eq!(body.get("max_tokens"), None);
}
