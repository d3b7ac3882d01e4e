//! `a2a`: agents served as an A2A agent over HTTP, with the same endpoint flags as
//! `mcp --http` ([`Serving`]: the address, hosts, origins, `--no-auth` and the bearer token,
//! under the same rules), and the same store flags as `agent-demo mcp`
//! ([`Durable`](crate::serve::Durable)). A2A keeps no session, so `--stateless` changes
//! nothing here; OAuth is MCP's, and its flags are refused.
//!
//! The examples' `agent-demo a2a` (the compiled-in agents and the event-planning workflow)
//! includes this file too (`#[path]`).

use crate::convention::Failure;
use crate::serve::Serving;
use agent_contracts::a2a::{A2aServer, HttpSettings};
use std::net::SocketAddr;

/// The variable of the endpoint's bearer token (`mcp`'s: one flag for both endpoints).
const TOKEN_VAR: &str = "AGENT_CONTRACT_MCP_TOKEN";

/// Where and for whom to serve, checked before anything starts.
pub struct Plan {
    addr: SocketAddr,
    settings: HttpSettings,
}

/// Checks the flags that need no model: `--http` is required, and the token follows `mcp`'s
/// rules (at least 16 characters; required beyond loopback unless `--no-auth`). A usage
/// error says what to set; it never shows the token.
pub fn plan(serving: &Serving, bin: &str) -> Result<Plan, Failure> {
    let Some(addr) = serving.http else {
        return Err(Failure::Usage(
            "a2a serves HTTP only: pass --http ADDR (such as 127.0.0.1:8080)".into(),
        ));
    };
    // Accepted and ignored, an authorization server would leave the endpoint open to anyone
    // its operator meant to keep out.
    if serving.oauth_issuer.is_some() {
        return Err(Failure::Usage(
            "a2a takes bearer tokens (--mcp-token), not OAuth: --oauth-issuer is for mcp".into(),
        ));
    }
    let mut settings = HttpSettings::default();
    for host in &serving.allowed_hosts {
        settings = settings.allowed_host(host.clone());
    }
    for origin in &serving.allowed_origins {
        settings = settings.allowed_origin(origin.clone());
    }
    match &serving.token {
        Some(token) if token.len() >= 16 => settings = settings.bearer_token(token.clone()),
        Some(_) => {
            return Err(Failure::Usage(format!(
                "{TOKEN_VAR} (--mcp-token) is shorter than 16 characters; use a long random secret, such as the output of `openssl rand -hex 32`"
            )));
        }
        None if addr.ip().is_loopback() => {}
        None if serving.no_auth => eprintln!(
            "{bin}: warning: serving {addr} without a token (--no-auth): anyone who reaches it runs the agents on this model account"
        ),
        None => {
            return Err(Failure::Usage(format!(
                "--http {addr} is reachable beyond this machine; set a bearer token in {TOKEN_VAR} (--mcp-token), or pass --no-auth to serve it without one"
            )));
        }
    }
    Ok(Plan { addr, settings })
}

impl Plan {
    /// Serves the server `setup` makes of `server` (inside the runtime, so it may open a
    /// store) until the process ends, after printing the bound address on stderr. An address
    /// that cannot be bound is a usage error (exit 2).
    pub fn serve(
        self,
        server: A2aServer,
        bin: &str,
        setup: impl AsyncFnOnce(A2aServer) -> Result<A2aServer, Failure>,
    ) -> Result<(), Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Usage(format!("cannot start the runtime: {e}")))?;
        runtime.block_on(async {
            let server = setup(server).await?;
            let addr = self.addr;
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Failure::Usage(format!("--http {addr}: {e}")))?;
            // The address as bound (port 0 names the port the OS picked), for the user and
            // for a script that starts the server.
            if let Ok(bound) = listener.local_addr() {
                eprintln!(
                    "{bin}: serving A2A at http://{bound} (agent card: http://{bound}{})",
                    agent_contracts::a2a::CARD_PATH
                );
            }
            server
                .with_http(self.settings)
                .serve_http_on(listener)
                .await
                .map_err(|e| Failure::Failed(format!("the A2A server stopped: {e}")))
        })
    }
}
