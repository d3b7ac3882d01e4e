//! `mcp`: how agents are served over MCP, on stdio or streamable HTTP. Who may reach an HTTP
//! endpoint (the bearer token, hosts, origins) is checked before anything starts.
//!
//! The examples' `agent-demo mcp` (the compiled-in agents and the event-planning workflow)
//! includes this file too (`#[path]`): one set of flags, one set of checks. It adds a store
//! for paused workflow runs through [`Plan::serve`]'s `setup` ([`Durable`], which
//! `agent-contract a2a` and `agent-demo a2a` take too); a folder's agents alone never pause,
//! so `agent-contract mcp` has none.

use crate::convention::Failure;
use agent_contracts::mcp::{AgentServer, HttpSettings, Sessions, oauth::OAuth};
use std::net::SocketAddr;
use std::sync::Arc;

/// The variable of the HTTP endpoint's bearer token.
const TOKEN_VAR: &str = "AGENT_CONTRACT_MCP_TOKEN";

/// The variable of the key paused runs are named under (MCP's resume handles, A2A's task
/// IDs).
pub const KEY_VAR: &str = "AGENT_CONTRACT_MCP_KEY";

/// Where paused runs are kept.
#[derive(Debug, clap::Args)]
pub struct Durable {
    /// Keep paused runs in this store (`sqlite:PATH` or `postgres://...`) instead of memory,
    /// so they survive a restart and several instances (behind one address) share them; the
    /// handles that name them (MCP's resume handles, A2A's task IDs) are signed with --mcp-key
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// With --store: the secret key resume handles and task IDs are signed with, 64 hex
    /// digits (such as the output of `openssl rand -hex 32`)
    #[arg(long = "mcp-key", env = KEY_VAR, hide_env_values = true, value_name = "HEX")]
    pub key: Option<String>,
}

impl Durable {
    /// The store's URL and the key, 64 hex digits, checked before anything starts; a usage
    /// error never shows the key.
    pub fn checked(&self) -> Result<Option<(String, [u8; 32])>, Failure> {
        let Some(url) = &self.store else {
            return Ok(None);
        };
        let usage = || {
            Failure::Usage(format!(
                "--store needs a secret key in {KEY_VAR} (--mcp-key): 64 hex digits, such as the output of `openssl rand -hex 32`"
            ))
        };
        let text = self.key.as_deref().ok_or_else(usage)?.trim();
        if text.len() != 64 || !text.is_ascii() {
            return Err(usage());
        }
        let mut key = [0u8; 32];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| usage())?;
        }
        Ok(Some((url.clone(), key)))
    }
}

/// Opens the store `--store` names (inside the runtime); a usage error shows the URL without
/// its password.
pub async fn open_store(
    url: &str,
) -> Result<Arc<dyn agent_contracts::store::CheckpointStore>, Failure> {
    agent_contracts::store::open(url).await.map_err(|e| {
        let url = agent_contracts::store::redact_url(url);
        Failure::Usage(format!("--store {url}: {e}"))
    })
}

/// Where and how to serve.
#[derive(Debug, clap::Args)]
pub struct Serving {
    /// Serve streamable HTTP on this address (such as 127.0.0.1:8080) instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// With --http: also answer requests whose Host is this name (`name` or `name:port`;
    /// loopback names and the bound address are always answered). Repeatable
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// With --http: answer browsers on this origin (`https://app.example.com`,
    /// `http://localhost:*`); a request from any other Origin gets 403. Repeatable
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// With --http on an address beyond loopback: serve without a bearer token (anyone who
    /// reaches the address runs the agents)
    #[arg(long = "no-auth")]
    pub no_auth: bool,
    /// With --http: keep no session between requests, so several instances behind one
    /// address (a round-robin proxy) serve one client
    #[arg(long)]
    pub stateless: bool,
    /// With --http: the bearer token clients must send (at least 16 characters, such as the
    /// output of `openssl rand -hex 32`); required beyond loopback unless --no-auth
    #[arg(long = "mcp-token", env = TOKEN_VAR, hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// With --http: also take OAuth access tokens (JWTs) issued by this authorization server
    /// (their `iss`), whose protected-resource metadata the endpoint then serves at
    /// /.well-known/oauth-protected-resource; needs --oauth-jwks-url and --oauth-audience
    #[arg(
        long = "oauth-issuer",
        value_name = "URL",
        requires_all = ["oauth_jwks_url", "oauth_audience"]
    )]
    pub oauth_issuer: Option<String>,
    /// With --oauth-issuer: the JWKS the tokens' signatures are checked against
    #[arg(long = "oauth-jwks-url", value_name = "URL", requires = "oauth_issuer")]
    pub oauth_jwks_url: Option<String>,
    /// With --oauth-issuer: the audience tokens must be for (their `aud`), such as this
    /// server's URL (`https://agents.example.com/mcp`)
    #[arg(long = "oauth-audience", value_name = "AUD", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// With --oauth-issuer: a scope tokens must carry. Repeatable
    #[arg(long = "oauth-scope", value_name = "SCOPE", requires = "oauth_issuer")]
    pub oauth_scopes: Vec<String>,
}

/// What [`Serving::plan`] checked: the endpoint.
pub struct Plan {
    http: Option<(SocketAddr, HttpSettings)>,
}

impl Serving {
    /// Checks the flags that need no model: the token against the address. A usage error
    /// says what to set; it never shows the token.
    pub fn plan(&self, bin: &str) -> Result<Plan, Failure> {
        let http = match self.http {
            Some(addr) => Some((addr, self.http_settings(addr, bin)?)),
            None => None,
        };
        Ok(Plan { http })
    }

    /// Who may reach `--http ADDR`: the token, required beyond loopback unless `--no-auth`
    /// says otherwise, and the listed hosts and origins.
    fn http_settings(&self, addr: SocketAddr, bin: &str) -> Result<HttpSettings, Failure> {
        let mut settings = HttpSettings::default();
        for host in &self.allowed_hosts {
            settings = settings.allowed_host(host.clone());
        }
        for origin in &self.allowed_origins {
            settings = settings.allowed_origin(origin.clone());
        }
        if let (Some(issuer), Some(jwks), Some(audience)) = (
            &self.oauth_issuer,
            &self.oauth_jwks_url,
            &self.oauth_audience,
        ) {
            let oauth = self.oauth_scopes.iter().fold(
                OAuth::new(issuer.clone(), jwks.clone(), audience.clone()),
                |oauth, scope| oauth.scope(scope.clone()),
            );
            settings = settings.oauth(oauth);
        }
        let oauth = self.oauth_issuer.is_some();
        match &self.token {
            Some(token) if token.len() >= 16 => settings = settings.bearer_token(token.clone()),
            Some(_) => {
                return Err(Failure::Usage(format!(
                    "{TOKEN_VAR} (--mcp-token) is shorter than 16 characters; use a long random secret, such as the output of `openssl rand -hex 32`"
                )));
            }
            None if addr.ip().is_loopback() || oauth => {}
            None if self.no_auth => eprintln!(
                "{bin}: warning: serving {addr} without a token (--no-auth): anyone who reaches it runs the agents on this model account"
            ),
            None => {
                return Err(Failure::Usage(format!(
                    "--http {addr} is reachable beyond this machine; set a bearer token in {TOKEN_VAR} (--mcp-token) or an authorization server (--oauth-issuer), or pass --no-auth to serve it without one"
                )));
            }
        }
        let sessions = match self.stateless {
            true => Sessions::Stateless,
            false => Sessions::default(),
        };
        Ok(settings.sessions(sessions))
    }
}

impl Plan {
    /// Serves the server `setup` makes of `server` (inside the runtime, so it may open what
    /// needs one) until the client disconnects (stdio) or the process ends (HTTP). An address
    /// that cannot be bound is an I/O error (exit 2); a server that stops on an error, a failed
    /// run (exit 1).
    pub fn serve(
        self,
        server: AgentServer,
        bin: &str,
        setup: impl AsyncFnOnce(AgentServer) -> Result<AgentServer, Failure>,
    ) -> Result<(), Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Usage(format!("cannot start the runtime: {e}")))?;
        runtime.block_on(async {
            let server = setup(server).await?;
            let served = match self.http {
                Some((addr, settings)) => {
                    let listener = tokio::net::TcpListener::bind(addr)
                        .await
                        .map_err(|e| Failure::Usage(format!("--http {addr}: {e}")))?;
                    // The address as bound (port 0 names the port the OS picked), for the user
                    // and for a script that starts the server.
                    if let Ok(bound) = listener.local_addr() {
                        eprintln!(
                            "{bin}: serving MCP at http://{bound}{}",
                            agent_contracts::mcp::HTTP_PATH
                        );
                    }
                    server.with_http(settings).serve_http_on(listener).await
                }
                None => server.serve_stdio().await,
            };
            served.map_err(|e| Failure::Failed(format!("the MCP server stopped: {e}")))
        })
    }
}
