//! Errors that say what and where: a transport error names the URL (never its credentials)
//! and the attempts made; a rate limit that was never lifted carries the provider's message.
//! And `azure:` specs, configured from the environment, reach the deployment.

use crate::common::*;
use agent_contracts_llm::{HttpModel, ManualClock, Provider};
use agent_contracts_runtime::{ChatModel, Message, model::ChatRequest, model::ModelError};
use std::sync::Arc;
use wiremock::ResponseTemplate;

fn request() -> ChatRequest {
    ChatRequest::new("a", vec![Message::user("hi")], Vec::new())
}

/// A loopback port nothing listens on: bound by the OS, then closed.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("an address").port();
    drop(listener);
    port
}

#[tokio::test]
async fn a_transport_error_names_the_url_without_its_secrets_and_the_attempts() {
    let port = closed_port();
    let base = format!("http://user:hunter2@127.0.0.1:{port}/v1?api-version=7&sig=s3cr3t");
    let model = HttpModel::builder(Provider::OpenAi, "gpt-test")
        .base_url(base)
        .api_key(KEY)
        .build()
        .expect("a valid configuration");
    let clock = Arc::new(ManualClock::new());
    let error = retrying(model, &clock)
        .complete(&request())
        .await
        .expect_err("nothing listens");
    let ModelError::GaveUp { attempts: 4, last } = &error else {
        panic!("{error:?}")
    };
    assert!(matches!(**last, ModelError::Transport(_)), "{last:?}");
    let text = error.to_string();
    let url = format!("POST http://127.0.0.1:{port}/v1/chat/completions?api-version=7&sig=****");
    assert!(
        text.starts_with(&format!("transport error: {url}: ")),
        "{text}"
    );
    assert!(text.ends_with(" (after 4 attempts)"), "{text}");
    for secret in ["hunter2", "user", "s3cr3t", KEY] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert_eq!(clock.sleeps().len(), 3, "three waits between four attempts");
}

#[tokio::test]
async fn a_rate_limit_never_lifted_carries_the_message_and_the_attempts() {
    let limited = || {
        let body = format!(
            r#"{{"error":{{"message":"Rate limit reached for gpt-test on tokens per min (key {KEY})","type":"tokens","code":"rate_limit_exceeded"}}}}"#
        );
        ResponseTemplate::new(429)
            .insert_header("retry-after", "2")
            .set_body_raw(body.into_bytes(), "application/json")
    };
    let server = serve(OPENAI_PATH, (0..4).map(|_| limited()).collect()).await;
    let clock = Arc::new(ManualClock::new());
    let error = openai(&server, &clock)
        .complete(&request())
        .await
        .expect_err("always limited");
    assert_eq!(
        error.to_string(),
        "the provider rate-limited the request (retry after 2000 ms): Rate limit reached for \
         gpt-test on tokens per min (key ****) (after 4 attempts)"
    );
    assert_eq!(received(&server).await.len(), 4);
    assert!(error.is_retryable(), "a fallback may move on");
}

#[tokio::test]
async fn an_azure_spec_reaches_the_deployment_with_its_key_and_api_version() {
    let path = "/openai/deployments/plan-gpt/chat/completions";
    let reply = completion(
        serde_json::json!({"role": "assistant", "content": "ok"}),
        "stop",
    );
    let server = serve(path, vec![ok(reply)]).await;
    let uri = server.uri();
    let env = |name: &str| match name {
        "AZURE_OPENAI_ENDPOINT" => Some(uri.clone()),
        "AZURE_OPENAI_API_KEY" => Some(KEY.to_owned()),
        "OPENAI_API_VERSION" => Some("2024-10-21".to_owned()),
        _ => None,
    };
    let model = agent_contracts_llm::from_spec_with("azure:plan-gpt", env).expect("a model");
    let reply = model.complete(&request()).await.expect("a reply");
    assert_eq!(reply.message.content, "ok");
    let sent = &received(&server).await[0];
    assert_eq!(sent.url.path(), path);
    assert_eq!(sent.url.query(), Some("api-version=2024-10-21"));
    assert_eq!(
        sent.headers.get("api-key").and_then(|v| v.to_str().ok()),
        Some(KEY)
    );
    assert!(sent.headers.get("authorization").is_none());

    let missing = |name: &'static str| {
        let env = |n: &str| (n != name).then(|| env(n)).flatten();
        agent_contracts_llm::from_spec_with("azure:plan-gpt", env).err()
    };
    for name in [
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "OPENAI_API_VERSION",
    ] {
        assert_eq!(
            missing(name),
            Some(agent_contracts_llm::ConfigError::MissingEnv(name)),
            "{name}"
        );
    }
}

#[test]
fn a_setting_of_another_provider_is_refused() {
    let cases = [
        (
            HttpModel::builder(Provider::OpenAi, "m").thinking(2048),
            "thinking",
        ),
        (
            HttpModel::builder(Provider::Anthropic, "m").organization("org"),
            "organization",
        ),
        (
            HttpModel::builder(Provider::OpenAi, "m").api_version("1"),
            "api_version",
        ),
        (
            HttpModel::builder(Provider::OpenAi, "m").auth_token("t"),
            "auth_token",
        ),
    ];
    for (builder, setting) in cases {
        let error = builder.build().err();
        assert!(
            matches!(error, Some(agent_contracts_llm::ConfigError::Invalid { setting: s, .. }) if s == setting),
            "{setting}: {error:?}"
        );
    }
    let error = HttpModel::builder(Provider::Azure, "d").build().err();
    assert!(
        matches!(
            error,
            Some(agent_contracts_llm::ConfigError::Invalid {
                setting: "api_version",
                ..
            })
        ),
        "{error:?}"
    );
}
