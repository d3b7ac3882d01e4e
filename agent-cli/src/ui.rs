//! `ui`: the local web inspector of a store's runs. Who may reach it follows `mcp --http`'s
//! rule: loopback by default; beyond loopback only with a bearer token (or `--no-auth`, said
//! on stderr); the Host and Origin of every request checked.

use crate::convention::Failure;
use crate::folder::UserAgent;
use agent_contracts::ui::{Access, AgentCard, Inspector};
use std::net::SocketAddr;
use std::path::Path;

/// The variable of the inspector's bearer token.
const TOKEN_VAR: &str = "AGENT_CONTRACT_UI_TOKEN";

/// `agent-contract ui`'s flags.
#[derive(Debug, clap::Args)]
pub struct UiArgs {
    /// The store whose runs it shows (`sqlite:PATH`, `postgres://...` or `file:DIR`)
    #[arg(long, value_name = "URL")]
    pub store: String,
    /// Serve on this address; port 0 lets the system pick one
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    pub http: SocketAddr,
    /// Also answer requests whose Host is this name (`name` or `name:port`; loopback names
    /// and the bound address are always answered). Repeatable
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Also answer pages of this origin (`https://tools.example.com`; the page's own origin
    /// is always answered). Repeatable
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// On an address beyond loopback: serve without a bearer token (anyone who reaches the
    /// address reads the runs and answers their questions)
    #[arg(long = "no-auth")]
    pub no_auth: bool,
    /// The bearer token the API requires (at least 16 characters, such as the output of
    /// `openssl rand -hex 32`); required beyond loopback unless --no-auth. The page takes it
    /// once as `#token=...` in its address
    #[arg(long = "ui-token", env = TOKEN_VAR, hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
}

impl UiArgs {
    /// Who may reach the address, checked before anything opens; a usage error never shows
    /// the token.
    fn access(&self, bin: &str) -> Result<Access, Failure> {
        let mut access = Access::default();
        for host in &self.allowed_hosts {
            access = access.allowed_host(host.clone());
        }
        for origin in &self.allowed_origins {
            access = access.allowed_origin(origin.clone());
        }
        match &self.token {
            Some(token) if token.len() >= 16 => Ok(access.bearer_token(token.clone())),
            Some(_) => Err(Failure::Usage(format!(
                "{TOKEN_VAR} (--ui-token) is shorter than 16 characters; use a long random secret, such as the output of `openssl rand -hex 32`"
            ))),
            None if self.http.ip().is_loopback() => Ok(access),
            None if self.no_auth => {
                eprintln!(
                    "{bin}: warning: serving {} without a token (--no-auth): anyone who reaches it reads the runs and answers their questions",
                    self.http
                );
                Ok(access)
            }
            None => Err(Failure::Usage(format!(
                "--http {} is reachable beyond this machine; set a bearer token in {TOKEN_VAR} (--ui-token), or pass --no-auth to serve it without one",
                self.http
            ))),
        }
    }
}

/// The agents of the folder `schemas`, when there is one: their contracts and the template
/// each names (its text when `templates/<name>` beside the folder holds it).
fn cards(schemas: &Path) -> Vec<AgentCard> {
    let Ok(agents) = UserAgent::load_all(schemas) else {
        return Vec::new();
    };
    let templates = schemas.parent().unwrap_or(Path::new(".")).join("templates");
    agents
        .iter()
        .map(|agent| {
            use agent_contracts::DynAgent as _;
            let output = agent
                .output_contract()
                .map_or(serde_json::Value::Null, |c| c.schema().clone());
            let template = match agent.template() {
                Some(name) => std::fs::read_to_string(templates.join(name))
                    .unwrap_or_else(|_| format!("(the template `{name}`, compiled by the build)")),
                None => "(the default prompt: the task, then the context)".to_owned(),
            };
            AgentCard::new(
                agent.name(),
                agent.input_contract().schema().clone(),
                output,
                template,
            )
        })
        .collect()
}

/// Serves the inspector until the process ends.
pub fn serve(args: UiArgs, schemas: &Path, bin: &str) -> Result<(), Failure> {
    let access = args.access(bin)?;
    let agents = cards(schemas);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        let store = crate::serve::open_store(&args.store).await?;
        let listener = tokio::net::TcpListener::bind(args.http)
            .await
            .map_err(|e| Failure::Usage(format!("--http {}: {e}", args.http)))?;
        // The address as bound (port 0 names the port the OS picked), for the user and for a
        // script that starts the server.
        if let Ok(bound) = listener.local_addr() {
            eprintln!("{bin}: serving the inspector at http://{bound}/");
        }
        Inspector::new(store)
            .with_access(access)
            .with_agents(agents)
            .serve(listener)
            .await
            .map_err(|e| Failure::Failed(format!("the inspector stopped: {e}")))
    })
}
