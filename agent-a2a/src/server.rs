//! [`A2aServer`]: the agent card, the JSON-RPC binding's methods, and the runs of the tasks
//! they start.

use crate::guard::Client;
use crate::report::Reporting;
use crate::settings::HttpSettings;
use crate::skills::{ServedWorkflow, Skill, open_task_id, seal_task_id};
use crate::tasks::{Event, Task, Tasks};
use crate::wire::{Incoming, RpcError, TaskState, code, data_part, new_id, text_part};
use agent_contracts_runtime::contract::ContractError;
use agent_contracts_runtime::runtime::{CallOptions, UserAsk};
use agent_contracts_runtime::store::{CheckpointStore, RunStatus, StoreError};
use agent_contracts_runtime::stream::Delivery;
use agent_contracts_runtime::transcript::ContextIdGenerator;
use agent_contracts_runtime::workflow::{PausedRun, WorkflowOutcome};
use agent_contracts_runtime::{ChatModel, Config, DynAgent, Error, Runtime, Workflow};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

/// The path of the agent card.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";

/// The path of the JSON-RPC endpoint the card names.
pub const RPC_PATH: &str = "/";

/// Bytes a request may carry beyond the skill's arguments (the limits'
/// [`max_bytes`](agent_contracts_runtime::Limits)): the JSON-RPC and message envelope.
pub const MAX_ENVELOPE_BYTES: usize = 64 * 1024;

/// Tasks that run at once by default ([`A2aServer::with_max_calls`]).
pub const DEFAULT_MAX_CALLS: usize = 64;

/// An A2A server whose skills are agents and workflows.
#[derive(Clone)]
pub struct A2aServer {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    name: String,
    description: Option<String>,
    skills: Vec<Skill>,
    model: Arc<dyn ChatModel>,
    config: Config,
    http: HttpSettings,
    public_url: Option<String>,
    tasks: Arc<Tasks>,
    /// Where workflow runs are kept while they wait for an answer.
    store: Arc<dyn CheckpointStore>,
    /// The key task IDs of workflow runs are signed with (`None`: the OS gave no randomness,
    /// and workflow skills say so).
    key: Option<[u8; 32]>,
    /// One permit a running task, over every client.
    calls: Arc<tokio::sync::Semaphore>,
}

/// A key too regular to be a secret ([`A2aServer::with_store`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "the key has {distinct} distinct bytes: use 32 random bytes (such as the output of `openssl rand -hex 32`)"
)]
pub struct WeakKey {
    /// Distinct byte values in the key.
    pub distinct: usize,
}

/// What a started (or answered) task needs next.
struct Started {
    task: Arc<Task>,
    /// A streaming caller's events, subscribed before the run started.
    events: Option<tokio::sync::broadcast::Receiver<Event>>,
    /// A run started: wait for it (otherwise the task is as it will stay, for now).
    running: bool,
    return_immediately: bool,
}

impl A2aServer {
    /// Serves `agents` as skills (one each, its id the agent's name), running them on `model`.
    pub fn new(agents: Vec<&'static dyn DynAgent>, model: Arc<dyn ChatModel>) -> Self {
        Self::with_config(agents, model, Config::default())
    }

    /// Like [`A2aServer::new`], with the bounds and limits of every run.
    pub fn with_config(
        agents: Vec<&'static dyn DynAgent>,
        model: Arc<dyn ChatModel>,
        config: Config,
    ) -> Self {
        let mut key = [0u8; 32];
        let key = getrandom::fill(&mut key).ok().map(|()| key);
        Self {
            inner: Arc::new(Inner {
                name: "agent-contracts".into(),
                description: None,
                skills: agents.into_iter().map(Skill::Agent).collect(),
                model,
                config,
                http: HttpSettings::default(),
                public_url: None,
                tasks: Arc::new(Tasks::new(crate::tasks::DEFAULT_MAX_TASKS)),
                store: Arc::new(agent_contracts_runtime::store::MemoryStore::bounded(
                    crate::tasks::DEFAULT_MAX_TASKS,
                )),
                key,
                calls: Arc::new(tokio::sync::Semaphore::new(DEFAULT_MAX_CALLS)),
            }),
        }
    }

    /// Serves `workflow` as a skill too (its id the workflow's name, its input the first
    /// agent's contract). A run that asks the user a question sets its task to
    /// `TASK_STATE_INPUT_REQUIRED`; the next message on the task answers it. Refused only if
    /// the answer's contract does not compile.
    pub fn workflow(
        mut self,
        workflow: Workflow,
        description: &str,
    ) -> Result<Self, ContractError> {
        let served = ServedWorkflow::new(workflow, description)?;
        Arc::make_mut(&mut self.inner)
            .skills
            .push(Skill::Workflow(Arc::new(served)));
        Ok(self)
    }

    /// The card's name and description (by default `agent-contracts`, and a list of the
    /// skills).
    pub fn with_identity(mut self, name: &str, description: &str) -> Self {
        let inner = Arc::make_mut(&mut self.inner);
        inner.name = name.to_owned();
        inner.description = Some(description.to_owned());
        self
    }

    /// Keeps paused workflow runs in `store` instead of the server's memory, with task IDs
    /// signed under `key`: a server on the same store and key answers a task another one
    /// paused (or that it paused before a restart). Keep the key secret. A key too regular to
    /// be secret (fewer than 8 distinct bytes) is refused.
    pub fn with_store(
        mut self,
        store: Arc<dyn CheckpointStore>,
        key: [u8; 32],
    ) -> Result<Self, WeakKey> {
        let mut seen = [false; 256];
        for &byte in &key {
            seen[usize::from(byte)] = true;
        }
        let distinct = seen.iter().filter(|&&s| s).count();
        if distinct < 8 {
            return Err(WeakKey { distinct });
        }
        let inner = Arc::make_mut(&mut self.inner);
        inner.store = store;
        inner.key = Some(key);
        Ok(self)
    }

    /// Who may reach the HTTP endpoint (by default: loopback hosts, no browser origin, no
    /// token), checked before a request's body is read.
    pub fn with_http(mut self, settings: HttpSettings) -> Self {
        Arc::make_mut(&mut self.inner).http = settings;
        self
    }

    /// The URL the card gives for the JSON-RPC endpoint (such as
    /// `https://agents.example.com/`); by default `http://<the Host the card was asked for>/`.
    pub fn with_public_url(mut self, url: &str) -> Self {
        Arc::make_mut(&mut self.inner).public_url = Some(url.to_owned());
        self
    }

    /// How many tasks run at once (default [`DEFAULT_MAX_CALLS`]), over every client: one
    /// more message gets a JSON-RPC error saying the server is busy, at once.
    pub fn with_max_calls(mut self, max: usize) -> Self {
        Arc::make_mut(&mut self.inner).calls = Arc::new(tokio::sync::Semaphore::new(max.max(1)));
        self
    }

    /// How many tasks the server remembers (default
    /// [`DEFAULT_MAX_TASKS`](crate::DEFAULT_MAX_TASKS)); past it the oldest is forgotten, an
    /// ended one first.
    pub fn with_max_tasks(mut self, max: usize) -> Self {
        Arc::make_mut(&mut self.inner).tasks = Arc::new(Tasks::new(max));
        self
    }

    /// The agent card, its JSON-RPC interface at `url`.
    pub fn card(&self, url: &str) -> Value {
        let inner = &self.inner;
        let description = inner.description.clone().unwrap_or_else(|| {
            let ids: Vec<&str> = inner.skills.iter().map(Skill::id).collect();
            format!(
                "Agents with JSON Schema contracts: {}. Each skill's input and output schemas are in the {} extension.",
                ids.join(", "),
                crate::wire::CONTRACTS_EXTENSION
            )
        });
        crate::skills::card(&inner.name, &description, url, &inner.skills)
    }

    /// The card at [`CARD_PATH`] and the JSON-RPC binding at [`RPC_PATH`], as an axum router
    /// to serve or nest, behind the [`HttpSettings`] checks (Host, Origin, bearer token).
    pub fn http_router(self) -> axum::Router {
        let http = Arc::new(self.inner.http.clone());
        axum::Router::new()
            .route(CARD_PATH, axum::routing::get(card_route))
            .route(RPC_PATH, axum::routing::post(rpc_route))
            .with_state(self)
            .layer(axum::middleware::from_fn_with_state(
                http,
                crate::guard::guard,
            ))
    }

    /// Serves HTTP on `addr` until the process ends (see [`A2aServer::serve_http_on`]).
    pub async fn serve_http(self, addr: SocketAddr) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener).await
    }

    /// Serves HTTP/1.1 on a bound listener (port 0 lets the OS pick), within the
    /// [`HttpSettings`]: a connection must send a request's headers within the header timeout
    /// (it is closed otherwise), and past the connection bound a new connection is closed as
    /// soon as it is accepted. Requests may also name the bound address itself as their host
    /// (unless it is `0.0.0.0` or `[::]`).
    pub async fn serve_http_on(mut self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let addr = listener.local_addr()?;
        if !addr.ip().is_unspecified() {
            let inner = Arc::make_mut(&mut self.inner);
            let host = match addr {
                SocketAddr::V4(v4) => v4.ip().to_string(),
                SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
            };
            inner.http = inner.http.clone().allowed_host(host);
        }
        let settings = self.inner.http.clone();
        let router = self.http_router();
        let connections = Arc::new(tokio::sync::Semaphore::new(settings.max_connections));
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
            let Ok(permit) = connections.clone().try_acquire_owned() else {
                tracing::warn!(
                    max = settings.max_connections,
                    "closed a connection past the bound"
                );
                drop(stream);
                continue;
            };
            let router = router.clone();
            let header_timeout = settings.header_timeout;
            tokio::spawn(async move {
                let _permit = permit;
                let service = hyper::service::service_fn(move |request: axum::http::Request<_>| {
                    tower::ServiceExt::oneshot(router.clone(), request.map(Body::new))
                });
                let served = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
                if let Err(error) = served {
                    tracing::debug!(%error, "a connection ended with an error");
                }
            });
        }
    }

    fn max_message_bytes(&self) -> usize {
        self.inner
            .config
            .limits
            .max_bytes
            .saturating_add(MAX_ENVELOPE_BYTES)
    }

    fn skill(&self, id: Option<&str>) -> Result<Skill, RpcError> {
        let skills = &self.inner.skills;
        let found = match id {
            Some(id) => skills.iter().find(|s| s.id() == id),
            None if skills.len() == 1 => skills.first(),
            None => None,
        };
        found.cloned().ok_or_else(|| {
            let ids: Vec<&str> = skills.iter().map(Skill::id).collect();
            let named = match id {
                Some(id) => format!(
                    "unknown skill `{}`",
                    agent_contracts_runtime::__private::truncate(id, 100)
                ),
                None => "the message names no skill (`metadata.skill`)".into(),
            };
            RpcError::new(
                code::INVALID_PARAMS,
                format!("{named}; the skills are: {}", ids.join(", ")),
            )
        })
    }

    /// One JSON-RPC request, answered.
    async fn dispatch(&self, client: Client, id: &Value, method: &str, params: Value) -> Value {
        let answered = match method {
            "SendMessage" => match self.start(client, &params, false).await {
                Ok(started) => {
                    if started.running && !started.return_immediately {
                        started.task.settled().await;
                    }
                    Ok(json!({"task": started.task.to_json()}))
                }
                Err(error) => Err(error),
            },
            "GetTask" => self
                .get_task(client, &params)
                .await
                .map(|task| task.to_json()),
            "CancelTask" => self.cancel_task(client, &params).await,
            "ListTasks"
            | "SubscribeToTask"
            | "GetExtendedAgentCard"
            | "CreateTaskPushNotificationConfig"
            | "GetTaskPushNotificationConfig"
            | "ListTaskPushNotificationConfigs"
            | "DeleteTaskPushNotificationConfig" => Err(RpcError::new(
                code::UNSUPPORTED,
                format!("`{method}` is not supported by this server"),
            )),
            other => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!(
                    "unknown method `{}`",
                    agent_contracts_runtime::__private::truncate(other, 100)
                ),
            )),
        };
        match answered {
            Ok(result) => crate::wire::result(id, result),
            Err(error) => error.response(id),
        }
    }

    /// `SendMessage` and `SendStreamingMessage`: a new task, or the answer to a paused one.
    async fn start(
        &self,
        client: Client,
        params: &Value,
        streaming: bool,
    ) -> Result<Started, RpcError> {
        let incoming = crate::wire::read_send(params)
            .map_err(|message| RpcError::new(code::INVALID_PARAMS, message))?;
        if let Some(task_id) = incoming.task_id.clone() {
            return self.answer(client, &task_id, incoming, streaming).await;
        }
        let skill = self.skill(incoming.skill.as_deref())?;
        let kwargs = incoming
            .kwargs()
            .map_err(|message| RpcError::new(code::INVALID_PARAMS, message))?;
        let permit = self.permit()?;
        let context_id = incoming.context_id.clone().unwrap_or_else(|| new_id("ctx"));
        let (task_id, run_id) = match &skill {
            Skill::Agent(_) => (new_id("task"), None),
            Skill::Workflow(_) => {
                let key = self.key()?;
                let run_id = new_id("run");
                (seal_task_id(&key, client, &run_id), Some(run_id))
            }
        };
        let task = Arc::new(Task::new(
            task_id,
            context_id,
            client,
            skill.id().to_owned(),
        ));
        task.remember(incoming.message.clone());
        self.inner.tasks.insert(task.clone());
        let events = streaming.then(|| task.subscribe());
        task.set_status(TaskState::Working, vec![]);
        let server = self.clone();
        let running = task.clone();
        tokio::spawn(async move {
            let _permit = permit;
            match (skill, run_id) {
                (Skill::Agent(agent), _) => {
                    server
                        .run_agent(agent, &running, &kwargs, streaming, None)
                        .await
                }
                (Skill::Workflow(served), Some(run_id)) => {
                    server
                        .run_workflow(&served, &running, Start::New { run_id, kwargs })
                        .await
                }
                (Skill::Workflow(_), None) => {}
            }
            ended_without_outcome(&running);
        });
        Ok(Started {
            task,
            events,
            running: true,
            return_immediately: incoming.return_immediately,
        })
    }

    fn permit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, RpcError> {
        self.inner.calls.clone().try_acquire_owned().map_err(|_| {
            tracing::warn!(
                "refused a message: as many tasks as the server runs at once are running"
            );
            RpcError::new(
                code::INTERNAL,
                "the server is running as many tasks as it runs at once; try again shortly",
            )
        })
    }

    fn key(&self) -> Result<[u8; 32], RpcError> {
        self.inner.key.ok_or_else(|| {
            RpcError::new(
                code::INTERNAL,
                "the server has no key to sign workflow task IDs with (the OS gave no randomness)",
            )
        })
    }

    /// The task `id` of `client`: one this server keeps, or a workflow run another server on
    /// the same store and key paused, taken up here.
    async fn find(&self, client: Client, id: &str) -> Result<Arc<Task>, RpcError> {
        if let Some(task) = self.inner.tasks.get(id, client)
            && !self.answered_elsewhere(&task).await
        {
            return Ok(task);
        }
        let not_found = || {
            RpcError::new(
                code::TASK_NOT_FOUND,
                format!(
                    "unknown task `{}`: not issued by this server to this client, or forgotten",
                    agent_contracts_runtime::__private::truncate(id, 100)
                ),
            )
        };
        let key = self.inner.key.ok_or_else(not_found)?;
        let run_id = open_task_id(&key, client, id).ok_or_else(not_found)?;
        let record = self
            .inner
            .store
            .load(&run_id)
            .await
            .map_err(|_| not_found())?;
        let served = self
            .inner
            .skills
            .iter()
            .find(|skill| matches!(skill, Skill::Workflow(_)) && skill.id() == record.workflow)
            .ok_or_else(not_found)?;
        let task = Arc::new(Task::new(
            id.to_owned(),
            new_id("ctx"),
            client,
            served.id().to_owned(),
        ));
        let state = match record.status {
            RunStatus::Paused => {
                *task.paused.lock().unwrap_or_else(|e| e.into_inner()) = Some(PausedRun {
                    run_id: record.run_id.clone(),
                    sequence: record.sequence,
                });
                TaskState::InputRequired
            }
            RunStatus::Finished => TaskState::Completed,
            RunStatus::Failed => TaskState::Failed,
            _ => TaskState::Working,
        };
        let question = serde_json::from_str::<Value>(&record.state)
            .ok()
            .and_then(|state| state.pointer("/pending/prompt").cloned())
            .and_then(|prompt| prompt.as_str().map(str::to_owned));
        let parts = match (&question, state) {
            (Some(question), TaskState::InputRequired) => vec![text_part(question)],
            _ => vec![],
        };
        // A run that ended shows its output, as the instance that ran it showed it.
        if state == TaskState::Completed
            && let Skill::Workflow(served) = served
            && let Ok(run) = served.workflow.parse_state(&record.state)
        {
            let output = run
                .conversation
                .iter()
                .rev()
                .find(|m| m.role == agent_contracts_runtime::model::Role::Assistant)
                .map(|m| m.content.clone())
                .unwrap_or_default();
            task.add_artifact(
                "output",
                vec![data_part(json!({
                    "output": output,
                    "outputs": run.upstream.to_context_map(),
                }))],
                json!({"run_id": run.run_id}),
            );
        }
        task.set_status(state, parts);
        // A run still going on elsewhere is read again at the next request, until it pauses
        // or ends: kept here, it would stay working.
        if state != TaskState::Working {
            self.inner.tasks.insert(task.clone());
        }
        Ok(task)
    }

    /// Whether a task this server paused was answered through another server on the same
    /// store since: its run went on from the pause, so the task kept here is stale and is
    /// read again from the store.
    async fn answered_elsewhere(&self, task: &Task) -> bool {
        if task.state() != TaskState::InputRequired {
            return false;
        }
        let paused = task
            .paused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(paused) = paused else {
            return false;
        };
        match self.inner.store.load(&paused.run_id).await {
            Ok(record) => record.sequence != paused.sequence,
            Err(_) => false,
        }
    }

    /// A message on a task: the answer to its workflow's question, checked against the
    /// answer's contract, then the run resumed.
    async fn answer(
        &self,
        client: Client,
        task_id: &str,
        incoming: Incoming,
        streaming: bool,
    ) -> Result<Started, RpcError> {
        let task = self.find(client, task_id).await?;
        let state = task.state();
        if state != TaskState::InputRequired {
            return Err(RpcError::new(
                code::UNSUPPORTED,
                format!(
                    "the task is {}: only a task in TASK_STATE_INPUT_REQUIRED takes another message; send a new message without `taskId` to start a new task",
                    state.as_str()
                ),
            ));
        }
        let served = match self.skill(Some(&task.skill))? {
            Skill::Workflow(served) => served,
            Skill::Agent(agent) => return self.answer_agent(agent, task, incoming, streaming),
        };
        let answer = match (&incoming.data, &incoming.text) {
            (Some(data), _) => data.clone(),
            (None, Some(text)) => json!({"answer": text}),
            (None, None) => json!({}),
        };
        task.remember(incoming.message.clone());
        let events = streaming.then(|| task.subscribe());
        if let Err(retry) = served.resume.check(&answer, &self.inner.config.limits) {
            let mut parts = vec![text_part(&format!(
                "The answer breaks its contract, and the question still stands: {retry}"
            ))];
            parts.push(data_part(retry.to_json()));
            task.set_status(TaskState::InputRequired, parts);
            return Ok(Started {
                task,
                events,
                running: false,
                return_immediately: incoming.return_immediately,
            });
        }
        let answer = answer["answer"].as_str().unwrap_or_default().to_owned();
        let paused = task
            .paused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| RpcError::new(code::INTERNAL, "the paused run was not saved"))?;
        let permit = self.permit()?;
        let (server, running) = (self.clone(), task.clone());
        let work = async move {
            server
                .run_workflow(&served, &running, Start::Answer { paused, answer })
                .await;
        };
        Ok(go_on(
            task,
            events,
            permit,
            incoming.return_immediately,
            work,
        ))
    }

    async fn get_task(&self, client: Client, params: &Value) -> Result<Arc<Task>, RpcError> {
        let Some(id) = params.get("id").and_then(Value::as_str) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "`params.id` must be a task ID",
            ));
        };
        self.find(client, id).await
    }

    async fn cancel_task(&self, client: Client, params: &Value) -> Result<Value, RpcError> {
        let task = self.get_task(client, params).await?;
        let state = task.state();
        if state.is_terminal() {
            return Err(RpcError::new(
                code::TASK_NOT_CANCELABLE,
                format!("the task is {}, so it cannot be canceled", state.as_str()),
            ));
        }
        task.cancel.cancel();
        task.set_status(
            TaskState::Canceled,
            vec![text_part("canceled by the caller")],
        );
        Ok(task.to_json())
    }

    /// A message on an agent's task that waits on a person: the answer to the field it
    /// asked (the data part's value under the field's name, or the text), merged into the
    /// call's kwargs, and the call run again: checked against the whole input contract, so
    /// a refused answer asks again.
    fn answer_agent(
        &self,
        agent: &'static dyn DynAgent,
        task: Arc<Task>,
        incoming: Incoming,
        streaming: bool,
    ) -> Result<Started, RpcError> {
        let asking = task
            .asking
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some((kwargs, field)) = asking else {
            return Err(RpcError::new(
                code::UNSUPPORTED,
                "an agent's task asks for no input",
            ));
        };
        let ask = UserAsk::field_of(agent, &field)
            .ok_or_else(|| RpcError::new(code::INTERNAL, "the field asked is gone"))?;
        let value = match (&incoming.data, &incoming.text) {
            (Some(data), _) => match data.get(&field).or_else(|| data.get("answer")) {
                Some(Value::String(text)) => ask.value_of_text(text),
                Some(value) => value.clone(),
                None => data.clone(),
            },
            (None, Some(text)) => ask.value_of_text(text),
            (None, None) => Value::String(String::new()),
        };
        let merged = ask.with_answer(&kwargs, value).ok_or_else(|| {
            RpcError::new(code::INTERNAL, "the paused call's kwargs are not an object")
        })?;
        task.remember(incoming.message.clone());
        let events = streaming.then(|| task.subscribe());
        let permit = self.permit()?;
        *task.asking.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let (server, running) = (self.clone(), task.clone());
        let work = async move {
            server
                .run_agent(agent, &running, &merged, streaming, Some(&field))
                .await;
        };
        Ok(go_on(
            task,
            events,
            permit,
            incoming.return_immediately,
            work,
        ))
    }

    /// An agent's task: the contract path on the arguments, the agent's run, the checked
    /// output as a data part artifact. A call that omitted fields only a person can give
    /// (or whose answer to `asked`, the field a person just answered, was refused) waits in
    /// `input-required` with the question, before the model is asked anything.
    async fn run_agent(
        &self,
        agent: &'static dyn DynAgent,
        task: &Arc<Task>,
        kwargs: &str,
        streaming: bool,
        asked: Option<&str>,
    ) {
        let model: Arc<dyn ChatModel> =
            Arc::new(Reporting::new(self.inner.model.clone(), task.clone()));
        // A streaming caller hears the answer as it is written.
        let delivery = match (&self.inner.config.delivery, streaming) {
            (Delivery::Whole, true) => Delivery::streamed(),
            (delivery, _) => delivery.clone(),
        };
        let config = self
            .inner
            .config
            .clone()
            .with_cancel(task.cancel.clone())
            .with_delivery(delivery);
        let runtime = Runtime::with_config(model, config);
        let options = CallOptions::default().with_caller("a2a_client");
        match runtime.call_sub_agent(agent, kwargs, options).await {
            Ok(output) => {
                task.add_artifact(
                    "output",
                    vec![data_part(output.output.value().clone())],
                    json!({"context_id": output.context_id.to_string()}),
                );
                task.set_status(TaskState::Completed, vec![]);
            }
            Err(Error::Retry {
                error,
                context_id,
                agent: name,
            }) => {
                let ask = UserAsk::of(agent, &error)
                    .or_else(|| asked.and_then(|field| UserAsk::refused(agent, field, &error)));
                let Some(ask) = ask else {
                    let error = Error::Retry {
                        error,
                        context_id,
                        agent: name,
                    };
                    return failed(task, agent.name(), error);
                };
                *task.asking.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((kwargs.to_owned(), ask.field.name.clone()));
                task.set_status(
                    TaskState::InputRequired,
                    vec![
                        text_part(&ask.question),
                        data_part(json!({
                            "question": ask.question,
                            "field": ask.field.name,
                            "schema": ask.field.schema,
                        })),
                    ],
                );
            }
            Err(error) => failed(task, agent.name(), error),
        }
    }

    /// A workflow's task: a new run, or a paused one answered.
    async fn run_workflow(&self, served: &ServedWorkflow, task: &Arc<Task>, start: Start) {
        let workflow = &served.workflow;
        let runner = || {
            let model = Reporting::new(self.inner.model.clone(), task.clone());
            workflow.runner(model).with_store(self.inner.store.clone())
        };
        let run = async {
            match start {
                Start::New { run_id, kwargs } => {
                    let ids = ContextIdGenerator::new(run_id).map_err(Error::from)?;
                    let runner = runner().with_context_ids(Arc::new(ids));
                    runner.start_with_kwargs(&kwargs).await
                }
                Start::Answer { paused, answer } => runner().resume_paused(&paused, &answer).await,
            }
        };
        let result = tokio::select! {
            result = run => result,
            () = task.cancel.cancelled() => return,
        };
        match result {
            Ok(WorkflowOutcome::Finished { output, state }) => {
                task.add_artifact(
                    "output",
                    vec![data_part(json!({
                        "output": output,
                        "outputs": state.upstream.to_context_map(),
                    }))],
                    json!({"run_id": state.run_id}),
                );
                task.set_status(TaskState::Completed, vec![]);
            }
            Ok(WorkflowOutcome::NeedsInput {
                request,
                checkpoint,
                ..
            }) => {
                let Some(paused) = checkpoint else {
                    task.set_status(
                        TaskState::Failed,
                        vec![text_part(
                            "the paused run was not saved, so it cannot be resumed",
                        )],
                    );
                    return;
                };
                *task.paused.lock().unwrap_or_else(|e| e.into_inner()) = Some(paused);
                task.set_status(
                    TaskState::InputRequired,
                    vec![
                        text_part(&request.prompt),
                        data_part(json!({
                            "question": request.prompt,
                            "requesting_agent": request.requesting_agent,
                        })),
                    ],
                );
            }
            Err(error) => failed(task, workflow.name(), error),
        }
    }
}

/// A paused task answered: set working, and `work` run in the background holding `permit`;
/// the message that answered it gets the task.
fn go_on(
    task: Arc<Task>,
    events: Option<tokio::sync::broadcast::Receiver<Event>>,
    permit: tokio::sync::OwnedSemaphorePermit,
    return_immediately: bool,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) -> Started {
    task.set_status(TaskState::Working, vec![]);
    let running = task.clone();
    tokio::spawn(async move {
        let _permit = permit;
        work.await;
        ended_without_outcome(&running);
    });
    Started {
        task,
        events,
        running: true,
        return_immediately,
    }
}

/// How a workflow task's run begins.
enum Start {
    New { run_id: String, kwargs: String },
    Answer { paused: PausedRun, answer: String },
}

/// A run that ended in an error: a broken call is rejected with the retry error as a data
/// part (the caller's model can act on it), a cancellation is canceled, anything else failed.
fn failed(task: &Task, skill: &str, error: Error) {
    match error {
        Error::Retry {
            error, context_id, ..
        } => {
            let json = match &context_id {
                Some(id) => serde_json::to_value(error.with_context_id(id))
                    .unwrap_or_else(|_| error.to_json()),
                None => error.to_json(),
            };
            task.set_status(
                TaskState::Rejected,
                vec![
                    text_part(&format!(
                        "The call breaks `{skill}`'s input contract: {error}"
                    )),
                    data_part(json),
                ],
            );
        }
        Error::Cancelled { .. } => {
            task.set_status(TaskState::Canceled, vec![text_part("canceled")]);
        }
        Error::Store(store) => {
            let message = match store {
                StoreError::NotFound { .. } => {
                    "the paused run is no longer kept, so the question cannot be answered".into()
                }
                StoreError::Conflict { .. }
                | StoreError::AlreadyClaimed { .. }
                | StoreError::NotPaused { .. } => {
                    format!("this question was already answered: {store}")
                }
                other => format!("`{skill}` could not resume: {other}"),
            };
            task.set_status(TaskState::Failed, vec![text_part(&message)]);
        }
        other => {
            task.set_status(
                TaskState::Failed,
                vec![text_part(&format!("`{skill}` could not finish: {other}"))],
            );
        }
    }
}

/// A run that ended without setting its task's outcome (it panicked, or was canceled while
/// nobody set the state) leaves no caller waiting.
fn ended_without_outcome(task: &Task) {
    if !task.state().is_settled() {
        task.set_status(
            TaskState::Failed,
            vec![text_part("the run ended without an outcome")],
        );
    }
}

/// `GET /.well-known/agent-card.json`.
async fn card_route(State(server): State<A2aServer>, headers: HeaderMap) -> Response {
    let url = match &server.inner.public_url {
        Some(url) => url.clone(),
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}{RPC_PATH}")
        }
    };
    json_response(StatusCode::OK, &server.card(&url))
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// `POST /`: one JSON-RPC request, its body read within the bound and the body timeout.
async fn rpc_route(State(server): State<A2aServer>, request: Request) -> Response {
    let client = request
        .extensions()
        .get::<Client>()
        .copied()
        .unwrap_or(Client::Anyone);
    let max = server.max_message_bytes();
    let timeout = server.inner.http.body_timeout;
    let body = match tokio::time::timeout(timeout, axum::body::to_bytes(request.into_body(), max))
        .await
    {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => {
            let error = RpcError::new(
                code::INVALID_REQUEST,
                format!("the request is larger than {max} bytes, or its body could not be read"),
            );
            return json_response(StatusCode::PAYLOAD_TOO_LARGE, &error.response(&Value::Null));
        }
        Err(_) => {
            let error = RpcError::new(code::INVALID_REQUEST, "the request's body came too slowly");
            return json_response(StatusCode::REQUEST_TIMEOUT, &error.response(&Value::Null));
        }
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        let error = RpcError::new(code::PARSE, "the request is not JSON");
        return json_response(StatusCode::OK, &error.response(&Value::Null));
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let valid_id = matches!(id, Value::String(_) | Value::Number(_) | Value::Null);
    let method = request.get("method").and_then(Value::as_str);
    let (Some(method), true, Some("2.0")) = (
        method,
        valid_id,
        request.get("jsonrpc").and_then(Value::as_str),
    ) else {
        let error = RpcError::new(
            code::INVALID_REQUEST,
            "not a JSON-RPC 2.0 request: `jsonrpc: \"2.0\"`, a `method` and a string or number `id` are required",
        );
        let id = if valid_id { id } else { Value::Null };
        return json_response(StatusCode::OK, &error.response(&id));
    };
    let params = match request.get("params") {
        None => json!({}),
        Some(params @ Value::Object(_)) => params.clone(),
        Some(_) => {
            let error = RpcError::new(code::INVALID_PARAMS, "`params` must be an object");
            return json_response(StatusCode::OK, &error.response(&id));
        }
    };
    if method == "SendStreamingMessage" {
        return match server.start(client, &params, true).await {
            Ok(started) => stream_response(id, started),
            Err(error) => json_response(StatusCode::OK, &error.response(&id)),
        };
    }
    json_response(
        StatusCode::OK,
        &server.dispatch(client, &id, method, params).await,
    )
}

/// One server-sent event of a JSON-RPC response.
fn sse(id: &Value, result: Value) -> Bytes {
    Bytes::from(format!("data: {}\n\n", crate::wire::result(id, result)))
}

/// `SendStreamingMessage`'s answer: the task as it starts, then each status update and
/// artifact until the task settles.
fn stream_response(id: Value, started: Started) -> Response {
    let first = sse(&id, json!({"task": started.task.to_json()}));
    let done = !started.running;
    let state = (Some(first), started.events, done, id);
    let stream = futures_util::stream::unfold(state, |(first, events, done, id)| async move {
        if let Some(first) = first {
            return Some((
                Ok::<_, std::convert::Infallible>(first),
                (None, events, done, id),
            ));
        }
        let mut events = events.filter(|_| !done)?;
        loop {
            match events.recv().await {
                Ok(event) => {
                    let line = sse(&id, event.response);
                    return Some((Ok(line), (None, Some(events), event.settled, id)));
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "a streaming caller fell behind");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}
