//! MCP tools for agents: the client side. A server's tools become [`Tool`]s an agent's model
//! calls like any other, with each tool's contract enforced both ways:
//!
//! - the tool's `inputSchema` is compiled once into a [`Contract`] (the validator path of
//!   agent contracts, the same [`Limits`]); a model's arguments that break it never reach the
//!   server: the model gets the structured retry error as the tool result and calls again;
//! - a result that carries `structuredContent` is checked against the tool's `outputSchema`;
//!   a result that breaks it, an `isError` result, a call that takes longer than the timeout
//!   and a server that went away are each a tool result that says so (`"success": false`), and
//!   the run goes on.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agent_contracts_mcp::client::ClientError> {
//! use agent_contracts_mcp::client::{McpServer, ToolSettings};
//!
//! let server = McpServer::http("agents", "http://127.0.0.1:8080/mcp", Some("a-long-token")).await?;
//! let tools = server.tools(ToolSettings::default()).await?; // Vec<Arc<dyn agent_contracts_runtime::Tool>>
//! # Ok(()) }
//! ```

use agent_contracts_runtime::{
    Contract, Limits, Tool, ToolOutput, contract::ContractKind, contract::ToolDefinition,
    model::BoxFuture, model::Media, model::MediaData, model::MediaKind,
};
use rmcp::ServiceExt as _;
use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientNotification,
    ClientRequest, ContentBlock, Implementation, JsonObject, ProtocolVersion, RequestId,
    ResourceContents, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{
    InsufficientScopeError, StreamableHttpClientTransportConfig,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// How a connection authorizes again when the server wants scopes its token lacks (a 403
/// with `error="insufficient_scope"`, the MCP spec's step-up authorization): given the 403's
/// `WWW-Authenticate` challenge, which names the scopes the request needs, a new authorization,
/// usually [`authorization_code`](crate::authorize::authorization_code) with the challenge in
/// its request ([`AuthorizationRequest::with_challenge`](crate::authorize::AuthorizationRequest::with_challenge)).
/// See [`McpServer::with_step_up`].
pub type StepUp = std::sync::Arc<
    dyn Fn(
            String,
        )
            -> BoxFuture<'static, Result<rmcp::transport::auth::AuthorizationManager, ClientError>>
        + Send
        + Sync,
>;

/// How long a tool call may go by default without its answer or a progress notification
/// before the model is told it timed out.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a tool call may take by default in all, however often its progress is reported.
pub const DEFAULT_MAX_TOOL_TIME: Duration = Duration::from_secs(600);

/// Why a server could not be reached or its tools not read.
#[non_exhaustive]
#[derive(Debug)]
pub enum ClientError {
    /// The server could not be started or connected to.
    Connect {
        /// The server's name.
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// The server did not list its tools.
    ListTools {
        /// The server's name.
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// An `mcpServers` file that cannot be read.
    Config {
        /// What is wrong, and where.
        reason: String,
    },
    /// A tool's `inputSchema` or `outputSchema` does not compile.
    Schema {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect { server, reason } => {
                write!(f, "cannot connect to the MCP server `{server}`: {reason}")
            }
            Self::Config { reason } => write!(f, "the mcpServers file: {reason}"),
            Self::ListTools { server, reason } => {
                write!(
                    f,
                    "the MCP server `{server}` did not list its tools: {reason}"
                )
            }
            Self::Schema {
                server,
                tool,
                reason,
            } => write!(
                f,
                "the tool `{tool}` of the MCP server `{server}` has a schema that does not compile: {reason}"
            ),
        }
    }
}

impl std::error::Error for ClientError {}

/// How the tools of a server are called.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub struct ToolSettings {
    /// The bounds of the arguments' and results' checks, as for agent contracts.
    pub limits: Limits,
    /// How long a call may go without its answer before the model is told it timed out; each
    /// progress notification of the call (the client asks for them) starts it again.
    pub timeout: Duration,
    /// How long a call may take in all, however often the server reports progress.
    pub max_time: Duration,
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            timeout: DEFAULT_TOOL_TIMEOUT,
            max_time: DEFAULT_MAX_TOOL_TIME,
        }
    }
}

impl ToolSettings {
    /// These settings with the checks' [`limits`](Self::limits) set.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// These settings with a call's [`timeout`](Self::timeout) set.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// These settings with a call's [`max_time`](Self::max_time) set.
    pub fn with_max_time(mut self, max_time: Duration) -> Self {
        self.max_time = max_time;
        self
    }
}

/// A connection to one MCP server. Its tools share it: it closes when the server and every
/// tool of it are dropped.
///
/// When the server says its tool list changed (`notifications/tools/list_changed`), the list
/// is read again: a tool's [`definition`](Tool::definition) is then the new one, a call to a
/// tool the server dropped says so without reaching it, and [`tools`](Self::tools) gives the
/// new list.
pub struct McpServer {
    connection: Arc<Connection>,
}

/// What a server's tools share: the session, the tools as last listed, and how to authorize
/// again for more scopes.
struct Connection {
    name: String,
    service: RunningService<RoleClient, Handler>,
    catalog: Arc<Catalog>,
    /// The OAuth client of a connection made by [`McpServer::http_authorized`].
    auth: Option<AuthClient<reqwest::Client>>,
    step_up: Mutex<Option<StepUp>>,
    /// Step-ups so far, under the lock one step-up at a time holds: a request refused before
    /// another's step-up finished is sent again with its token, not authorized once more.
    step_ups: tokio::sync::Mutex<u64>,
}

/// The server's tools as last listed, each with its contracts compiled, by name.
#[derive(Default)]
struct Catalog {
    tools: RwLock<HashMap<String, Arc<Compiled>>>,
    /// The settings the list was last compiled with, for a refresh.
    settings: RwLock<Option<ToolSettings>>,
    /// Refreshes after `list_changed`, done or failed (a test waits for one).
    refreshes: std::sync::atomic::AtomicU64,
}

/// One tool of the list, its schemas compiled.
struct Compiled {
    definition: ToolDefinition,
    input: Contract,
    output: Option<Contract>,
}

/// The client side of a session: it names agent-contracts in `initialize` and reads the tool
/// list again when the server says it changed.
#[derive(Clone)]
struct Handler {
    server: String,
    catalog: Arc<Catalog>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-contracts", env!("CARGO_PKG_VERSION")),
        )
        // The handshake names the newest version that has one: 2026-07-28 has none (it
        // begins with `server/discover`), and a server on an older version refuses it.
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let (server, catalog, peer) = (self.server.clone(), self.catalog.clone(), context.peer);
        // Off the session's loop, which must go on reading while the list is read.
        tokio::spawn(async move {
            let settings = catalog
                .settings
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if let Some(settings) = settings {
                match peer.list_all_tools().await {
                    Ok(listed) => {
                        let compiled = listed
                            .into_iter()
                            .filter_map(|tool| {
                                let name = tool.name.to_string();
                                compile(&server, tool)
                                    .inspect_err(|error| {
                                        tracing::warn!(%error, tool = %name, "left out a changed tool");
                                    })
                                    .ok()
                            })
                            .collect();
                        catalog.replace(compiled, settings);
                    }
                    Err(error) => {
                        tracing::warn!(%error, server = %server, "could not read the changed tool list");
                    }
                }
            }
            catalog
                .refreshes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

impl Catalog {
    fn replace(&self, tools: Vec<Compiled>, settings: ToolSettings) {
        let tools = tools
            .into_iter()
            .map(|tool| (tool.definition.name.clone(), Arc::new(tool)))
            .collect();
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = tools;
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = Some(settings);
    }

    fn get(&self, name: &str) -> Option<Arc<Compiled>> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }
}

/// `tool` of the server `server`, its schemas compiled.
fn compile(server: &str, tool: rmcp::model::Tool) -> Result<Compiled, ClientError> {
    let name = tool.name.to_string();
    let schema_error = |reason: String| ClientError::Schema {
        server: server.to_owned(),
        tool: name.clone(),
        reason,
    };
    let parameters = Value::Object((*tool.input_schema).clone());
    let input = Contract::new(&name, ContractKind::Input, parameters.clone())
        .map_err(|e| schema_error(e.to_string()))?;
    let output = tool
        .output_schema
        .as_ref()
        .map(|schema| {
            Contract::new(
                &name,
                ContractKind::Output,
                Value::Object((**schema).clone()),
            )
        })
        .transpose()
        .map_err(|e| schema_error(e.to_string()))?;
    Ok(Compiled {
        definition: ToolDefinition {
            name,
            description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
            parameters,
        },
        input,
        output,
    })
}

/// Why a request failed for want of a scope: the 403's `WWW-Authenticate` challenge.
fn insufficient_scope(error: &ServiceError) -> Option<String> {
    let ServiceError::TransportSend(error) = error else {
        return None;
    };
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(cause) = next {
        if let Some(refused) = cause.downcast_ref::<InsufficientScopeError>() {
            return Some(refused.www_authenticate_header.clone());
        }
        next = cause.source();
    }
    None
}

impl Connection {
    /// Sends the request `send` makes. One the server refuses for want of a scope is, when the
    /// connection has a [`StepUp`], authorized again with the server's challenge and sent once
    /// more (at most once: a server that still refuses it gets its refusal said).
    async fn send<T, F, Fut>(&self, send: F) -> Result<T, Refused>
    where
        F: Fn(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let seen = *self.step_ups.lock().await;
        let error = match send(self.service.peer().clone()).await {
            Ok(answer) => return Ok(answer),
            Err(error) => error,
        };
        let step_up = self
            .step_up
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let (Some(challenge), Some(step_up), Some(auth)) =
            (insufficient_scope(&error), step_up, &self.auth)
        else {
            return Err(Refused::Service(error));
        };
        {
            let mut step_ups = self.step_ups.lock().await;
            // Another request's step-up since this one was sent: its token may serve.
            if *step_ups == seen {
                let manager = match step_up(challenge).await {
                    Ok(manager) => manager,
                    Err(failed) => return Err(Refused::StepUp(error, failed)),
                };
                *auth.auth_manager.lock().await = manager;
                *step_ups += 1;
            }
        }
        send(self.service.peer().clone())
            .await
            .map_err(Refused::Service)
    }
}

/// Why a request to the server failed.
enum Refused {
    Service(ServiceError),
    /// Refused for want of a scope, and the authorization for it failed.
    StepUp(ServiceError, ClientError),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Service(error) => error.fmt(f),
            Self::StepUp(refused, failed) => {
                write!(f, "{refused}; the step-up authorization failed: {failed}")
            }
        }
    }
}

impl McpServer {
    /// Starts `command` and talks to it over its stdin and stdout.
    pub async fn stdio(
        name: impl Into<String>,
        command: tokio::process::Command,
    ) -> Result<Self, ClientError> {
        let name = name.into();
        let connect = |reason: String| ClientError::Connect {
            server: name.clone(),
            reason,
        };
        let transport = TokioChildProcess::new(command).map_err(|e| connect(e.to_string()))?;
        let (handler, catalog) = Self::handler(&name);
        let service = handler
            .serve(transport)
            .await
            .map_err(|e| connect(e.to_string()))?;
        Ok(Self::connected(name, service, catalog, None))
    }

    /// Connects to a streamable HTTP endpoint, with `Authorization: Bearer <token>` when a
    /// token is given (it is never shown in errors).
    ///
    /// An `https://` endpoint's certificate is checked against the platform's roots, or the
    /// certificates of `SSL_CERT_FILE` and `SSL_CERT_DIR` when they are set (the `rustls`
    /// feature; `native-tls` asks the platform's library). A refused certificate is a
    /// [`ClientError::Connect`] that names the host and what is wrong with the certificate.
    pub async fn http(
        name: impl Into<String>,
        url: &str,
        bearer: Option<&str>,
    ) -> Result<Self, ClientError> {
        Self::http_with_headers(name, url, bearer, &[]).await
    }

    /// [`http`](Self::http), with `headers` (name, value) sent on every request besides
    /// (an API key header, a tenant), their values never shown. A name or value HTTP does not
    /// allow, or a header the transport sets itself (`Accept`, `Mcp-Session-Id`, ...), is a
    /// [`ClientError::Connect`].
    pub async fn http_with_headers(
        name: impl Into<String>,
        url: &str,
        bearer: Option<&str>,
        headers: &[(String, String)],
    ) -> Result<Self, ClientError> {
        let name = name.into();
        let mut config = transport_config(&name, url, headers)?;
        if let Some(token) = bearer {
            config = config.auth_header(token.to_owned());
        }
        Self::start(
            name,
            url,
            StreamableHttpClientTransport::from_config(config),
            None,
        )
        .await
    }

    /// Connects to a streamable HTTP endpoint with the OAuth tokens `manager` holds (see
    /// [`authorize`](crate::authorize)): each request carries the access token, refreshed
    /// with the refresh token when it nears its expiry; `headers` as for
    /// [`http_with_headers`](Self::http_with_headers). A request the server refuses for want
    /// of a scope fails, unless [`with_step_up`](Self::with_step_up) says how to authorize
    /// again.
    pub async fn http_authorized(
        name: impl Into<String>,
        url: &str,
        manager: rmcp::transport::auth::AuthorizationManager,
        headers: &[(String, String)],
    ) -> Result<Self, ClientError> {
        let name = name.into();
        let config = transport_config(&name, url, headers)?;
        let client = reqwest::Client::builder()
            // rmcp's own client's settings: no idle pool (a stall on Linux otherwise), and
            // no redirect, which would replay the token elsewhere.
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Connect {
                server: name.clone(),
                reason: e.to_string(),
            })?;
        let client = AuthClient::new(client, manager);
        Self::start(
            name,
            url,
            StreamableHttpClientTransport::with_client(client.clone(), config),
            Some(client),
        )
        .await
    }

    /// This connection (made by [`http_authorized`](Self::http_authorized)) meets the
    /// server's demand for more scopes (a 403 with `error="insufficient_scope"`) with
    /// `step_up`: the refused request is sent once more with the new authorization's token,
    /// and the requests after it carry that token too. One step-up runs at a time; a request
    /// still refused after it fails with the server's refusal, so a server that never accepts
    /// costs one authorization a request, not a loop.
    pub fn with_step_up(self, step_up: StepUp) -> Self {
        *self
            .connection
            .step_up
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(step_up);
        self
    }

    async fn start<C>(
        name: String,
        url: &str,
        transport: StreamableHttpClientTransport<C>,
        auth: Option<AuthClient<reqwest::Client>>,
    ) -> Result<Self, ClientError>
    where
        C: rmcp::transport::streamable_http_client::StreamableHttpClient<Error = reqwest::Error>,
    {
        let (handler, catalog) = Self::handler(&name);
        let service = handler
            .serve(transport)
            .await
            .map_err(|e| ClientError::Connect {
                server: name.clone(),
                // The token is in no error rmcp or reqwest writes.
                reason: crate::tls::connect_failure(url, &e),
            })?;
        Ok(Self::connected(name, service, catalog, auth))
    }

    fn handler(name: &str) -> (Handler, Arc<Catalog>) {
        let catalog = Arc::new(Catalog::default());
        let handler = Handler {
            server: name.to_owned(),
            catalog: catalog.clone(),
        };
        (handler, catalog)
    }

    fn connected(
        name: String,
        service: RunningService<RoleClient, Handler>,
        catalog: Arc<Catalog>,
        auth: Option<AuthClient<reqwest::Client>>,
    ) -> Self {
        Self {
            connection: Arc::new(Connection {
                name,
                service,
                catalog,
                auth,
                step_up: Mutex::new(None),
                step_ups: tokio::sync::Mutex::new(0),
            }),
        }
    }

    /// The server's name, as its tools' errors say it.
    pub fn name(&self) -> &str {
        &self.connection.name
    }

    /// The server's tools, each with its contracts compiled, for an agent's model: the list
    /// as the server gives it now. A refresh after `list_changed` compiles with these
    /// `settings` too.
    pub async fn tools(&self, settings: ToolSettings) -> Result<Vec<Arc<dyn Tool>>, ClientError> {
        let connection = &self.connection;
        let listed = connection
            .send(|peer| async move { peer.list_all_tools().await })
            .await
            .map_err(|refused| ClientError::ListTools {
                server: connection.name.clone(),
                reason: refused.to_string(),
            })?;
        let compiled = listed
            .into_iter()
            .map(|tool| compile(&connection.name, tool))
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<String> = compiled.iter().map(|t| t.definition.name.clone()).collect();
        connection.catalog.replace(compiled, settings.clone());
        Ok(names
            .into_iter()
            .filter_map(|name| {
                let last = connection.catalog.get(&name)?;
                Some(Arc::new(McpTool {
                    connection: connection.clone(),
                    name,
                    last,
                    settings: settings.clone(),
                }) as Arc<dyn Tool>)
            })
            .collect())
    }

    /// How often the tool list was read again after the server said it changed (or failed
    /// to be), for tests.
    #[doc(hidden)]
    pub fn __refreshes(&self) -> u64 {
        self.connection
            .catalog
            .refreshes
            .load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The transport's settings for `url`, with `headers` (checked, their values marked
/// sensitive); the crypto provider installed for `https://`.
fn transport_config(
    name: &str,
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransportConfig, ClientError> {
    crate::tls::install_crypto_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let mut custom = std::collections::HashMap::new();
    for (header, value) in headers {
        let refused = |what: &str| ClientError::Connect {
            server: name.to_owned(),
            reason: format!("the header `{header}`: {what}"),
        };
        let header_name = axum::http::HeaderName::from_bytes(header.as_bytes())
            .map_err(|_| refused("not a valid header name"))?;
        let mut header_value = axum::http::HeaderValue::from_str(value)
            .map_err(|_| refused("not a valid header value"))?;
        header_value.set_sensitive(true);
        custom.insert(header_name, header_value);
    }
    if !custom.is_empty() {
        config = config.custom_headers(custom);
    }
    Ok(config)
}

/// The servers of an `mcpServers` file, the format MCP hosts write (Claude Desktop, Cursor,
/// VS Code): each entry either starts a command (`command`, `args`, `env`) or reaches a URL
/// (`url`, and `headers`: an `Authorization: Bearer <token>` and any others, sent on every
/// request).
///
/// ```
/// use agent_contracts_mcp::client::{ServerSpec, server_specs};
///
/// let specs = server_specs(r#"{"mcpServers": {
///     "agents": {"url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer t0ken-t0ken", "X-Tenant": "acme"}},
///     "sums": {"command": "python3", "args": ["server.py"], "env": {"LOG": "1"}}
/// }}"#).unwrap();
/// assert_eq!(specs[0].0, "agents");
/// assert!(matches!(&specs[1].1, ServerSpec::Command { program, .. } if program == "python3"));
/// ```
pub fn server_specs(text: &str) -> Result<Vec<(String, ServerSpec)>, ClientError> {
    let config = |reason: String| ClientError::Config { reason };
    let file: Value = serde_json::from_str(text).map_err(|e| config(format!("not JSON: {e}")))?;
    let Some(servers) = file.get("mcpServers").and_then(Value::as_object) else {
        return Err(config("no `mcpServers` object".into()));
    };
    servers
        .iter()
        .map(|(name, entry)| {
            let at = |what: &str| config(format!("`mcpServers.{name}`: {what}"));
            let strings = |key: &str| -> Result<Vec<String>, ClientError> {
                match entry.get(key) {
                    None => Ok(Vec::new()),
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|item| {
                            item.as_str()
                                .map(str::to_owned)
                                .ok_or_else(|| at(&format!("`{key}` must be an array of strings")))
                        })
                        .collect(),
                    Some(_) => Err(at(&format!("`{key}` must be an array of strings"))),
                }
            };
            let pairs = |key: &str| -> Result<Vec<(String, String)>, ClientError> {
                match entry.get(key) {
                    None => Ok(Vec::new()),
                    Some(Value::Object(map)) => map
                        .iter()
                        .map(|(k, v)| {
                            v.as_str()
                                .map(|v| (k.clone(), v.to_owned()))
                                .ok_or_else(|| at(&format!("`{key}.{k}` must be a string")))
                        })
                        .collect(),
                    Some(_) => Err(at(&format!("`{key}` must be an object of strings"))),
                }
            };
            let spec = match (entry.get("command"), entry.get("url")) {
                (Some(Value::String(program)), None) => ServerSpec::Command {
                    program: program.clone(),
                    args: strings("args")?,
                    env: pairs("env")?,
                },
                (None, Some(Value::String(url))) => {
                    let mut bearer = None;
                    let mut headers = Vec::new();
                    for (header, value) in pairs("headers")? {
                        match (
                            header.eq_ignore_ascii_case("authorization"),
                            value.strip_prefix("Bearer "),
                        ) {
                            (true, Some(token)) => bearer = Some(token.to_owned()),
                            (true, None) => {
                                return Err(at(&format!(
                                    "the header `{header}` must be `Bearer <token>`"
                                )));
                            }
                            (false, _) => headers.push((header, value)),
                        }
                    }
                    ServerSpec::Url {
                        url: url.clone(),
                        bearer,
                        headers,
                    }
                }
                _ => return Err(at("give either `command` or `url`, as a string")),
            };
            Ok((name.clone(), spec))
        })
        .collect()
}

/// How to reach one server of an `mcpServers` file.
#[non_exhaustive]
#[derive(Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A command to start, talked to over its stdin and stdout.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: Vec<(String, String)>,
    },
    /// A streamable HTTP endpoint.
    Url {
        /// The endpoint.
        url: String,
        /// The bearer token, if any (never shown: see `Debug`).
        bearer: Option<String>,
        /// Other headers sent on every request, name and value (values never shown).
        headers: Vec<(String, String)>,
    },
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Command { program, args, env } => f
                .debug_struct("Command")
                .field("program", program)
                .field("args", args)
                .field("env", &env.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .finish(),
            Self::Url {
                url,
                bearer,
                headers,
            } => f
                .debug_struct("Url")
                .field("url", url)
                .field("bearer", &bearer.as_ref().map(|_| "***"))
                .field(
                    "headers",
                    &headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

impl McpServer {
    /// Connects to the server `spec` describes.
    pub async fn connect(name: &str, spec: &ServerSpec) -> Result<Self, ClientError> {
        match spec {
            ServerSpec::Command { program, args, env } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().map(|(k, v)| (k, v)));
                Self::stdio(name, command).await
            }
            ServerSpec::Url {
                url,
                bearer,
                headers,
            } => Self::http_with_headers(name, url, bearer.as_deref(), headers).await,
        }
    }
}

/// One tool of an MCP server, as an agent's [`Tool`].
pub struct McpTool {
    connection: Arc<Connection>,
    name: String,
    /// The tool as it was listed when this was made: its definition while the server lists
    /// it no more.
    last: Arc<Compiled>,
    settings: ToolSettings,
}

/// Sends `notifications/cancelled` for a call whose caller stopped waiting (the run was
/// cancelled, or the call's future dropped), unless disarmed by its answer.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let notification = ClientNotification::CancelledNotification(CancelledNotification::new(
            CancelledNotificationParam::new(
                Some(id),
                Some("the caller stopped waiting for the tool".into()),
            ),
        ));
        // Dropped inside the runtime (a run's future): the notice goes out on its own task.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// One `tools/call` on `peer`: it asks for progress, and each progress notification starts
/// the `timeout` again, within `max_time` in all; a call dropped before its answer is
/// cancelled at the server.
async fn call_tool(
    peer: Peer<RoleClient>,
    params: CallToolRequestParams,
    settings: &ToolSettings,
) -> Result<CallToolResult, ServiceError> {
    let options = PeerRequestOptions::with_timeout(settings.timeout)
        .reset_timeout_on_progress()
        .with_max_total_timeout(settings.max_time);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer.send_request_with_option(request, options).await?;
    let mut abandoned = Abandoned {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    // A timeout cancels the call itself (rmcp sends the notice).
    let answered = handle.await_response().await;
    abandoned.id = None;
    match answered? {
        ServerResult::CallToolResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

impl McpTool {
    /// A tool result that says the call failed, and why.
    fn failed(&self, error: String) -> Value {
        json!({"success": false, "tool": self.name, "error": error})
    }

    /// The call's result for the model, the media it brings put in `media`.
    async fn call_checked(&self, arguments: &str, media: &mut Vec<Media>) -> Value {
        let Some(tool) = self.connection.catalog.get(&self.name) else {
            return self.failed(format!(
                "the MCP server `{}` no longer offers this tool",
                self.connection.name
            ));
        };
        let limits = &self.settings.limits;
        if arguments.len() > limits.max_bytes {
            return self.failed(format!(
                "the arguments are {} bytes; at most {} are taken",
                arguments.len(),
                limits.max_bytes
            ));
        }
        let arguments: Value = match serde_json::from_str(arguments) {
            Ok(value) => value,
            Err(e) => return self.failed(format!("the arguments are not JSON: {e}")),
        };
        // A broken call never reaches the server: the model gets the retry error. The shape
        // bounds (depth, number of values) are the agents' own, checked before the contract.
        let checked = agent_contracts_runtime::__private::check_shape(&arguments, limits, 0)
            .and_then(|()| tool.input.check(&arguments, limits));
        if let Err(retry) = checked {
            return retry.to_json();
        }
        let Value::Object(map) = arguments else {
            return self.failed("the arguments must be one JSON object".into());
        };
        let mut params =
            CallToolRequestParams::new(self.name.clone()).with_arguments(map as JsonObject);
        // The call's trace goes on at the server: the `execute_tool` span's context, by the
        // MCP conventions' `_meta.traceparent`.
        if let Some(traceparent) = agent_contracts_runtime::telemetry::current_traceparent() {
            let mut meta = JsonObject::new();
            meta.insert("traceparent".into(), Value::String(traceparent));
            params.meta = Some(meta.into());
        }
        let settings = &self.settings;
        let answered = self
            .connection
            .send(|peer| {
                let params = params.clone();
                async move { call_tool(peer, params, settings).await }
            })
            .await;
        let server = &self.connection.name;
        let result = match answered {
            Ok(result) => result,
            Err(Refused::Service(ServiceError::Timeout { timeout })) => {
                return self.failed(match timeout == settings.timeout {
                    true => format!(
                        "the MCP server `{server}` did not answer within {} s (nor report progress)",
                        timeout.as_secs_f64()
                    ),
                    false => format!(
                        "the MCP server `{server}` did not finish within {} s",
                        timeout.as_secs_f64()
                    ),
                });
            }
            Err(error) => {
                return self.failed(format!(
                    "the MCP server `{server}` could not be called: {error}"
                ));
            }
        };
        let text = read_blocks(&result.content, media);
        if result.is_error == Some(true) {
            media.clear();
            return match result.structured_content {
                // A structured error (an agent's retry error, say) reaches the model whole.
                Some(structured) => structured,
                None => self.failed(text.join("\n")),
            };
        }
        match result.structured_content {
            Some(structured) => match &tool.output {
                // The server's answer is untrusted too: the same bounds, then its contract.
                Some(contract) => {
                    match agent_contracts_runtime::__private::check_shape(&structured, limits, 0)
                        .and_then(|()| contract.check(&structured, limits))
                    {
                        Ok(()) => structured,
                        Err(retry) => json!({
                            "success": false,
                            "tool": self.name,
                            "error": "the tool's result breaks its outputSchema",
                            "violations": retry.to_json(),
                        }),
                    }
                }
                None => structured,
            },
            None => Value::String(text.join("\n")),
        }
    }
}

impl Tool for McpTool {
    /// The tool as the server lists it now (refreshed after `list_changed`).
    fn definition(&self) -> ToolDefinition {
        match self.connection.catalog.get(&self.name) {
            Some(tool) => tool.definition.clone(),
            None => self.last.definition.clone(),
        }
    }

    /// Run by the server, agent-side of the model's client: an extension.
    fn tool_type(&self) -> &'static str {
        "extension"
    }

    fn call<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(async move { self.call_checked(arguments, &mut Vec::new()).await })
    }

    /// The result, with its image, audio and binary resource blocks as media.
    fn call_with_media<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let mut media = Vec::new();
            let value = self.call_checked(arguments, &mut media).await;
            ToolOutput::new(value).with_media(media)
        })
    }
}

/// Bytes of base64 media one result may bring to the model; past them, a line of the text
/// says what was left out.
pub const MAX_MEDIA_BYTES: usize = 20 * 1024 * 1024;

/// The text of a result's blocks (text blocks, text resources, resource links), and its media
/// (images, audio, binary resources) put in `media`, within [`MAX_MEDIA_BYTES`].
fn read_blocks(content: &[ContentBlock], media: &mut Vec<Media>) -> Vec<String> {
    let mut text = Vec::new();
    let mut bytes = 0usize;
    let mut keep = |text: &mut Vec<String>, item: Media, size: usize| {
        bytes = bytes.saturating_add(size);
        match bytes <= MAX_MEDIA_BYTES {
            true => media.push(item),
            false => text.push(format!(
                "({} of {size} bytes left out: the result's media pass {MAX_MEDIA_BYTES} bytes)",
                item.media_type
            )),
        }
    };
    for block in content {
        match block {
            ContentBlock::Text(block) => text.push(block.text.clone()),
            ContentBlock::Image(image) => keep(
                &mut text,
                Media::new(
                    MediaKind::Image,
                    &image.mime_type,
                    MediaData::Base64(image.data.clone()),
                ),
                image.data.len(),
            ),
            ContentBlock::Audio(audio) => keep(
                &mut text,
                Media::new(
                    MediaKind::Audio,
                    &audio.mime_type,
                    MediaData::Base64(audio.data.clone()),
                ),
                audio.data.len(),
            ),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { text: body, .. } => {
                    text.push(body.clone())
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => keep(
                    &mut text,
                    Media::new(
                        MediaKind::Document,
                        mime_type.as_deref().unwrap_or("application/octet-stream"),
                        MediaData::Base64(blob.clone()),
                    )
                    .with_uri(uri),
                    blob.len(),
                ),
                _ => {}
            },
            ContentBlock::ResourceLink(link) => {
                text.push(format!("(a resource: {} at {})", link.name, link.uri))
            }
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_media_past_the_bound_are_left_out_and_said_so() {
        let big = "A".repeat(MAX_MEDIA_BYTES / 2 + 1);
        let blocks = [
            ContentBlock::image(big.clone(), "image/png"),
            ContentBlock::text("two charts"),
            ContentBlock::audio(big, "audio/wav"),
        ];
        let mut media = Vec::new();
        let text = read_blocks(&blocks, &mut media);
        assert_eq!(media.len(), 1);
        assert_eq!(media[0].kind, MediaKind::Image);
        assert_eq!(
            text,
            [
                "two charts".to_owned(),
                format!(
                    "(audio/wav of {} bytes left out: the result's media pass {MAX_MEDIA_BYTES} bytes)",
                    MAX_MEDIA_BYTES / 2 + 1
                )
            ]
        );
    }

    fn refusal(text: &str) -> String {
        server_specs(text).unwrap_err().to_string()
    }

    #[test]
    fn an_mcp_servers_file_is_read_as_hosts_write_it_and_refused_where_it_is_wrong() {
        let specs = server_specs(
            r#"{"mcpServers": {"a": {"url": "http://h/mcp", "headers": {"authorization": "Bearer s3cret-token", "X-Key": "k3y-s3cret"}}}}"#,
        )
        .unwrap();
        assert_eq!(
            specs[0].1,
            ServerSpec::Url {
                url: "http://h/mcp".into(),
                bearer: Some("s3cret-token".into()),
                headers: vec![("X-Key".into(), "k3y-s3cret".into())],
            }
        );
        assert!(!format!("{specs:?}").contains("s3cret"));
        assert!(format!("{specs:?}").contains("X-Key"));
        assert_eq!(
            refusal("[1"),
            "the mcpServers file: not JSON: EOF while parsing a list at line 1 column 2"
        );
        assert_eq!(refusal("{}"), "the mcpServers file: no `mcpServers` object");
        assert_eq!(
            refusal(r#"{"mcpServers": {"x": {"command": "a", "url": "b"}}}"#),
            "the mcpServers file: `mcpServers.x`: give either `command` or `url`, as a string"
        );
        assert_eq!(
            refusal(r#"{"mcpServers": {"x": {"command": "a", "args": [1]}}}"#),
            "the mcpServers file: `mcpServers.x`: `args` must be an array of strings"
        );
        assert_eq!(
            refusal(
                r#"{"mcpServers": {"x": {"url": "u", "headers": {"Authorization": "Basic k"}}}}"#
            ),
            "the mcpServers file: `mcpServers.x`: the header `Authorization` must be `Bearer <token>`"
        );
    }
}
