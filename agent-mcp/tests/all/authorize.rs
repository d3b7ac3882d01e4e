//! The client's OAuth against a local authorization server written here: the server (an
//! `AgentServer` that takes the authorization server's JWTs) answers 401 and names its
//! metadata; the client discovers the authorization server, registers, sends the user to the
//! authorization URL with a PKCE challenge, exchanges the code (the verifier checked here),
//! lists and calls a tool with the token, and, once the token nears its expiry, refreshes it
//! with the refresh token, without a new authorization. Then the client-credentials grant.

use agent_contracts_mcp::authorize::{
    AuthorizationRequest, InMemoryCredentialStore, authorization_code, client_credentials,
};
use agent_contracts_mcp::client::{McpServer, ToolSettings};
use agent_contracts_mcp::oauth::OAuth;
use agent_contracts_mcp::{AgentServer, HttpSettings};
use agent_examples::agents::{DiscoveryAgent, PlanGeneratorAgent};
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::Digest as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::jwt::{Signer, now};

const REDIRECT: &str = "http://127.0.0.1:1/callback";

/// What the authorization server saw and holds.
#[derive(Default)]
struct Seen {
    authorizations: usize,
    code_exchanges: usize,
    refreshes: usize,
    client_credentials: usize,
    /// The PKCE challenge of the code handed out.
    challenge: Option<String>,
    /// The refresh token handed out.
    refresh_token: Option<String>,
    resource: Option<String>,
}

#[derive(Clone)]
struct AuthServer {
    issuer: String,
    audience: String,
    signer: Arc<Signer>,
    seen: Arc<Mutex<Seen>>,
}

fn pairs(text: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{text}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

impl AuthServer {
    /// An access token for the resource, that expires in `seconds`.
    fn tokens(&self, seconds: u64, refresh: Option<&str>) -> Value {
        let claims = json!({"iss": self.issuer, "aud": self.audience, "sub": "user-1",
            "exp": now() + seconds, "scope": "agents:call"});
        let mut body = json!({"access_token": self.signer.token(&claims), "token_type": "Bearer",
            "expires_in": seconds, "scope": "agents:call"});
        if let Some(refresh) = refresh {
            body["refresh_token"] = json!(refresh);
        }
        body
    }
}

async fn metadata(State(server): State<AuthServer>) -> Response {
    let issuer = &server.issuer;
    json_response(
        StatusCode::OK,
        json!({"issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "scopes_supported": ["agents:call"]}),
    )
}

async fn register(body: String) -> Response {
    let asked: Value = serde_json::from_str(&body).unwrap_or_default();
    json_response(
        StatusCode::CREATED,
        json!({"client_id": "registered-client", "redirect_uris": asked["redirect_uris"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}),
    )
}

/// The user consents at once: back to the redirect URI with a code.
async fn authorize(State(server): State<AuthServer>, RawQuery(query): RawQuery) -> Response {
    let query = pairs(&query.unwrap_or_default());
    let mut seen = server.seen.lock().unwrap();
    seen.authorizations += 1;
    assert_eq!(query["code_challenge_method"], "S256");
    seen.challenge = Some(query["code_challenge"].clone());
    seen.resource = query.get("resource").cloned();
    let location = format!(
        "{}?code=the-code&state={}",
        query["redirect_uri"], query["state"]
    );
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn token(
    State(server): State<AuthServer>,
    headers: axum::http::HeaderMap,
    body: String,
) -> Response {
    let form = pairs(&body);
    let refused = |error: &str| json_response(StatusCode::BAD_REQUEST, json!({"error": error}));
    let mut seen = server.seen.lock().unwrap();
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            // PKCE: the verifier's SHA-256 is the challenge the authorization began with.
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let challenge = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
            if form.get("code").map(String::as_str) != Some("the-code")
                || seen.challenge.as_deref() != Some(challenge.as_str())
            {
                return refused("invalid_grant");
            }
            seen.code_exchanges += 1;
            seen.refresh_token = Some("refresh-1".into());
            // Expires in 10 s: the client refreshes it once less than half of that is left.
            json_response(StatusCode::OK, server.tokens(10, Some("refresh-1")))
        }
        Some("refresh_token") => {
            if form.get("refresh_token") != seen.refresh_token.as_ref() {
                return refused("invalid_grant");
            }
            seen.refreshes += 1;
            seen.refresh_token = Some("refresh-2".into());
            json_response(StatusCode::OK, server.tokens(3600, Some("refresh-2")))
        }
        Some("client_credentials") => {
            // The secret, in the body or by HTTP Basic.
            let basic = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Basic "))
                .and_then(|v| base64::engine::general_purpose::STANDARD.decode(v).ok())
                .map(|v| String::from_utf8_lossy(&v).into_owned());
            let in_body = form
                .get("client_id")
                .zip(form.get("client_secret"))
                .map(|(id, secret)| format!("{id}:{secret}"));
            if basic.or(in_body).as_deref() != Some("service-client:service-secret") {
                return refused("invalid_client");
            }
            seen.client_credentials += 1;
            json_response(StatusCode::OK, server.tokens(3600, None))
        }
        _ => refused("unsupported_grant_type"),
    }
}

/// The authorization server and, behind it, the MCP server that takes its tokens: the MCP
/// endpoint's URL and what the authorization server saw.
async fn servers() -> (String, Arc<Mutex<Seen>>) {
    let as_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", as_listener.local_addr().unwrap());
    let rs_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let audience = format!("http://{}/mcp", rs_listener.local_addr().unwrap());
    let signer = Arc::new(Signer::new("as-key"));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let jwks = json!({"keys": [signer.jwk()]}).to_string();
    let state = AuthServer {
        issuer: issuer.clone(),
        audience: audience.clone(),
        signer,
        seen: seen.clone(),
    };
    let router = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(metadata),
        )
        .route("/register", axum::routing::post(register))
        .route("/authorize", axum::routing::get(authorize))
        .route("/token", axum::routing::post(token))
        .route(
            "/jwks",
            axum::routing::get(move || {
                let jwks = jwks.clone();
                async move { jwks }
            }),
        )
        .with_state(state);
    tokio::spawn(async move { axum::serve(as_listener, router).await });

    let oauth =
        OAuth::new(issuer.clone(), format!("{issuer}/jwks"), audience.clone()).scope("agents:call");
    let model = Arc::new(agent_examples::pipeline::canned_model());
    let server = AgentServer::new(vec![&PlanGeneratorAgent, &DiscoveryAgent], model)
        .with_http(HttpSettings::default().oauth(oauth));
    tokio::spawn(server.serve_http_on(rs_listener));
    (audience, seen)
}

/// The user agent: follows the authorization URL to the authorization server, which answers
/// with the redirect to the client's callback; that URL is the answer.
async fn browser(authorization_url: String) -> Result<String, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let response = client
        .get(&authorization_url)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    response
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| format!("no redirect from {authorization_url}"))
}

#[tokio::test]
async fn the_authorization_code_flow_calls_a_tool_and_refreshes_without_a_new_authorization() {
    let (url, seen) = servers().await;
    // Without a token the server refuses the client, pointing to its metadata.
    assert!(McpServer::http("agents", &url, None).await.is_err());

    let request = AuthorizationRequest::new(REDIRECT)
        .with_client_name("agent-contracts test")
        .with_scopes(["agents:call"]);
    let manager = authorization_code(&url, request, InMemoryCredentialStore::new(), browser)
        .await
        .unwrap();
    {
        let seen = seen.lock().unwrap();
        assert_eq!((seen.authorizations, seen.code_exchanges), (1, 1));
        // The resource indicator (RFC 8707) names the MCP server.
        assert_eq!(seen.resource.as_deref(), Some(url.as_str()));
    }
    let server = McpServer::http_authorized("agents", &url, manager, &[])
        .await
        .unwrap();
    let tools = server.tools(ToolSettings::default()).await.unwrap();
    assert_eq!(tools.len(), 2);
    let discovery = tools
        .iter()
        .find(|t| t.definition().name == "run_discovery_agent")
        .expect("the discovery agent's tool");
    // The agent's canned answer, through the token.
    let answer = discovery
        .call(r#"{"task": "Discover the login form", "target_url": "https://example.com/login", "focus": "login form"}"#)
        .await;
    assert!(answer.to_string().contains("scan_duration_ms"), "{answer}");
    assert_eq!(seen.lock().unwrap().refreshes, 0);

    // The first access token expires in 10 s: with less than half of it left (counted in
    // whole seconds), the next request refreshes it first.
    tokio::time::sleep(std::time::Duration::from_secs(7)).await;
    let tools = server.tools(ToolSettings::default()).await.unwrap();
    assert_eq!(tools.len(), 2);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.refreshes, 1);
    assert_eq!(seen.authorizations, 1, "no new authorization");
}

#[tokio::test]
async fn a_service_takes_the_client_credentials_grant() {
    let (url, seen) = servers().await;
    let wrong = client_credentials(
        &url,
        "service-client",
        "wrong-secret",
        &["agents:call"],
        InMemoryCredentialStore::new(),
    )
    .await
    .err()
    .expect("a wrong secret is refused")
    .to_string();
    assert!(wrong.contains("OAuth client credentials"), "{wrong}");
    assert!(wrong.contains("invalid_client"), "{wrong}");
    let manager = client_credentials(
        &url,
        "service-client",
        "service-secret",
        &["agents:call"],
        InMemoryCredentialStore::new(),
    )
    .await
    .unwrap();
    let server = McpServer::http_authorized("agents", &url, manager, &[])
        .await
        .unwrap();
    assert_eq!(
        server.tools(ToolSettings::default()).await.unwrap().len(),
        2
    );
    assert_eq!(seen.lock().unwrap().client_credentials, 1);
}
