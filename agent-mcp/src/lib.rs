//! Agents as MCP tools: any set of agents served over stdio or streamable HTTP, with their
//! input and output contracts enforced.
//!
//! The MCP specification says a server must validate every tool input, report a validation
//! failure as a tool error (`isError: true`) the model can correct, and return structured
//! results that conform to the declared output schema. That is what a contract does, so a
//! `tools/call` here goes through the same path as a parent model's tool call:
//!
//! - the arguments (number text and key order as the client sent them) are merged and checked
//!   against the agent's input contract; a broken call is an `isError` result whose
//!   `structuredContent` (and text) is the retry error;
//! - a valid call runs the agent on the configured model, with output retries, and returns the
//!   checked output as `structuredContent` (and as JSON text), with the call's context ID in
//!   `_meta.context_id`;
//! - an unknown tool is a JSON-RPC invalid-params error; a model failure is an `isError` result
//!   with a clear message; the session survives every bad call;
//! - the client's cancellation of a request stops the agent's run.
//!
//! ```no_run
//! # async fn demo(agents: Vec<&'static dyn agent_core::DynAgent>) -> std::io::Result<()> {
//! use agent_mcp::AgentServer;
//! use std::sync::Arc;
//!
//! let model = Arc::new(agent_core::ScriptedModel::new());
//! let server = AgentServer::new(agents, model);
//! server.serve_stdio().await?; // or: server.serve_http("127.0.0.1:8080".parse().unwrap())
//! # Ok(()) }
//! ```

use agent_core::model::ToolCallRequest;
use agent_core::runtime::ToolResult;
use agent_core::{ChatModel, Config, DynAgent, Runtime};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServiceExt as _};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;

/// The path the streamable HTTP transport serves.
pub const HTTP_PATH: &str = "/mcp";

/// An MCP server whose tools are agents.
#[derive(Clone)]
pub struct AgentServer {
    inner: Arc<Inner>,
}

struct Inner {
    agents: Vec<&'static dyn DynAgent>,
    tools: Vec<Tool>,
    model: Arc<dyn ChatModel>,
    config: Config,
}

impl AgentServer {
    /// Serves `agents` as tools (`run_<agent>`), running them on `model`.
    pub fn new(agents: Vec<&'static dyn DynAgent>, model: Arc<dyn ChatModel>) -> Self {
        Self::with_config(agents, model, Config::default())
    }

    /// Like [`AgentServer::new`], with the bounds and limits of every run.
    pub fn with_config(
        agents: Vec<&'static dyn DynAgent>,
        model: Arc<dyn ChatModel>,
        config: Config,
    ) -> Self {
        let tools = agents.iter().map(|agent| tool_of(*agent)).collect();
        Self {
            inner: Arc::new(Inner {
                agents,
                tools,
                model,
                config,
            }),
        }
    }

    /// The tools as MCP lists them.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Serves one client over this process's stdin and stdout until it disconnects.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }

    /// The streamable HTTP transport at [`HTTP_PATH`], with the SDK's session handling, as an
    /// axum router to serve or nest.
    pub fn http_router(self) -> axum::Router {
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        axum::Router::new().nest_service(HTTP_PATH, service)
    }

    /// Serves streamable HTTP on `addr` until the process ends.
    pub async fn serve_http(self, addr: SocketAddr) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener).await
    }

    /// Serves streamable HTTP on a bound listener (port 0 lets the OS pick).
    pub async fn serve_http_on(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        axum::serve(listener, self.http_router()).await
    }

    /// One `tools/call`: the contract path, the agent's run, the checked output.
    async fn call(
        &self,
        request: CallToolRequestParams,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(agent) = self
            .inner
            .agents
            .iter()
            .find(|a| request.name.strip_prefix("run_") == Some(a.name()))
        else {
            let known: Vec<String> = self
                .inner
                .tools
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are: {}",
                    agent_core::limits::truncate(&request.name, 100),
                    known.join(", ")
                ),
                None,
            ));
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let call = ToolCallRequest {
            id: String::new(),
            name: request.name.to_string(),
            arguments,
        };
        let config = self.inner.config.clone().with_cancel(cancel);
        let runtime = Runtime::with_config(self.inner.model.clone(), config);
        match runtime.execute("mcp_client", *agent, &call).await {
            Ok(ToolResult::Success(output)) => {
                Ok(CallToolResult::structured(output.value().clone())
                    .with_meta(Some(context_meta(&output.context_id.to_string()))))
            }
            Ok(ToolResult::Retry { error, context_id }) => Ok(CallToolResult::structured_error(
                error.to_json_with_context_id(&context_id),
            )
            .with_meta(Some(context_meta(&context_id.to_string())))),
            Err(error) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "`{}` could not answer: {error}",
                agent.name()
            ))])),
        }
    }
}

/// `_meta` of a result: the agent call's context ID.
fn context_meta(context_id: &str) -> MetaObject {
    let mut meta = JsonObject::new();
    meta.insert("context_id".into(), context_id.into());
    MetaObject(meta)
}

/// An agent as an MCP tool: its tool definition (name, description, the contract's fields at
/// the top level beside `task`) and its output contract as `outputSchema`.
fn tool_of(agent: &dyn DynAgent) -> Tool {
    let definition = agent.tool_definition();
    let object = |value: &Value| match value {
        Value::Object(map) => map.clone(),
        _ => JsonObject::new(),
    };
    let tool = Tool::new(
        definition.name,
        definition.description,
        Arc::new(object(&definition.parameters)),
    );
    match agent.output_contract() {
        Some(contract) => tool.with_raw_output_schema(Arc::new(object(contract.schema()))),
        None => tool,
    }
}

impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "Each tool runs an agent. Pass the agent's inputs as top-level arguments beside `task`. A call that breaks the agent's input contract returns a retry error (isError) that says what to fix.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context.ct.clone()).await.map(Into::into)
    }
}
