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
    Contract, Limits, Tool, contract::ContractKind, contract::ToolDefinition, model::BoxFuture,
};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ContentBlock, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// How long a tool call may take by default before the model is told it timed out.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// How long a call may take before the model is told it timed out.
    pub timeout: Duration,
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            timeout: DEFAULT_TOOL_TIMEOUT,
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
}

/// A connection to one MCP server. Its tools share it: it closes when the server and every
/// tool of it are dropped.
pub struct McpServer {
    name: String,
    service: Arc<RunningService<RoleClient, ()>>,
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
        let service = ().serve(transport).await.map_err(|e| connect(e.to_string()))?;
        Ok(Self {
            name,
            service: Arc::new(service),
        })
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
        )
        .await
    }

    /// Connects to a streamable HTTP endpoint with the OAuth tokens `manager` holds (see
    /// [`authorize`](crate::authorize)): each request carries the access token, refreshed
    /// with the refresh token when it nears its expiry; `headers` as for
    /// [`http_with_headers`](Self::http_with_headers).
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
        let client = rmcp::transport::auth::AuthClient::new(client, manager);
        Self::start(
            name,
            url,
            StreamableHttpClientTransport::with_client(client, config),
        )
        .await
    }

    async fn start<C>(
        name: String,
        url: &str,
        transport: StreamableHttpClientTransport<C>,
    ) -> Result<Self, ClientError>
    where
        C: rmcp::transport::streamable_http_client::StreamableHttpClient<Error = reqwest::Error>,
    {
        let service =
            ().serve(transport)
                .await
                .map_err(|e| ClientError::Connect {
                    server: name.clone(),
                    // The token is in no error rmcp or reqwest writes.
                    reason: crate::tls::connect_failure(url, &e),
                })?;
        Ok(Self {
            name,
            service: Arc::new(service),
        })
    }
    /// The server's name, as its tools' errors say it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's tools, each with its contracts compiled, for an agent's model.
    pub async fn tools(&self, settings: ToolSettings) -> Result<Vec<Arc<dyn Tool>>, ClientError> {
        let listed = self
            .service
            .list_all_tools()
            .await
            .map_err(|e| ClientError::ListTools {
                server: self.name.clone(),
                reason: e.to_string(),
            })?;
        listed
            .into_iter()
            .map(|tool| {
                McpTool::new(&self.name, self.service.clone(), tool, settings.clone())
                    .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
            })
            .collect()
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
    server: String,
    service: Arc<RunningService<RoleClient, ()>>,
    definition: ToolDefinition,
    input: Contract,
    output: Option<Contract>,
    settings: ToolSettings,
}

impl McpTool {
    fn new(
        server: &str,
        service: Arc<RunningService<RoleClient, ()>>,
        tool: rmcp::model::Tool,
        settings: ToolSettings,
    ) -> Result<Self, ClientError> {
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
        Ok(Self {
            server: server.to_owned(),
            service,
            definition: ToolDefinition {
                name,
                description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                parameters,
            },
            input,
            output,
            settings,
        })
    }

    /// A tool result that says the call failed, and why.
    fn failed(&self, error: String) -> Value {
        json!({"success": false, "tool": self.definition.name, "error": error})
    }

    async fn call_checked(&self, arguments: &str) -> Value {
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
            .and_then(|()| self.input.check(&arguments, limits));
        if let Err(retry) = checked {
            return retry.to_json();
        }
        let Value::Object(map) = arguments else {
            return self.failed("the arguments must be one JSON object".into());
        };
        let mut params = CallToolRequestParams::new(self.definition.name.clone())
            .with_arguments(map as JsonObject);
        // The call's trace goes on at the server: the `execute_tool` span's context, by the
        // MCP conventions' `_meta.traceparent`.
        if let Some(traceparent) = agent_contracts_runtime::telemetry::current_traceparent() {
            let mut meta = JsonObject::new();
            meta.insert("traceparent".into(), Value::String(traceparent));
            params.meta = Some(meta.into());
        }
        let answered =
            tokio::time::timeout(self.settings.timeout, self.service.peer().call_tool(params))
                .await;
        let result = match answered {
            Err(_) => {
                return self.failed(format!(
                    "the MCP server `{}` did not answer within {} s",
                    self.server,
                    self.settings.timeout.as_secs_f64()
                ));
            }
            Ok(Err(e)) => {
                return self.failed(format!(
                    "the MCP server `{}` could not be called: {e}",
                    self.server
                ));
            }
            Ok(Ok(result)) => result,
        };
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            })
            .collect();
        if result.is_error == Some(true) {
            return match result.structured_content {
                // A structured error (an agent's retry error, say) reaches the model whole.
                Some(structured) => structured,
                None => self.failed(text.join("\n")),
            };
        }
        match result.structured_content {
            Some(structured) => match &self.output {
                // The server's answer is untrusted too: the same bounds, then its contract.
                Some(contract) => {
                    match agent_contracts_runtime::__private::check_shape(&structured, limits, 0)
                        .and_then(|()| contract.check(&structured, limits))
                    {
                        Ok(()) => structured,
                        Err(retry) => json!({
                            "success": false,
                            "tool": self.definition.name,
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
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    /// Run by the server, agent-side of the model's client: an extension.
    fn tool_type(&self) -> &'static str {
        "extension"
    }

    fn call<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(self.call_checked(arguments))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
