//! The inspector's HTTP server: one page (HTML, JS and CSS compiled in), and the JSON API it
//! reads: the runs, a run's detail, its answer, its live updates (server-sent events) and the
//! agents' contracts and templates.

use crate::access::Access;
use crate::runs;
use agent_contracts_runtime::Contract;
use agent_contracts_runtime::Limits;
use agent_contracts_runtime::contract::ContractKind;
use agent_contracts_runtime::store::{
    CheckpointStore, RunEvent, RunStatus, StoreError, Transition, check_claim, now_ms,
};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// The longest answer taken from the page, in characters: `resume_<workflow>`'s over MCP.
pub const MAX_ANSWER_CHARS: usize = 65_536;

/// Most runs in one page of the list.
pub const MAX_PAGE: usize = 200;

/// Most transcript events one detail or one live update carries.
pub const MAX_EVENTS: usize = 2_000;

/// How long one live stream lasts; the page opens another after it.
pub const MAX_LIVE: Duration = Duration::from_secs(30 * 60);

/// The page, its script and its style, compiled in: no CDN, no build step.
const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

/// The contract an answer from the page is checked against: `resume_<workflow>`'s over MCP,
/// the run named by the URL instead of a handle: one string `answer`, at most
/// [`MAX_ANSWER_CHARS`] characters, and not empty. Compiled once.
static RESUME: LazyLock<Contract> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_ANSWER_CHARS,
                "description": "The user's answer to the question",
            },
        },
        "required": ["answer"],
        "additionalProperties": false,
    });
    Contract::new("resume_run", ContractKind::Input, schema).expect("a fixed schema compiles")
});

/// One agent as the page shows it: its contracts and its prompt template.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentCard {
    /// The agent's name.
    pub name: String,
    /// Its input contract (JSON Schema).
    pub input: Value,
    /// Its output contract (JSON Schema).
    pub output: Value,
    /// Its user prompt template, as written.
    pub template: String,
}

impl AgentCard {
    /// An agent's card.
    pub fn new(name: impl Into<String>, input: Value, output: Value, template: String) -> Self {
        Self {
            name: name.into(),
            input,
            output,
            template,
        }
    }
}

/// The inspector over one store.
///
/// ```no_run
/// # async fn demo(store: std::sync::Arc<dyn agent_contracts_runtime::store::CheckpointStore>) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// eprintln!("inspector at http://{}/", listener.local_addr()?);
/// agent_contracts_ui::Inspector::new(store).serve(listener).await
/// # }
/// ```
#[derive(Clone)]
pub struct Inspector {
    store: Arc<dyn CheckpointStore>,
    access: Access,
    agents: Arc<Vec<AgentCard>>,
    poll: Duration,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("access", &self.access)
            .field("agents", &self.agents.len())
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

impl Inspector {
    /// An inspector of `store`'s runs, for loopback browsers without a token
    /// ([`Access::default`]), with no agents, polling an open run every 300 ms.
    pub fn new(store: Arc<dyn CheckpointStore>) -> Self {
        LazyLock::force(&RESUME);
        Self {
            store,
            access: Access::default(),
            agents: Arc::default(),
            poll: Duration::from_millis(300),
        }
    }

    /// This inspector with `access`.
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// This inspector, showing `agents`' contracts and templates.
    pub fn with_agents(mut self, agents: Vec<AgentCard>) -> Self {
        self.agents = Arc::new(agents);
        self
    }

    /// This inspector, looking for an open run's changes every `poll`.
    pub fn with_poll(mut self, poll: Duration) -> Self {
        self.poll = poll.max(Duration::from_millis(20));
        self
    }

    /// The inspector's routes, for a server bound at `bound` (its address is then a host
    /// it answers).
    pub fn router(self, bound: Option<SocketAddr>) -> Router {
        let mut access = self.access.clone();
        if let Some(addr) = bound {
            access = access.bound(addr);
        }
        let access = Arc::new(access);
        let shared = Arc::new(self);
        Router::new()
            .route(
                "/",
                get(|| async { page("text/html; charset=utf-8", INDEX_HTML) }),
            )
            .route(
                "/app.js",
                get(|| async { page("text/javascript; charset=utf-8", APP_JS) }),
            )
            .route(
                "/app.css",
                get(|| async { page("text/css; charset=utf-8", APP_CSS) }),
            )
            .route("/api/runs", get(list))
            .route("/api/runs/{id}", get(detail))
            .route("/api/runs/{id}/answer", post(answer))
            .route("/api/runs/{id}/live", get(live))
            .route("/api/agents", get(agents))
            .layer(DefaultBodyLimit::max(4 * MAX_ANSWER_CHARS + 1_024))
            .layer(axum::middleware::from_fn_with_state(access, guard))
            .with_state(shared)
    }

    /// Serves on `listener` until the process ends (or the listener fails).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let bound = listener.local_addr().ok();
        axum::serve(listener, self.router(bound)).await
    }
}

type Shared = State<Arc<Inspector>>;

/// Host and Origin on every request; the token on the API's.
async fn guard(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    match access.admit(request.headers(), api) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused.response(),
    }
}

/// A compiled-in asset; the page may not be framed, and runs no script but its own.
fn page(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// A JSON answer.
fn reply(status: StatusCode, value: Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        value.to_string(),
    )
        .into_response()
}

/// An error answer: `{"error": message}` and what else `extra` holds.
fn problem(status: StatusCode, message: impl Into<String>) -> Response {
    reply(status, json!({"error": message.into()}))
}

/// A store's error as an answer: a missing run is 404, the rest 502 (the store failed).
fn store_problem(error: &StoreError) -> Response {
    match error {
        StoreError::NotFound { .. } => problem(StatusCode::NOT_FOUND, error.to_string()),
        _ => problem(StatusCode::BAD_GATEWAY, error.to_string()),
    }
}

/// The query's `key`, percent-decoded.
fn query(uri: &Uri, key: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| decode(v))
    })
}

/// `%XX` and `+` decoded; a malformed escape is kept as written.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `GET /api/runs?status=WORD&before=CREATED_MS:ID&limit=N`: the runs, newest first, of one
/// status or all, after the cursor `before` (the last row of the previous page), at most
/// `limit` (50 unless given; at most [`MAX_PAGE`]). Answers `{runs, next, skipped}`: `next`
/// is the cursor of the following page (null on the last), `skipped` the rows that cannot be
/// read, each with its reason.
async fn list(State(ui): Shared, uri: Uri) -> Response {
    let status = match query(&uri, "status").filter(|s| !s.is_empty()) {
        Some(word) => match runs::parse_status(&word) {
            Some(status) => Some(status),
            None => {
                let shown: String = word.chars().take(40).collect();
                return problem(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "status `{shown}` is none of queued, running, paused, answered, completed, failed"
                    ),
                );
            }
        },
        None => None,
    };
    let limit = match query(&uri, "limit") {
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
            _ => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    format!("limit must be a whole number from 1 to {MAX_PAGE}"),
                );
            }
        },
        None => 50,
    };
    let before = match query(&uri, "before") {
        Some(cursor) => match cursor
            .split_once(':')
            .and_then(|(ms, id)| Some((ms.parse::<u64>().ok()?, id.to_owned())))
        {
            Some(cursor) => Some(cursor),
            None => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    "before must be CREATED_MS:RUN_ID, as a page's `next` gives it",
                );
            }
        },
        None => None,
    };
    let listed = match ui.store.list().await {
        Ok(listed) => listed,
        Err(e) => return store_problem(&e),
    };
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for run in listed {
        match run {
            Ok(run) => rows.push(run),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    rows.retain(|r| status.is_none_or(|s| r.status == s));
    rows.sort_by(|a, b| (b.created_ms, &b.run_id).cmp(&(a.created_ms, &a.run_id)));
    if let Some((ms, id)) = &before {
        rows.retain(|r| (r.created_ms, &r.run_id) < (*ms, id));
    }
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = match (more, rows.last()) {
        (true, Some(last)) => Value::String(format!("{}:{}", last.created_ms, last.run_id)),
        _ => Value::Null,
    };
    let runs: Vec<Value> = rows.iter().map(runs::summary).collect();
    reply(
        StatusCode::OK,
        json!({"runs": runs, "next": next, "skipped": skipped}),
    )
}

/// `GET /api/runs/{id}`: `{run, history, events, question, state, answer}`: the run's row,
/// its claims and takeovers (`history`, null with `history_error` when the store keeps none),
/// its first [`MAX_EVENTS`] transcript events (`events`, null with `events_error` likewise;
/// `events_more` when there are more), the question a paused run asks, and its stored state.
async fn detail(State(ui): Shared, Path(id): Path<String>) -> Response {
    let record = match ui.store.load(&id).await {
        Ok(record) => record,
        Err(e) => return store_problem(&e),
    };
    let (history, history_error) = match ui.store.history(&id).await {
        Ok(history) => (
            Value::Array(history.entries.iter().map(runs::history_entry).collect()),
            Value::Null,
        ),
        Err(e) => (Value::Null, Value::String(e.to_string())),
    };
    let (events, events_error, more) = match ui.store.events(&id, 0, MAX_EVENTS + 1).await {
        Ok(mut events) => {
            let more = events.len() > MAX_EVENTS;
            events.truncate(MAX_EVENTS);
            let events: Vec<Value> = events.iter().map(runs::event).collect();
            (Value::Array(events), Value::Null, more)
        }
        Err(e) => (Value::Null, Value::String(e.to_string()), false),
    };
    let question = (record.status == RunStatus::Paused)
        .then(|| runs::question(&record))
        .flatten();
    reply(
        StatusCode::OK,
        json!({
            "run": runs::summary(&record),
            "history": history,
            "history_error": history_error,
            "events": events,
            "events_error": events_error,
            "events_more": more,
            "question": question,
            "answer": record.answer,
            "state": runs::stored_state(&record),
        }),
    )
}

/// `POST /api/runs/{id}/answer` with `{"answer": TEXT}`: checked against the resume contract
/// (422 with the retry error, the field named), then recorded on the paused run as
/// `answered` for a worker to resume it (200 `{"status": "answered"}`). A run that is not
/// paused, or waits for a decision rather than an answer, is 409; one changed meanwhile, 409.
async fn answer(State(ui): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let arguments: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON ({e}): send {{\"answer\": \"...\"}}"),
            );
        }
    };
    if let Err(retry) = RESUME.check(&arguments, &Limits::default()) {
        return reply(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": "the answer breaks the resume contract", "retry": retry.to_json()}),
        );
    }
    let text = arguments["answer"].as_str().unwrap_or_default().to_owned();
    let record = match ui.store.load(&id).await {
        Ok(record) => record,
        Err(e) => return store_problem(&e),
    };
    if record.status != RunStatus::Paused {
        return problem(
            StatusCode::CONFLICT,
            format!(
                "the run is {}, not paused: it asks nothing",
                runs::status_word(record.status)
            ),
        );
    }
    match runs::question(&record) {
        None => {
            return problem(
                StatusCode::CONFLICT,
                "the paused run's state holds no question to answer",
            );
        }
        Some(q) if q["approval"] == true => {
            return problem(
                StatusCode::CONFLICT,
                "the run waits for a decision on an output (approve, reject or edit), not an answer",
            );
        }
        Some(_) => {}
    }
    if let Err(e) = check_claim(&record, record.sequence, now_ms()) {
        return problem(StatusCode::CONFLICT, e.to_string());
    }
    let mut answered = record;
    answered.status = RunStatus::Answered;
    answered.answer = Some(text);
    answered.owner = None;
    answered.lease_until_ms = 0;
    answered.transition = Some(Transition::new(RunEvent::Answered));
    match ui.store.save(&answered).await {
        Ok(sequence) => reply(
            StatusCode::OK,
            json!({"status": "answered", "sequence": sequence}),
        ),
        Err(e @ StoreError::Conflict { .. }) => problem(
            StatusCode::CONFLICT,
            format!("the run changed meanwhile ({e}): reload it"),
        ),
        Err(e) => store_problem(&e),
    }
}

/// `GET /api/agents`: each agent's `{name, input, output, template}`.
async fn agents(State(ui): Shared) -> Response {
    let cards: Vec<Value> = ui
        .agents
        .iter()
        .map(|a| json!({"name": a.name, "input": a.input, "output": a.output, "template": a.template}))
        .collect();
    reply(StatusCode::OK, Value::Array(cards))
}

/// Where a live stream stands.
struct Watch {
    ui: Arc<Inspector>,
    id: String,
    after: u64,
    sequence: Option<u64>,
    done: bool,
    /// When the stream ends, open run or not ([`MAX_LIVE`]).
    until: tokio::time::Instant,
}

/// `GET /api/runs/{id}/live?after=SEQ`: server-sent events of an open run: `event` for each
/// transcript event after `after` (`{seq, at_ms, event}`), `run` with the run's row whenever
/// its record changes (its first sends the row as it is), and `gone` when the run is no longer
/// stored. The stream ends after an ended run's last events, after [`MAX_LIVE`], or with the
/// connection.
async fn live(State(ui): Shared, Path(id): Path<String>, uri: Uri) -> Response {
    let after = query(&uri, "after")
        .and_then(|a| a.parse::<u64>().ok())
        .unwrap_or(0);
    let watch = Watch {
        ui,
        id,
        after,
        sequence: None,
        done: false,
        until: tokio::time::Instant::now() + MAX_LIVE,
    };
    let frames = futures_util::stream::unfold(watch, |mut watch| async move {
        if watch.done {
            return None;
        }
        if watch.sequence.is_some() {
            tokio::time::sleep(watch.ui.poll).await;
        }
        let frames = watch.step().await;
        Some((frames, watch))
    })
    .flat_map(futures_util::stream::iter)
    .map(Ok::<_, std::convert::Infallible>);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(frames),
    )
        .into_response()
}

impl Watch {
    /// The frames of one look at the run; a comment line when nothing changed, so a closed
    /// connection is noticed.
    async fn step(&mut self) -> Vec<String> {
        let mut frames = Vec::new();
        let record = match self.ui.store.load(&self.id).await {
            Ok(record) => record,
            Err(e) => {
                self.done = true;
                let frame = json!({"error": e.to_string()});
                return vec![frame_of("gone", &frame)];
            }
        };
        if let Ok(events) = self.ui.store.events(&self.id, self.after, MAX_EVENTS).await {
            for event in &events {
                frames.push(frame_of("event", &runs::event(event)));
                self.after = event.seq;
            }
        }
        if self.sequence != Some(record.sequence) {
            self.sequence = Some(record.sequence);
            frames.push(frame_of("run", &runs::summary(&record)));
        }
        if matches!(record.status, RunStatus::Finished | RunStatus::Failed)
            || tokio::time::Instant::now() >= self.until
        {
            // The ended run's last events were read after its record: nothing follows.
            self.done = true;
        }
        if frames.is_empty() {
            frames.push(": idle\n\n".to_owned());
        }
        frames
    }
}

/// One server-sent event: its name and its data on one line.
fn frame_of(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}
