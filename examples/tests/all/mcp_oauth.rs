//! `agent-demo mcp --http` with the `--oauth-*` flags (the flags of `agent-contract mcp`
//! too: one file): it serves its protected-resource metadata, refuses a token of another
//! audience or past its expiry with 401 and a `WWW-Authenticate` that points to the
//! metadata, and answers a valid one.

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;

#[path = "../../../agent-mcp/tests/support/jwt.rs"]
mod jwt;
use jwt::{AUDIENCE, ISSUER, METADATA_URL, Signer, claims, jwks_server, now};

/// An `initialize` with `token`: the status and the `WWW-Authenticate` header, if any.
async fn initialize(url: &str, token: &str) -> (u16, Option<String>) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .body(body)
        .send()
        .await
        .unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), challenge)
}

#[tokio::test]
async fn mcp_with_the_oauth_flags_serves_its_metadata_and_checks_tokens() {
    agent_contracts::mcp::tls::install_crypto_provider();
    let signer = Signer::new("demo-key");
    let jwks = jwks_server(json!({"keys": [signer.jwk()]})).await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"))
        .args(["mcp", "--http", "127.0.0.1:0", "--oauth-issuer", ISSUER])
        .args(["--oauth-jwks-url", &jwks, "--oauth-audience", AUDIENCE])
        .args(["--oauth-scope", "agents:call"])
        .env_remove("AGENT_CONTRACT_MCP_TOKEN")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(stderr)
        .read_line(&mut line)
        .await
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("agent-demo: serving MCP at ")
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    let base = url.strip_suffix("/mcp").unwrap();

    let metadata = reqwest::get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
        .await
        .unwrap();
    assert_eq!(metadata.status().as_u16(), 200);
    let document: Value = serde_json::from_str(&metadata.text().await.unwrap()).unwrap();
    assert_eq!(
        document,
        json!({"resource": AUDIENCE, "authorization_servers": [ISSUER],
            "bearer_methods_supported": ["header"], "scopes_supported": ["agents:call"]})
    );

    let refused = |description: &str| {
        Some(format!(
            r#"Bearer resource_metadata="{METADATA_URL}", scope="agents:call", error="invalid_token", error_description="{description}""#
        ))
    };
    let other_audience = signer.token(&claims(json!({"aud": "https://elsewhere.test/mcp"})));
    assert_eq!(
        initialize(&url, &other_audience).await,
        (
            401,
            refused("the token is not for the audience https://agents.test/mcp")
        )
    );
    let expired = signer.token(&claims(json!({"exp": now() - 3600})));
    assert_eq!(
        initialize(&url, &expired).await,
        (401, refused("the token has expired"))
    );
    let valid = signer.token(&claims(json!({})));
    assert_eq!(initialize(&url, &valid).await, (200, None));
}
