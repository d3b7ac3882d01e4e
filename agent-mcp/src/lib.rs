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
//! Workflows are tools too ([`AgentServer::workflow`]): `run_<workflow>` starts a run, and a
//! run that pauses for the user answers with its question and an opaque handle, which
//! `resume_<workflow>` (or, for a client on protocol `2026-07-28` that declares elicitation,
//! the specification's `input_required` round) answers. The paused run stays on the server:
//! in a bounded memory store by default, or in the store given to [`AgentServer::with_store`].
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
use agent_core::store::CheckpointStore;
use agent_core::{ChatModel, Config, DynAgent, Runtime, Workflow};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, MetaObject, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServiceExt as _};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use workflow::{Caller, Runs, ServedWorkflow};

mod workflow;

pub use agent_core::contract::ContractError;
pub use workflow::{DEFAULT_MAX_RUNS, MAX_ANSWER_CHARS, MAX_HANDLE_BYTES};

/// The path the streamable HTTP transport serves.
pub const HTTP_PATH: &str = "/mcp";

/// An MCP server whose tools are agents.
#[derive(Clone)]
pub struct AgentServer {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    agents: Vec<&'static dyn DynAgent>,
    workflows: Vec<Arc<ServedWorkflow>>,
    tools: Vec<Tool>,
    model: Arc<dyn ChatModel>,
    config: Config,
    runs: Runs,
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
                workflows: Vec::new(),
                tools,
                model,
                config,
                runs: Runs::in_memory(),
            }),
        }
    }

    /// Serves `workflow` as `run_<workflow>` (its input schema the first agent's, its
    /// description `description`) and `resume_<workflow>` (`{handle, answer}`), running it on
    /// the server's model. Refused only if the resume tool's contract does not compile.
    ///
    /// ```no_run
    /// # fn demo(server: agent_mcp::AgentServer, workflow: agent_core::Workflow) -> Result<(), agent_mcp::ContractError> {
    /// let server = server.workflow(workflow, "Plans an event with four specialists.")?;
    /// # Ok(()) }
    /// ```
    pub fn workflow(
        mut self,
        workflow: Workflow,
        description: &str,
    ) -> Result<Self, ContractError> {
        let served = ServedWorkflow::new(workflow, description)?;
        let inner = Arc::make_mut(&mut self.inner);
        inner.tools.extend(served.tools().into_iter().cloned());
        inner.workflows.push(Arc::new(served));
        Ok(self)
    }

    /// Keeps paused runs in `store` instead of the server's memory, with handles signed under
    /// `key`: a server started again on the same store and key resumes the runs the last one
    /// paused, and several servers on one database share them. Keep the key secret; anyone
    /// who has it can forge a handle to any stored run.
    pub fn with_store(mut self, store: Arc<dyn CheckpointStore>, key: [u8; 32]) -> Self {
        Arc::make_mut(&mut self.inner).runs = Runs {
            store,
            key: Some(key),
            in_memory: false,
        };
        self
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

    /// One `tools/call`: a workflow's run or resume tool, else an agent's.
    async fn call(
        &self,
        request: CallToolRequestParams,
        caller: Caller,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let model = self.inner.model.clone();
        let runs = &self.inner.runs;
        if let Some(served) = self.inner.workflows.iter().find(|w| w.is_run(name)) {
            return Ok(served.run(model, runs, request, &caller).await);
        }
        if let Some(served) = self.inner.workflows.iter().find(|w| w.is_resume(name)) {
            return Ok(served.resume(model, runs, request.arguments, &caller).await);
        }
        self.call_agent(request, caller.cancel)
            .await
            .map(Into::into)
    }

    /// One agent's `tools/call`: the contract path, the agent's run, the checked output.
    async fn call_agent(
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
            "Each `run_` tool runs an agent or a workflow. Pass the inputs as top-level arguments beside `task`. A call that breaks the input contract returns a retry error (isError) that says what to fix. A workflow that asks the user a question returns `status: \"input_required\"` with a `handle`: answer with its `resume_` tool.",
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
        let input_required = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
            && context
                .client_capabilities()
                .is_some_and(|c| c.elicitation.is_some());
        let caller = Caller {
            input_required,
            cancel: context.ct.clone(),
        };
        self.call(request, caller).await
    }
}
