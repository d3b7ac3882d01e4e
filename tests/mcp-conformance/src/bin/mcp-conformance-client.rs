//! The client program of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), as the SDKs keep one: the suite starts a test server
//! for a scenario and runs `mcp-conformance-client URL`, the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and its data (a pre-registered client's ID and secret) as JSON
//! in `MCP_CONFORMANCE_CONTEXT`; then it checks what the client did. The program exits 0 once
//! the scenario's work is done, 1 with the reason on stderr otherwise, and within 25 s either
//! way (the suite waits 30).
//!
//! Everything goes through agent-contracts' MCP client as an application uses it
//! (`agent_contracts_mcp::client` and `::authorize`), so the suite checks that client: the
//! connection, `tools/list`, each tool called through its contract-checked `Tool`, the
//! OAuth flows (discovery from the server's 401, registration, PKCE, the code exchange, client
//! credentials) and step-up authorization on a 403. `scripts/mcp_conformance.sh` runs it.

use agent_contracts_mcp::authorize::{
    AuthorizationManager, AuthorizationRequest, InMemoryCredentialStore, StepUp,
    authorization_code, client_credentials,
};
use agent_contracts_mcp::client::{ClientError, McpServer, ToolSettings};
use agent_contracts_runtime::model::BoxFuture;
use serde_json::{Map, Value, json};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The server's name in errors.
const NAME: &str = "conformance";

/// Where the authorization server sends the user agent back; nothing listens there, as the
/// user agent here reads the redirect instead of following it.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The suite's client ID metadata document (SEP-991): an authorization server that takes such
/// documents expects this URL as the client ID.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The whole scenario's time, under the suite's 30 s.
const DEADLINE: Duration = Duration::from_secs(25);

fn main() -> ExitCode {
    // The suite appends the server's URL as the last argument.
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("mcp-conformance-client: give the server's URL as the last argument");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(context) => context,
            Err(e) => {
                eprintln!("mcp-conformance-client: MCP_CONFORMANCE_CONTEXT is not JSON: {e}");
                return ExitCode::from(2);
            }
        },
        Err(_) => Value::Null,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-conformance-client: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        tokio::time::timeout(DEADLINE, run(&scenario, &url, &context))
            .await
            .unwrap_or_else(|_| Err(format!("not done within {} s", DEADLINE.as_secs())))
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("mcp-conformance-client: {scenario}: {reason}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str, context: &Value) -> Result<(), String> {
    let text = |e: ClientError| e.to_string();
    match scenario {
        // Connect (initialize, initialized) and list the tools.
        "initialize" => {
            let server = McpServer::http(NAME, url, None).await.map_err(text)?;
            server.tools(ToolSettings::default()).await.map_err(text)?;
            Ok(())
        }
        // Call every tool; `sse-retry`'s tool answers on a stream the server closes first, so
        // the answer comes after the reconnection the server's `retry` field times.
        "tools_call" | "sse-retry" => {
            let server = McpServer::http(NAME, url, None).await.map_err(text)?;
            call_every_tool(&server).await
        }
        // A service: the client-credentials grant, the secret sent as the authorization
        // server's metadata asks.
        "auth/client-credentials-basic" => {
            let (id, secret) =
                preregistered(context).ok_or("the context names no client_id and client_secret")?;
            let manager =
                client_credentials(url, &id, &secret, &[], InMemoryCredentialStore::new())
                    .await
                    .map_err(text)?;
            let server = McpServer::http_authorized(NAME, url, manager, &[])
                .await
                .map_err(text)?;
            call_every_tool(&server).await
        }
        // The authorization-code flow, then the tools; a 403 for want of a scope is met
        // with a step-up authorization for the scopes the server names.
        scenario if scenario.starts_with("auth/") => {
            let request = authorization_request(context);
            let store = InMemoryCredentialStore::new();
            let manager = authorization_code(url, request.clone(), store.clone(), user_agent)
                .await
                .map_err(text)?;
            let owned_url = url.to_owned();
            let step_up: StepUp = Arc::new(move |challenge: String| {
                let (url, request, store) = (owned_url.clone(), request.clone(), store.clone());
                let again: BoxFuture<'static, Result<AuthorizationManager, ClientError>> =
                    Box::pin(async move {
                        let request = request.with_challenge(challenge);
                        authorization_code(&url, request, store, user_agent).await
                    });
                again
            });
            let server = McpServer::http_authorized(NAME, url, manager, &[])
                .await
                .map_err(text)?
                .with_step_up(step_up);
            call_every_tool(&server).await
        }
        other => Err(format!("unknown scenario `{other}`")),
    }
}

/// The client's registration: a pre-registered client when the context names one, else a
/// client ID metadata document where the authorization server takes them, else dynamic
/// registration.
fn authorization_request(context: &Value) -> AuthorizationRequest {
    let request = AuthorizationRequest::new(REDIRECT_URI)
        .with_client_name("agent-contracts conformance client")
        .with_client_metadata_url(CLIENT_METADATA_URL);
    match preregistered(context) {
        Some((id, secret)) => request
            .with_preregistered_client(id)
            .with_client_secret(secret),
        None => request,
    }
}

/// The pre-registered client's ID and secret of the scenario's context.
fn preregistered(context: &Value) -> Option<(String, String)> {
    let field = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    Some((field("client_id")?, field("client_secret")?))
}

/// The user agent: opens the authorization URL, where the suite's authorization server
/// consents at once and redirects to the callback; that URL, with its `code` and `state`, is
/// the answer.
async fn user_agent(authorization_url: String) -> Result<String, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client
        .get(&authorization_url)
        .send()
        .await
        .map_err(|e| format!("the authorization URL: {e}"))?;
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "the authorization server answered {} without a redirect",
                response.status()
            )
        })
}

/// Lists the server's tools and calls each with arguments its input schema takes; a call the
/// tool answers as failed is an error.
async fn call_every_tool(server: &McpServer) -> Result<(), String> {
    let tools = server
        .tools(ToolSettings::default())
        .await
        .map_err(|e| e.to_string())?;
    for tool in tools {
        let definition = tool.definition();
        let arguments = arguments_for(&definition.parameters);
        let answer = tool.call(&arguments.to_string()).await;
        if answer.get("success") == Some(&Value::Bool(false)) {
            return Err(format!("the tool `{}` answered {answer}", definition.name));
        }
    }
    Ok(())
}

/// Arguments an input schema takes: each required property, a value of its type.
fn arguments_for(schema: &Value) -> Value {
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    let mut arguments = Map::new();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number") => json!(2.5),
            Some("integer") => json!(2),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
