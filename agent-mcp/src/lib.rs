//! Agents as MCP tools: any set of agents served over stdio or streamable HTTP, with their
//! input and output contracts enforced.
//!
//! The MCP specification says a server must validate every tool input, report a validation
//! failure as a tool error (`isError: true`) the model can correct, and return structured
//! results that conform to the declared output schema. That is what a contract does, so a
//! `tools/call` here goes through the same path as a parent model's tool call:
//!
//! - the arguments, as the text the client sent (number text and key order kept: see below),
//!   are merged and checked against the agent's input contract; a broken call is an `isError`
//!   result whose `structuredContent` (and text) is the retry error;
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
//! rmcp parses a call's arguments into a serde_json map, which sorts keys and keeps numbers as
//! `f64` (`0.6` for `0.60`). So each transport also reads the arguments' text from the bytes
//! the client sent, beside rmcp, and that text is what reaches the agent and a workflow's first
//! agent: over streamable HTTP from the request's body, over stdio ([`AgentServer::serve_io`])
//! from each line, matched to the handler by its JSON-RPC id. A message the transport cannot
//! read that way (past [`Limits::max_bytes`](agent_contracts_runtime::Limits) plus
//! [`MAX_ENVELOPE_BYTES`], or not one JSON-RPC object) goes to rmcp untouched and is answered
//! as rmcp answers it; its arguments then reach the agent as rmcp parsed them, re-serialized
//! (sorted keys, serde_json's number text), as do those of a call made in-process.
//!
//! ```no_run
//! # async fn demo(agents: Vec<&'static dyn agent_contracts_runtime::DynAgent>) -> std::io::Result<()> {
//! use agent_contracts_mcp::AgentServer;
//! use std::sync::Arc;
//!
//! let model = Arc::new(agent_contracts_runtime::ScriptedModel::default());
//! let server = AgentServer::new(agents, model);
//! server.serve_stdio().await?; // or: server.serve_http("127.0.0.1:8080".parse().unwrap())
//! # Ok(()) }
//! ```

use agent_contracts_runtime::store::CheckpointStore;
use agent_contracts_runtime::{
    ChatModel, Config, DynAgent, Runtime, Workflow, runtime::CallOptions, stream::Delivery,
};
use axum::http::Request;
use hyper::body::Incoming;
use rmcp::handler::server::ServerHandler;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, MetaObject, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServiceExt as _};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use workflow::{Caller, Runs, ServedWorkflow};

pub mod authorize;
pub mod client;
mod connections;
mod disconnect;
mod guard;
pub mod oauth;
mod paths;
mod progress;
pub mod seal;
mod sessions;
mod settings;
mod tap;
pub mod tls;
mod user;
mod workflow;

use agent_contracts_runtime::contract::ContractError;
pub use progress::{PARTIAL_TEXT_BYTES, PROGRESS_INTERVAL};
pub use settings::{HttpSettings, Sessions};
pub use tap::{MAX_ENVELOPE_BYTES, MAX_PENDING_CALLS};
pub use workflow::{DEFAULT_HANDLE_TTL, DEFAULT_MAX_RUNS, MAX_ANSWER_CHARS, MAX_HANDLE_BYTES};

pub use paths::HTTP_PATH;

/// An MCP server whose tools are agents.
#[derive(Clone)]
pub struct AgentServer {
    inner: Arc<Inner>,
    /// The arguments' text of the calls a line-delimited transport read, by JSON-RPC id
    /// ([`AgentServer::serve_io`]); `None` elsewhere.
    pending: Option<Arc<tap::Pending>>,
}

#[derive(Clone)]
struct Inner {
    /// One route a tool: `run_<agent>` for each agent, `run_<workflow>` and
    /// `resume_<workflow>` for each workflow.
    router: ToolRouter<AgentServer>,
    /// The tools in the order they were added, as `tools/list` gives them.
    tools: Vec<Tool>,
    model: Arc<dyn ChatModel>,
    config: Config,
    runs: Runs,
    http: HttpSettings,
    progress_interval: std::time::Duration,
    /// One permit a `tools/call` in flight, over every client and transport.
    calls: Arc<tokio::sync::Semaphore>,
}

/// `tools/call`s a server runs at once by default ([`AgentServer::with_max_calls`]).
pub const DEFAULT_MAX_CALLS: usize = 64;

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
        let router = agents.iter().fold(ToolRouter::new(), |router, agent| {
            router.with_route(agent_route(*agent))
        });
        Self {
            inner: Arc::new(Inner {
                router,
                tools,
                model,
                config,
                runs: Runs::in_memory(),
                http: HttpSettings::default(),
                progress_interval: PROGRESS_INTERVAL,
                calls: Arc::new(tokio::sync::Semaphore::new(DEFAULT_MAX_CALLS)),
            }),
            pending: None,
        }
    }

    /// Serves `workflow` as `run_<workflow>` (its input schema the first agent's, its
    /// description `description`) and `resume_<workflow>` (`{handle, answer}`), running it on
    /// the server's model. Refused only if the resume tool's contract does not compile.
    ///
    /// ```no_run
    /// # fn demo(server: agent_contracts_mcp::AgentServer, workflow: agent_contracts_runtime::Workflow) -> Result<(), agent_contracts_runtime::contract::ContractError> {
    /// let server = server.workflow(workflow, "Plans an event with four specialists.")?;
    /// # Ok(()) }
    /// ```
    pub fn workflow(
        mut self,
        workflow: Workflow,
        description: &str,
    ) -> Result<Self, ContractError> {
        let inner = Arc::make_mut(&mut self.inner);
        let served = Arc::new(ServedWorkflow::new(
            workflow,
            description,
            inner.config.limits,
        )?);
        inner.tools.extend(served.tools().into_iter().cloned());
        let [run, resume] = workflow_routes(served);
        inner.router.add_route(run);
        inner.router.add_route(resume);
        Ok(self)
    }

    /// Keeps paused runs in `store` instead of the server's memory, with handles signed under
    /// `key`: a server started again on the same store and key resumes the runs the last one
    /// paused, and several servers on one database share them. Keep the key secret; anyone
    /// who has it can forge a handle to any stored run. A key too regular to be secret (all
    /// zeros, a repeated byte: see [`seal::check_key`]) is refused.
    pub fn with_store(
        mut self,
        store: Arc<dyn CheckpointStore>,
        key: [u8; 32],
    ) -> Result<Self, seal::WeakKey> {
        seal::check_key(&key)?;
        let inner = Arc::make_mut(&mut self.inner);
        inner.runs = Runs {
            kept: workflow::Kept::Store(store),
            max_per_client: inner.runs.max_per_client,
            key: Some(key),
            handle_ttl: inner.runs.handle_ttl,
        };
        Ok(self)
    }

    /// Who may reach the HTTP endpoint (by default: loopback hosts, no browser origin, no
    /// token). Checked before a request's body is read; a refused request reaches no handler.
    pub fn with_http(mut self, settings: HttpSettings) -> Self {
        Arc::make_mut(&mut self.inner).http = settings;
        self
    }

    /// How often a client that asked for progress hears that a model call is still in flight
    /// (default [`PROGRESS_INTERVAL`], 10 s): under the time its host waits for a silent call.
    /// Such a call's agent answers stream, and once text has arrived each notification
    /// carries the answer so far (its last [`PARTIAL_TEXT_BYTES`]).
    pub fn with_progress_interval(mut self, interval: std::time::Duration) -> Self {
        Arc::make_mut(&mut self.inner).progress_interval =
            interval.max(std::time::Duration::from_millis(10));
        self
    }

    /// How long after its question a resume handle answers it (default
    /// [`DEFAULT_HANDLE_TTL`], a day); past it the handle gets an `isError` result that says
    /// it expired, and the run stays paused.
    pub fn with_handle_ttl(mut self, ttl: std::time::Duration) -> Self {
        Arc::make_mut(&mut self.inner).runs.handle_ttl = ttl;
        self
    }

    /// How many `tools/call`s run at once (default [`DEFAULT_MAX_CALLS`]), over every client:
    /// one more gets an `isError` result saying the server is busy, at once, rather than a
    /// place in a queue that grows without bound. Each call holds its run's memory and a
    /// model request, so this bounds both.
    pub fn with_max_calls(mut self, max: usize) -> Self {
        Arc::make_mut(&mut self.inner).calls = Arc::new(tokio::sync::Semaphore::new(max.max(1)));
        self
    }

    /// How many paused runs the server keeps in memory for one client (default
    /// [`DEFAULT_MAX_RUNS`]); past it, that client's oldest is forgotten. A client is a bearer
    /// token ([`HttpSettings::bearer_token`]), or everyone on a server without one, so one
    /// client's runs never push out another's. A store given to [`AgentServer::with_store`]
    /// keeps every run.
    pub fn with_max_paused_runs(mut self, max: usize) -> Self {
        Arc::make_mut(&mut self.inner).runs.max_per_client = max.max(1);
        self
    }

    /// Serves one client over this process's stdin and stdout until it disconnects.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serves one client over a line-delimited stream pair (the stdio transport's framing:
    /// one JSON-RPC message a line), such as a child's pipes or a socket, until it
    /// disconnects. The reader is tapped: each `tools/call` line's arguments text is kept for
    /// its handler, by JSON-RPC id, and used when it parses to the map rmcp parsed; a line
    /// longer than [`Limits::max_bytes`](agent_contracts_runtime::Limits) plus [`MAX_ENVELOPE_BYTES`] is
    /// answered with a JSON-RPC error and never parsed.
    pub async fn serve_io<R, W>(mut self, reader: R, writer: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let max = self.max_message_bytes();
        let pending = Arc::new(tap::Pending::new(max));
        self.pending = Some(pending.clone());
        // rmcp writes into a pipe; its lines and the tap's refusals of lines too long to
        // read share the real writer, a whole line at a time.
        let (refusals, refused) = tokio::sync::mpsc::channel(16);
        let reader = tap::Tap::new(reader, pending, max, refusals);
        let (to_merge, from_rmcp) = tokio::io::duplex(64 * 1024);
        let merging = tokio::spawn(tap::merge(from_rmcp, refused, writer));
        let running = self
            .serve((reader, to_merge))
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        merging.await.map_err(std::io::Error::other)?
    }

    /// The streamable HTTP transport at [`HTTP_PATH`], with the SDK's session handling, as an
    /// axum router to serve or nest. First the [`HttpSettings`] checks (Host, Origin, bearer
    /// token), on the headers alone; then a `POST` body of up to the config's
    /// [`Limits::max_bytes`](agent_contracts_runtime::Limits) plus [`MAX_ENVELOPE_BYTES`] is read, within
    /// the body timeout and the bytes held at once, before rmcp reads it, for a `tools/call`'s
    /// arguments text; every body reaches rmcp unchanged.
    pub fn http_router(self) -> axum::Router {
        let http = self.inner.http.clone();
        let max = self.max_message_bytes();
        // The Host and Origin lists are `HttpSettings`'s: rmcp's own checks would run after the
        // tap has read the body, so they are off. Its body bound is the tap's, which refuses a
        // longer body first.
        let config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_max_request_body_bytes(max);
        let make = move || Ok(self.clone());
        let (service, sessions) = match sessions::Bounded::new(http.sessions) {
            Some(bounded) => {
                let bounded = Arc::new(bounded);
                let service = StreamableHttpService::new(make, bounded.clone(), config);
                (
                    axum::Router::new().nest_service(HTTP_PATH, service),
                    Some(bounded),
                )
            }
            None => {
                let config = config.with_legacy_session_mode(false);
                let service = StreamableHttpService::new(
                    make,
                    Arc::new(NeverSessionManager::default()),
                    config,
                );
                (axum::Router::new().nest_service(HTTP_PATH, service), None)
            }
        };
        let intake = tap::Intake::new(max, http.body_timeout, http.max_buffered_bytes, sessions);
        let mut router = service
            .layer(axum::middleware::from_fn_with_state(intake, tap::tap_http))
            .layer(axum::middleware::from_fn(disconnect::watch));
        if let Some(oauth) = http.oauth.clone() {
            // RFC 9728: at the well-known path, and with the endpoint's path after it.
            let metadata = axum::routing::get(move |headers: axum::http::HeaderMap| {
                let document = oauth.metadata(&headers).to_string();
                async move {
                    (
                        [(axum::http::header::CONTENT_TYPE, "application/json")],
                        document,
                    )
                }
            });
            router = router
                .route(oauth::METADATA_PATH, metadata.clone())
                .route(&format!("{}{HTTP_PATH}", oauth::METADATA_PATH), metadata);
        }
        router.layer(axum::middleware::from_fn_with_state(
            Arc::new(http),
            guard::guard,
        ))
    }

    /// The longest message whose `tools/call` arguments a transport reads as text.
    fn max_message_bytes(&self) -> usize {
        self.inner
            .config
            .limits
            .max_bytes
            .saturating_add(MAX_ENVELOPE_BYTES)
    }

    /// The arguments of `request` as JSON text: as the client wrote them when the transport
    /// read them, else rmcp's map re-serialized (sorted keys, serde_json's number text).
    fn arguments_text(
        &self,
        arguments: Option<&JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> String {
        let over_http = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<tap::RawArguments>());
        if let Some(tap::RawArguments(text)) = over_http {
            return text.to_string();
        }
        let over_lines = self
            .pending
            .as_ref()
            .and_then(|pending| pending.take(&context.id, arguments));
        if let Some(text) = over_lines {
            return text;
        }
        match arguments {
            Some(map) => Value::Object(map.clone()).to_string(),
            None => "{}".to_owned(),
        }
    }

    /// Serves streamable HTTP on `addr` until the process ends (see
    /// [`AgentServer::serve_http_on`]).
    pub async fn serve_http(self, addr: SocketAddr) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener).await
    }

    /// Serves streamable HTTP on a bound listener (port 0 lets the OS pick), within the
    /// [`HttpSettings`]: a connection must send a request's headers within the header timeout
    /// (hyper closes it otherwise), and past the connection bound a new connection is closed
    /// as soon as it is accepted. Requests may also name the bound address itself as their
    /// host (unless it is `0.0.0.0` or `[::]`, which no client names: list the server's names
    /// with [`HttpSettings::allowed_host`]).
    pub async fn serve_http_on(mut self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let addr = listener.local_addr()?;
        if !addr.ip().is_unspecified() {
            let inner = Arc::make_mut(&mut self.inner);
            let host = match addr {
                SocketAddr::V4(v4) => v4.ip().to_string(),
                SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
            };
            let mut http = inner.http.clone().allowed_host(host.clone());
            // A loopback server answers its own origin (a page it serves, a local inspector
            // on its port): DNS rebinding needs another name, which the Host check refuses.
            if addr.ip().is_loopback() {
                let port = addr.port();
                http = http
                    .allowed_origin(format!("http://{host}:{port}"))
                    .allowed_origin(format!("http://localhost:{port}"));
            }
            inner.http = http;
        }
        let settings = self.inner.http.clone();
        let router = self.http_router();
        let connections = connections::Connections::new(settings.max_connections);
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                // Out of file descriptors, or a connection reset before it was accepted:
                // wait a moment and go on, as a server must not stop for either.
                Err(error) => {
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Some(slot) = connections.admit() else {
                tracing::warn!(
                    max = settings.max_connections,
                    "closed a connection past the bound: every open one is serving a request"
                );
                drop(stream);
                continue;
            };
            let router = router.clone();
            let header_timeout = settings.header_timeout;
            tokio::spawn(async move {
                let busy = slot.busy.clone();
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let held = connections::Busy::new(&busy);
                    let served = tower::ServiceExt::oneshot(
                        router.clone(),
                        request.map(axum::body::Body::new),
                    );
                    async move {
                        let response = served.await?;
                        Ok::<_, std::convert::Infallible>(
                            response.map(|body| connections::Held::new(body, held)),
                        )
                    }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .with_upgrades();
                tokio::select! {
                    served = connection => {
                        if let Err(error) = served {
                            tracing::debug!(%error, "a connection ended with an error");
                        }
                    }
                    () = slot.close.cancelled() => {}
                }
                drop(slot);
            });
        }
    }

    /// What every route needs of a call, read from its request: the arguments' text, who
    /// calls (and how they are asked for input, and when they stop listening), and the model,
    /// wrapped to report progress when the call asked for it.
    fn setup(&self, context: &RequestContext<RoleServer>, arguments: Option<&JsonObject>) -> Setup {
        let input_required = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
            && context
                .client_capabilities()
                .is_some_and(|c| c.elicitation.is_some());
        let parts = context.extensions.get::<axum::http::request::Parts>();
        // The run stops when the client cancels the call, or when its HTTP client went away.
        let cancel = context.ct.child_token();
        let disconnect = parts
            .and_then(|parts| parts.extensions.get::<disconnect::Disconnect>())
            .map(|disconnect| disconnect.0.clone());
        if let Some(disconnect) = disconnect {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = disconnect.cancelled() => cancel.cancel(),
                    () = cancel.cancelled() => {}
                }
            });
        }
        let client = parts
            .and_then(|parts| parts.extensions.get::<guard::Client>())
            .copied()
            .unwrap_or(guard::Client::Anyone);
        // A client that asked for progress hears of each model call of the run, and of the
        // answer's text as it streams.
        let (model, delivery) = match context.meta.get_progress_token() {
            Some(token) => (
                Arc::new(progress::Reporting::new(
                    self.inner.model.clone(),
                    context.peer.clone(),
                    token,
                    self.inner.progress_interval,
                )) as Arc<dyn ChatModel>,
                match &self.inner.config.delivery {
                    Delivery::Whole => Delivery::streamed(),
                    streamed => streamed.clone(),
                },
            ),
            None => (self.inner.model.clone(), self.inner.config.delivery.clone()),
        };
        let elicit = (!input_required
            && context
                .client_capabilities()
                .is_some_and(|c| c.elicitation.is_some()))
        .then(|| context.peer.clone());
        Setup {
            elicit,
            arguments: self.arguments_text(arguments, context),
            caller: Caller {
                client,
                input_required,
                cancel,
            },
            model,
            delivery,
        }
    }

    /// One agent's `tools/call`: the contract path on the arguments' text, the agent's run,
    /// the checked output. A call that omitted fields only a person can give asks the client
    /// for them first (see [`user`]): `round` is the `requestState` and answers of the
    /// retry of an `input_required` round.
    async fn call_agent(
        &self,
        agent: &'static dyn DynAgent,
        setup: Setup,
        round: Option<(String, Option<rmcp::model::InputResponses>)>,
    ) -> CallToolResponse {
        let (arguments, answered) = match round {
            Some((state, responses)) => {
                match user::answered(agent, &setup.arguments, &state, responses.as_ref()) {
                    Ok(given) => given,
                    Err(message) => {
                        return CallToolResult::error(vec![ContentBlock::text(message)]).into();
                    }
                }
            }
            None => (setup.arguments, Vec::new()),
        };
        let (mut arguments, mut answered) = (arguments, answered);
        let cancel = setup.caller.cancel.clone();
        let config = self
            .inner
            .config
            .clone()
            .with_cancel(setup.caller.cancel)
            .with_delivery(setup.delivery);
        let runtime = Runtime::with_config(setup.model, config);
        let mut rounds = 0;
        loop {
            let options = CallOptions::default().with_caller("mcp_client");
            let result = runtime.call_sub_agent(agent, &arguments, options).await;
            let asked = match &result {
                Err(agent_contracts_runtime::Error::Retry { error, .. }) => {
                    user::asked(agent, error, &answered)
                }
                _ => None,
            };
            let Some((fields, reason)) = asked else {
                return agent_result(agent, result);
            };
            match &setup.elicit {
                Some(peer) if rounds < user::MAX_ELICITATIONS => {
                    rounds += 1;
                    let asked =
                        user::elicit(peer, &cancel, agent, &fields, reason.as_deref(), &arguments);
                    match asked.await {
                        Ok(given) => (arguments, answered) = given,
                        Err(message) => {
                            return CallToolResult::error(vec![ContentBlock::text(message)]).into();
                        }
                    }
                }
                _ => {
                    let elicit = setup.caller.input_required;
                    return user::ask(agent, &fields, reason.as_deref(), elicit);
                }
            }
        }
    }

    /// The invalid-params error of a call to a tool the server does not have.
    fn unknown_tool(&self, name: &str) -> ErrorData {
        let known: Vec<&str> = self.inner.tools.iter().map(|t| t.name.as_ref()).collect();
        ErrorData::invalid_params(
            format!(
                "unknown tool `{}`; the tools are: {}",
                agent_contracts_runtime::__private::truncate(name, 100),
                known.join(", ")
            ),
            None,
        )
    }
}

/// An agent call's result: the checked output (the lossless repairs its arguments needed in
/// `_meta.repairs`, since the structured content is the output contract's), the retry error,
/// or why the agent could not answer.
fn agent_result(
    agent: &dyn DynAgent,
    result: Result<agent_contracts_runtime::AgentOutput, agent_contracts_runtime::Error>,
) -> CallToolResponse {
    match result {
        Ok(output) => {
            let mut meta = context_meta(&output.context_id.to_string());
            if !output.repairs.is_empty() {
                meta.0.insert(
                    "repairs".into(),
                    serde_json::to_value(&output.repairs).unwrap_or_default(),
                );
            }
            CallToolResult::structured(output.output.value().clone())
                .with_meta(Some(meta))
                .into()
        }
        Err(agent_contracts_runtime::Error::Retry {
            error,
            context_id: Some(context_id),
            ..
        }) => CallToolResult::structured_error(
            serde_json::to_value(error.with_context_id(&context_id)).unwrap_or_default(),
        )
        .with_meta(Some(context_meta(&context_id.to_string())))
        .into(),
        Err(error) => CallToolResult::error(vec![ContentBlock::text(format!(
            "`{}` could not answer: {error}",
            agent.name()
        ))])
        .into(),
    }
}

/// What a route needs of its call (see [`AgentServer::setup`]).
struct Setup {
    arguments: String,
    /// The client, when it declares elicitation on a protocol before `2026-07-28`: asked by
    /// `elicitation/create` for the fields a person gives.
    elicit: Option<rmcp::Peer<RoleServer>>,
    caller: Caller,
    model: Arc<dyn ChatModel>,
    /// How an agent call's answers arrive: streamed when the client asked for progress.
    delivery: Delivery,
}

/// `run_<agent>`'s route.
fn agent_route(agent: &'static dyn DynAgent) -> ToolRoute<AgentServer> {
    ToolRoute::new_dyn(
        tool_of(agent),
        move |call: ToolCallContext<'_, AgentServer>| {
            Box::pin(async move {
                let server = call.service;
                let setup = server.setup(&call.request_context, call.arguments.as_ref());
                let round = call
                    .request_state
                    .map(|state| (state, call.input_responses));
                Ok(server.call_agent(agent, setup, round).await)
            })
        },
    )
}

/// A workflow's two routes: `run_<workflow>` (a new run, or an `input_required` round's
/// answer) and `resume_<workflow>`.
fn workflow_routes(served: Arc<ServedWorkflow>) -> [ToolRoute<AgentServer>; 2] {
    let [run_tool, resume_tool] = served.tools().map(Clone::clone);
    let runs = served.clone();
    let run = ToolRoute::new_dyn(run_tool, move |call: ToolCallContext<'_, AgentServer>| {
        let served = runs.clone();
        Box::pin(async move {
            let server = call.service;
            let setup = server.setup(&call.request_context, call.arguments.as_ref());
            let round = call
                .request_state
                .map(|state| (state, call.input_responses));
            let runs = &server.inner.runs;
            Ok(served
                .run(setup.model, runs, round, setup.arguments, &setup.caller)
                .await)
        })
    });
    let resume = ToolRoute::new_dyn(
        resume_tool,
        move |call: ToolCallContext<'_, AgentServer>| {
            let served = served.clone();
            Box::pin(async move {
                let server = call.service;
                let setup = server.setup(&call.request_context, call.arguments.as_ref());
                let runs = &server.inner.runs;
                Ok(served
                    .resume(setup.model, runs, call.arguments, &setup.caller)
                    .await)
            })
        },
    );
    [run, resume]
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
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new(
                "agent-contracts",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
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
        if !self.inner.router.has_route(&request.name) {
            return Err(self.unknown_tool(&request.name));
        }
        let Ok(_running) = self.inner.calls.clone().try_acquire_owned() else {
            tracing::warn!("refused a call: as many calls as the server runs at once are running");
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "the server is running as many calls as it runs at once; try again shortly",
            )])
            .into());
        };
        let span = call_span(&request, &context);
        let call = ToolCallContext::new(self, request, context);
        tracing::Instrument::instrument(self.inner.router.call(call), span).await
    }
}

/// The span of one `tools/call`, by the OpenTelemetry MCP conventions (v1.41): named
/// `tools/call {tool}`, kind server, with `mcp.method.name`, `jsonrpc.request.id`,
/// `mcp.session.id` (the HTTP session, when there is one) and the tool as `gen_ai.tool.name`.
/// When the caller's `_meta` carries a well-formed W3C `traceparent`, the span continues the
/// caller's trace, a child of the caller's span
/// ([`continue_trace`](agent_contracts_runtime::telemetry::continue_trace): done by the
/// OpenTelemetry layer's crate when it is installed).
fn call_span(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    let session = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|value| value.to_str().ok())
        .map(|id| agent_contracts_runtime::__private::truncate(id, 128).into_owned());
    let parent = context
        .meta
        .get("traceparent")
        .and_then(Value::as_str)
        .filter(|text| traceparent(text).is_some());
    let tool = agent_contracts_runtime::__private::truncate(&request.name, 128);
    let span = tracing::info_span!(
        target: "agent_contracts_mcp",
        "mcp.tools_call",
        otel.name = format_args!("tools/call {tool}"),
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = "tools/call",
        jsonrpc.request.id = %context.id,
        mcp.session.id = session.as_deref(),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool,
    );
    // Before the span is first entered: a started span keeps its parent.
    if let Some(parent) = parent {
        agent_contracts_runtime::telemetry::continue_trace(&span, parent);
    }
    span
}

/// The trace and parent span IDs of a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), if
/// it is one; anything else (too long, not hex, all zeros) is not.
fn traceparent(text: &str) -> Option<(&str, &str)> {
    let mut parts = text.split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let valid = parts.next().is_none()
        && version == "00"
        && hex(trace, 32)
        && hex(parent, 16)
        && hex(flags, 2)
        && trace.bytes().any(|b| b != b'0')
        && parent.bytes().any(|b| b != b'0');
    valid.then_some((trace, parent))
}

#[cfg(test)]
mod tests {
    use super::traceparent;

    #[test]
    fn only_a_well_formed_traceparent_is_read() {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        let parent = "00f067aa0ba902b7";
        assert_eq!(
            traceparent(&format!("00-{trace}-{parent}-01")),
            Some((trace, parent))
        );
        for bad in [
            format!("01-{trace}-{parent}-01"),
            format!("00-{trace}-{parent}"),
            format!("00-{trace}-{parent}-01-extra"),
            format!("00-{}-{parent}-01", "0".repeat(32)),
            format!("00-{trace}-{}-01", "0".repeat(16)),
            format!("00-{}-{parent}-01", trace.to_uppercase()),
            format!("00-{trace}x-{parent}-01"),
            String::new(),
        ] {
            assert_eq!(traceparent(&bad), None, "{bad}");
        }
    }
}
