//! OAuth access tokens at the HTTP endpoint: the protected-resource metadata served to anyone,
//! a request without a token or with a refused one (another audience, expired, a scope
//! missing, a signature of another key) answered 401/403 with a `WWW-Authenticate` that
//! points to the metadata, and a valid one served. The authorization server's JWKS is served
//! here, its key (ES256) made at test time.

use agent_contracts_mcp::oauth::OAuth;
use agent_contracts_mcp::{AgentServer, HttpSettings};
use agent_contracts_runtime::ScriptedModel;
use agent_examples::agents::{DiscoveryAgent, PlanGeneratorAgent};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

use crate::jwt::{AUDIENCE, ISSUER, METADATA_URL, Signer, claims, jwks_server, now};

async fn serve(settings: HttpSettings) -> SocketAddr {
    let model = Arc::new(ScriptedModel::default());
    let server =
        AgentServer::new(vec![&PlanGeneratorAgent, &DiscoveryAgent], model).with_http(settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    addr
}

/// An `initialize` with `token`: the status and the `WWW-Authenticate` header, if any.
async fn initialize(addr: SocketAddr, token: Option<&str>) -> (u16, Option<String>) {
    agent_contracts_mcp::tls::install_crypto_provider();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), challenge)
}

#[tokio::test]
async fn access_tokens_are_checked_and_refusals_point_to_the_metadata() {
    let signer = Signer::new("key-1");
    let stranger = Signer::new("key-1");
    let jwks = jwks_server(json!({"keys": [signer.jwk()]})).await;
    let oauth = OAuth::new(ISSUER, jwks, AUDIENCE).scope("agents:call");
    let addr = serve(HttpSettings::default().oauth(oauth)).await;

    // The metadata, to anyone, at both well-known places.
    agent_contracts_mcp::tls::install_crypto_provider();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let document: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        assert_eq!(
            document,
            json!({"resource": AUDIENCE, "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"], "scopes_supported": ["agents:call"]})
        );
    }

    let base = format!(r#"Bearer resource_metadata="{METADATA_URL}", scope="agents:call""#);
    assert_eq!(initialize(addr, None).await, (401, Some(base.clone())));
    let refused = |description: &str| {
        Some(format!(
            r#"{base}, error="invalid_token", error_description="{description}""#
        ))
    };
    let other_audience = signer.token(&claims(json!({"aud": "https://elsewhere.test/mcp"})));
    assert_eq!(
        initialize(addr, Some(&other_audience)).await,
        (
            401,
            refused("the token is not for the audience https://agents.test/mcp")
        )
    );
    let expired = signer.token(&claims(json!({"exp": now() - 120})));
    assert_eq!(
        initialize(addr, Some(&expired)).await,
        (401, refused("the token has expired"))
    );
    let other_issuer = signer.token(&claims(json!({"iss": "https://evil.test"})));
    assert_eq!(
        initialize(addr, Some(&other_issuer)).await,
        (401, refused("the token was not issued by https://as.test"))
    );
    let forged = stranger.token(&claims(json!({})));
    assert_eq!(
        initialize(addr, Some(&forged)).await,
        (
            401,
            refused("the token's signature does not verify: the key did not make it")
        )
    );
    assert_eq!(
        initialize(addr, Some("not-a-jwt")).await,
        (
            401,
            refused("the token is not a JWT: not three dot-separated parts")
        )
    );
    let narrow = signer.token(&claims(json!({"scope": "profile"})));
    assert_eq!(
        initialize(addr, Some(&narrow)).await,
        (
            403,
            Some(format!(
                r#"{base}, error="insufficient_scope", error_description="the token lacks the scope agents:call""#
            ))
        )
    );
    let valid = signer.token(&claims(json!({})));
    assert_eq!(initialize(addr, Some(&valid)).await, (200, None));
}

#[tokio::test]
async fn static_tokens_still_pass_beside_oauth_and_a_loopback_server_answers_its_own_origin() {
    let signer = Signer::new("key-2");
    let jwks = jwks_server(json!({"keys": [signer.jwk()]})).await;
    let settings = HttpSettings::default()
        .bearer_token("a-long-random-static-token")
        .oauth(OAuth::new(ISSUER, jwks, AUDIENCE));
    let addr = serve(settings).await;
    assert_eq!(
        initialize(addr, Some("a-long-random-static-token")).await,
        (200, None)
    );
    let valid = signer.token(&claims(json!({})));
    assert_eq!(initialize(addr, Some(&valid)).await, (200, None));

    // The server's own loopback origin is answered; another port's is not.
    agent_contracts_mcp::tls::install_crypto_provider();
    let metadata = |origin: String| {
        reqwest::Client::new()
            .get(format!(
                "http://{addr}/.well-known/oauth-protected-resource"
            ))
            .header("origin", origin)
            .send()
    };
    let port = addr.port();
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        assert_eq!(
            metadata(origin.clone()).await.unwrap().status().as_u16(),
            200,
            "{origin}"
        );
    }
    let other = format!("http://localhost:{}", port.wrapping_add(1));
    assert_eq!(metadata(other).await.unwrap().status().as_u16(), 403);
}
