//! OAuth at an MCP server's HTTP endpoint, the client side, as the MCP authorization spec has
//! a client do it, on rmcp's `auth` support: the authorization server is discovered from the
//! server's protected-resource metadata (RFC 9728) and its own metadata (RFC 8414); the
//! client registers itself (RFC 7591) unless it is pre-registered; the user is sent to the
//! authorization URL with a PKCE challenge (S256) and the code that comes back is exchanged
//! for tokens; an access token near its expiry is refreshed with the refresh token, without
//! a new authorization. A service without a user takes the client-credentials grant.
//!
//! The tokens live in a [`CredentialStore`] the application may provide (in memory by
//! default), so a process that starts again need not authorize again.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agent_contracts_mcp::client::ClientError> {
//! use agent_contracts_mcp::authorize::{
//!     AuthorizationRequest, InMemoryCredentialStore, authorization_code,
//! };
//! use agent_contracts_mcp::client::McpServer;
//!
//! let url = "https://agents.example.com/mcp";
//! let request = AuthorizationRequest::new("http://127.0.0.1:8765/callback")
//!     .with_client_name("my agent")
//!     .with_scopes(["agents:call"]);
//! // The user agent: open `authorization_url` in a browser, and answer with the URL the
//! // authorization server redirected it to (a local listener on the redirect URI reads it).
//! let store = InMemoryCredentialStore::new();
//! let manager = authorization_code(url, request, store, async |authorization_url: String| {
//!     Err::<String, String>(format!("open {authorization_url}"))
//! })
//! .await?;
//! let server = McpServer::http_authorized("agents", url, manager, &[]).await?;
//! # Ok(()) }
//! ```

use crate::client::ClientError;
pub use crate::client::StepUp;
use rmcp::transport::auth::OAuthState;
pub use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, CredentialStore,
    InMemoryCredentialStore, StoredCredentials,
};

/// An error of the authorization at `url`, as a [`ClientError::Connect`] of the server `url`
/// names.
fn failed(url: &str, step: &str, error: AuthError) -> ClientError {
    ClientError::Connect {
        server: crate::tls::shown_url(url),
        reason: format!("OAuth {step}: {error}"),
    }
}

/// A fresh manager for the server at `url`, its tokens in `store`.
async fn manager(
    url: &str,
    store: impl CredentialStore + 'static,
) -> Result<AuthorizationManager, ClientError> {
    crate::tls::install_crypto_provider();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(url, "setup", e))?;
    manager.set_credential_store(store);
    Ok(manager)
}

/// How long the unauthenticated request that reads the server's challenge may take.
const CHALLENGE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The `WWW-Authenticate` challenge of the server's 401 to an unauthenticated `initialize`:
/// its `resource_metadata` URL leads discovery and its `scope` says what to ask for, as the
/// MCP spec has a client begin. `None` when the server answers otherwise or not at all
/// (discovery then tries the well-known locations).
async fn challenge(url: &str) -> Option<String> {
    crate::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(CHALLENGE_TIMEOUT)
        .build()
        .ok()?;
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "agent-contracts", "version": env!("CARGO_PKG_VERSION")}}});
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

/// The authorization-code flow with PKCE for the server at `url`: discovery (from the
/// challenge of the server's 401 to an unauthenticated request, unless `request` carries one,
/// then from the metadata it points to), registration (a pre-registered client if `request`
/// names one, else a client metadata document URL if the authorization server takes them, else
/// dynamic registration), then `user_agent`, given the
/// authorization URL, answers with the redirect URL the authorization server sent the user
/// back to (its `code` and `state`), and the code is exchanged for tokens, saved in `store`.
///
/// The result is for [`McpServer::http_authorized`](crate::client::McpServer::http_authorized),
/// which sends the access token and refreshes it when it nears its expiry.
pub async fn authorization_code<F>(
    url: &str,
    request: AuthorizationRequest,
    store: impl CredentialStore + 'static,
    user_agent: F,
) -> Result<AuthorizationManager, ClientError>
where
    F: AsyncFnOnce(String) -> Result<String, String>,
{
    let mut request = request;
    if request.challenge.is_none()
        && let Some(challenge) = challenge(url).await
    {
        request = request.with_challenge(challenge);
    }
    let mut state = OAuthState::Unauthorized(manager(url, store).await?);
    state
        .start_authorization(request)
        .await
        .map_err(|e| failed(url, "discovery or registration", e))?;
    let authorization_url = state
        .get_authorization_url()
        .await
        .map_err(|e| failed(url, "authorization", e))?;
    let callback = user_agent(authorization_url)
        .await
        .map_err(|reason| ClientError::Connect {
            server: crate::tls::shown_url(url),
            reason: format!("OAuth authorization: {reason}"),
        })?;
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| failed(url, "code exchange", e))?;
    state.into_authorization_manager().ok_or_else(|| {
        failed(
            url,
            "code exchange",
            AuthError::InternalError("the flow did not end authorized".into()),
        )
    })
}

/// The client-credentials grant for the server at `url` (a service, no user): discovery,
/// then a token for `client_id` with `client_secret` and `scopes`, saved in `store`.
pub async fn client_credentials(
    url: &str,
    client_id: &str,
    client_secret: &str,
    scopes: &[&str],
    store: impl CredentialStore + 'static,
) -> Result<AuthorizationManager, ClientError> {
    let mut state = OAuthState::Unauthorized(manager(url, store).await?);
    let config = rmcp::transport::auth::ClientCredentialsConfig::ClientSecret {
        client_id: client_id.to_owned(),
        client_secret: client_secret.to_owned(),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        // The resource indicator (RFC 8707) the MCP spec requires: the server's URL.
        resource: Some(url.to_owned()),
    };
    state
        .authenticate_client_credentials(config)
        .await
        .map_err(|e| failed(url, "client credentials", e))?;
    state.into_authorization_manager().ok_or_else(|| {
        failed(
            url,
            "client credentials",
            AuthError::InternalError("the grant did not end authorized".into()),
        )
    })
}
