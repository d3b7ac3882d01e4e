//! Account settings as the official SDKs read them, against a loopback server: OpenAI's
//! organization and project headers, Anthropic's gateway bearer token and betas, default
//! headers, Azure OpenAI, base URLs with a query; no key or token in `Debug` or errors.

use crate::common::*;
use agent_contracts_llm::{ConfigError, HttpModel, Provider};
use agent_contracts_runtime::{ChatModel, Message, model::ChatRequest, model::ModelError};
use serde_json::json;
use std::collections::BTreeMap;
use wiremock::{MockServer, Request};

fn request() -> ChatRequest {
    ChatRequest::new("main_agent", vec![Message::user("plan it")], Vec::new())
}

/// An environment of these variables only: the process's is never read or changed.
fn env(vars: &[(&str, String)]) -> impl Fn(&str) -> Option<String> {
    let vars: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    move |name| vars.get(name).cloned()
}

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

async fn one_request(server: &MockServer, model: impl ChatModel) -> Request {
    model.complete(&request()).await.expect("a reply");
    let mut received = received(server).await;
    assert_eq!(received.len(), 1);
    received.remove(0)
}

fn openai_reply() -> wiremock::ResponseTemplate {
    ok(completion(
        json!({"role": "assistant", "content": "done"}),
        "stop",
    ))
}

#[tokio::test]
async fn openai_org_and_project_ids_arrive_as_their_headers() {
    let server = serve(OPENAI_PATH, vec![openai_reply()]).await;
    let vars = [
        ("OPENAI_API_KEY", KEY.to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", server.uri())),
        ("OPENAI_ORG_ID", "org-acme".to_owned()),
        ("OPENAI_PROJECT_ID", "proj_crawler".to_owned()),
    ];
    let vars = env(&vars);
    let model = HttpModel::builder_from_env_with(Provider::OpenAi, "gpt-test", vars)
        .and_then(|b| b.build())
        .expect("a model");
    let sent = one_request(&server, model).await;
    assert_eq!(header(&sent, "openai-organization"), Some("org-acme"));
    assert_eq!(header(&sent, "openai-project"), Some("proj_crawler"));
    let bearer = format!("Bearer {KEY}");
    assert_eq!(header(&sent, "authorization"), Some(bearer.as_str()));
}

#[tokio::test]
async fn an_anthropic_auth_token_is_a_bearer_token_with_betas_and_default_headers() {
    let reply = ok(message(r#"{"type":"text","text":"done"}"#, "end_turn"));
    let server = serve(ANTHROPIC_PATH, vec![reply]).await;
    let vars = [
        ("ANTHROPIC_AUTH_TOKEN", KEY.to_owned()),
        ("ANTHROPIC_BASE_URL", server.uri()),
    ];
    let vars = env(&vars);
    let model = HttpModel::builder_from_env_with(Provider::Anthropic, "claude-test", vars)
        .expect("a builder")
        .beta("interleaved-thinking-2025-05-14")
        .beta("token-efficient-tools-2025-02-19")
        .header("x-gateway-tenant", "crawlers")
        .build()
        .expect("a model");
    let sent = one_request(&server, model).await;
    let bearer = format!("Bearer {KEY}");
    assert_eq!(header(&sent, "authorization"), Some(bearer.as_str()));
    assert_eq!(header(&sent, "x-api-key"), None, "no key, only the token");
    assert_eq!(
        header(&sent, "anthropic-beta"),
        Some("interleaved-thinking-2025-05-14,token-efficient-tools-2025-02-19")
    );
    assert_eq!(header(&sent, "x-gateway-tenant"), Some("crawlers"));
    assert_eq!(header(&sent, "anthropic-version"), Some("2023-06-01"));
}

#[test]
fn anthropic_needs_a_key_or_a_token() {
    let error =
        HttpModel::builder_from_env_with(Provider::Anthropic, "claude-test", env(&[])).err();
    assert_eq!(error, Some(ConfigError::MissingEnv("ANTHROPIC_API_KEY")));
}

#[tokio::test]
async fn azure_openai_takes_its_deployment_path_api_version_and_api_key() {
    let path = "/openai/deployments/gpt-4o-crawl/chat/completions";
    let server = serve(path, vec![openai_reply()]).await;
    let model = HttpModel::azure(&server.uri(), "gpt-4o-crawl", "2024-10-21")
        .api_key(KEY)
        .build()
        .expect("a model");
    let sent = one_request(&server, model).await;
    assert_eq!(sent.url.path(), path);
    assert_eq!(sent.url.query(), Some("api-version=2024-10-21"));
    assert_eq!(header(&sent, "api-key"), Some(KEY));
    assert_eq!(header(&sent, "authorization"), None);
}

#[tokio::test]
async fn a_base_url_with_a_query_keeps_it_on_every_endpoint() {
    let path = "/openai/deployments/d1/chat/completions";
    let server = serve(path, vec![openai_reply()]).await;
    let base = format!(
        "{}/openai/deployments/d1/?api-version=2025-01-01-preview",
        server.uri()
    );
    let model = HttpModel::builder(Provider::OpenAi, "d1")
        .base_url(base)
        .api_key(KEY)
        .build()
        .expect("a model");
    let sent = one_request(&server, model).await;
    assert_eq!(sent.url.path(), path);
    assert_eq!(sent.url.query(), Some("api-version=2025-01-01-preview"));
}

#[test]
fn a_bad_base_url_is_a_configuration_error_that_does_not_echo_it() {
    for url in [
        "not a url",
        "mailto:ops@example.com",
        "ftp://sk-in-url@host/v1",
    ] {
        let error = HttpModel::builder(Provider::OpenAi, "m")
            .base_url(url)
            .build()
            .err();
        let Some(ConfigError::Invalid { setting, reason }) = error else {
            panic!("{url}: {error:?}");
        };
        assert_eq!(setting, "base_url");
        assert!(!reason.contains("sk-in-url"), "{reason}");
    }
}

#[tokio::test]
async fn tokens_and_default_headers_stay_out_of_debug_and_errors() {
    let echo = wiremock::ResponseTemplate::new(401).set_body_string(format!("bad token {KEY}"));
    let server = serve(ANTHROPIC_PATH, vec![echo]).await;
    let model = HttpModel::builder(Provider::Anthropic, "claude-test")
        .base_url(server.uri())
        .auth_token(KEY)
        .header("x-gateway-key", "gw-secret-42");
    let text = format!("{model:?}");
    let model = model.build().expect("a model");
    let text = format!("{text}{model:?}");
    assert!(
        !text.contains(KEY) && !text.contains("gw-secret-42"),
        "{text}"
    );
    let error = model.complete(&request()).await.expect_err("a 401");
    assert!(
        matches!(&error, ModelError::Status { status: 401, body, .. } if body == "bad token ****"),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_request_timeout_comes_from_the_environment_for_the_clis() {
    // The first answer comes after 5 s: past the 0.2 s timeout, so the retry gets the second.
    let slow = openai_reply().set_delay(std::time::Duration::from_secs(5));
    let server = serve(OPENAI_PATH, vec![slow, openai_reply()]).await;
    let vars = [
        ("OPENAI_API_KEY", KEY.to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", server.uri())),
        (agent_contracts_llm::REQUEST_TIMEOUT_ENV, "0.2".to_owned()),
    ];
    let model =
        agent_contracts_llm::from_spec_with("openai:gpt-test", env(&vars)).expect("a model");
    let started = std::time::Instant::now();
    let reply = model.complete(&request()).await.expect("the retry answers");
    assert_eq!(reply.message.content, "done");
    assert_eq!(received(&server).await.len(), 2);
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
}

#[tokio::test]
async fn an_answer_cut_off_at_its_token_limit_is_its_own_error() {
    let cut = ok(completion(
        json!({"role": "assistant", "content": "{\"plan\": \"Fill the"}),
        "length",
    ));
    let server = serve(OPENAI_PATH, vec![cut, openai_reply()]).await;
    let clock = std::sync::Arc::new(agent_contracts_llm::ManualClock::new());
    let error = openai(&server, &clock).complete(&request()).await.err();
    assert_eq!(
        error,
        Some(ModelError::MaxTokens {
            output_tokens: Some(5)
        })
    );
    assert_eq!(received(&server).await.len(), 1, "not retried");

    let cut = ok(message(
        r#"{"type":"text","text":"{\"plan\": "}"#,
        "max_tokens",
    ));
    let server = serve(ANTHROPIC_PATH, vec![cut]).await;
    let error = anthropic(&server, &clock).complete(&request()).await.err();
    let error = error.map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some("the answer was cut off at its token limit (6 output tokens); raise `max_tokens`")
    );
}

#[test]
fn a_header_http_refuses_fails_the_build_without_showing_its_value() {
    let bad_value = HttpModel::builder(Provider::Anthropic, "claude-test")
        .auth_token(KEY)
        .header("x-gateway-key", "gw-secret-42\r\nx-injected: 1")
        .build()
        .expect_err("a value with a line break");
    let text = bad_value.to_string();
    assert!(
        matches!(
            &bad_value,
            ConfigError::Invalid {
                setting: "header",
                ..
            }
        ),
        "{bad_value:?}"
    );
    assert!(
        text.contains("x-gateway-key") && !text.contains("gw-secret-42"),
        "{text}"
    );
    let bad_name = HttpModel::builder(Provider::Anthropic, "claude-test")
        .auth_token(KEY)
        .header("x gateway", "crawlers")
        .build()
        .expect_err("a name with a space");
    assert_eq!(
        bad_name.to_string(),
        "the setting `header` is invalid: `x gateway` is not a header name"
    );
}
