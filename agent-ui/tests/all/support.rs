//! A store with two runs (a recorded runtime run whose answer holds `<script>`, and a paused
//! event-planning run that asks about catering) and an inspector served over it.

use agent_contracts_runtime::recorder::{RecordLimits, RunRecorder};
use agent_contracts_runtime::store::{CheckpointStore, RunRecord, RunStatus, now_ms};
use agent_contracts_runtime::{Config, Message, Runtime, ScriptedModel};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Fixture {
    pub store: Arc<dyn CheckpointStore>,
    sqlite: agent_contracts_store::SqliteStore,
    dir: PathBuf,
    /// A finished runtime run of `main_agent`, with its transcript.
    pub recorded: String,
    /// A paused workflow run, asking `How many guests need catering?`.
    pub paused: String,
    /// A runtime run whose call of the plan generator was refused: no
    /// `collected_information`.
    pub refused: String,
}

/// The answer of the recorded run: markup a page must show as text.
pub const ANSWER: &str = r#"{"plan": "<script>alert(1)</script>", "steps": ["open", "fill"]}"#;

impl Fixture {
    pub async fn sqlite(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "agent-ui-{tag}-{}-{}",
            std::process::id(),
            now_ms()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite:{}", dir.join("runs.db").display());
        let sqlite = agent_contracts_store::SqliteStore::open(&url)
            .await
            .unwrap();
        let store: Arc<dyn CheckpointStore> = Arc::new(sqlite.clone());
        let refused = refused(store.clone()).await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let recorded = record(store.clone()).await;
        // Created after the recorded run: listed first.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let paused = paused(&*store).await;
        Self {
            store,
            sqlite,
            dir,
            recorded,
            paused,
            refused,
        }
    }

    pub async fn close(self) {
        self.sqlite.pool().close().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A runtime run of `main_agent` recorded to `store`; its ID.
pub async fn record(store: Arc<dyn CheckpointStore>) -> String {
    let recorder = RunRecorder::start(store, "main_agent", RecordLimits::default())
        .await
        .unwrap();
    let model = ScriptedModel::default().script("main_agent", [Message::assistant(ANSWER)]);
    let runtime = Runtime::with_config(
        model,
        Config::default().with_transcript_sink(recorder.clone()),
    );
    runtime
        .run_loop("main_agent", "You plan.", "Plan the login test", &[])
        .await
        .unwrap();
    recorder
        .finish(runtime.transcript(), &Default::default(), Ok(()))
        .await
        .unwrap();
    recorder.run_id().to_owned()
}

/// A runtime run of `main_agent` whose call of `run_plan_generator_agent` broke the input
/// contract (no `collected_information`), as the runtime records it: the call, the retry
/// error the contract wrote, and the rendered prompt of the call that passed.
pub async fn refused(store: Arc<dyn CheckpointStore>) -> String {
    use agent_contracts_runtime::Contract;
    use agent_contracts_runtime::contract::ContractKind;
    use agent_contracts_runtime::model::ToolCallRequest;
    use agent_contracts_runtime::transcript::{Event, Transcript, TranscriptSink as _};
    let recorder = RunRecorder::start(store, "main_agent", RecordLimits::default())
        .await
        .unwrap();
    let schema = json!({
        "type": "object",
        "properties": {
            "task": {"type": "string"},
            "target_url": {"type": "string"},
            "collected_information": {"type": "array"},
        },
        "required": ["task", "target_url", "collected_information"],
    });
    let contract = Contract::new("plan_generator_agent", ContractKind::Input, schema).unwrap();
    let arguments = json!({"task": "Write the plan", "target_url": "https://myapp.com/login"});
    let error = contract
        .check(&arguments, &agent_contracts_runtime::Limits::default())
        .unwrap_err()
        .to_json();
    let call = ToolCallRequest {
        id: "call-1".into(),
        name: "run_plan_generator_agent".into(),
        arguments: arguments.to_string(),
    };
    for event in [
        Event::Message {
            agent: "main_agent".into(),
            message: Message::assistant("").with_tool_calls(vec![call]),
        },
        Event::InputRetry {
            caller: "main_agent".into(),
            tool: "run_plan_generator_agent".into(),
            error,
        },
        Event::RenderedPrompt {
            agent: "plan_generator_agent".into(),
            prompt: "# Task\nWrite the plan\n\n- **target_url**: https://myapp.com/login".into(),
        },
    ] {
        recorder.record(&event);
    }
    recorder
        .finish(&Transcript::default(), &Default::default(), Ok(()))
        .await
        .unwrap();
    recorder.run_id().to_owned()
}

/// A paused run as the event-planning workflow saves one (its state's `pending` question).
pub async fn paused(store: &dyn CheckpointStore) -> String {
    let id = format!("paused-{}", now_ms());
    let state = json!({
        "workflow": "event_planning",
        "run_id": id,
        "conversation": [{"role": "user", "content": "Plan a team dinner"}],
        "pending": {
            "prompt": "How many guests need catering?",
            "requesting_agent": "catering_agent",
            "conversation": [],
        },
    });
    let record = RunRecord::new(&id, "event_planning", RunStatus::Paused, state.to_string());
    store.save(&record).await.unwrap();
    id
}

pub struct Server {
    pub base: String,
    client: reqwest::Client,
}

/// Serves an inspector of `store` on a port the OS picks.
pub async fn start(store: Arc<dyn CheckpointStore>, access: agent_contracts_ui::Access) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let inspector = agent_contracts_ui::Inspector::new(store)
        .with_access(access)
        .with_poll(std::time::Duration::from_millis(50));
    tokio::spawn(inspector.serve(listener));
    Server {
        base,
        client: http_client(),
    }
}

fn body(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// `GET path`: the status and the JSON body.
pub async fn get(server: &Server, path: &str) -> (u16, Value) {
    let response = server
        .client
        .get(format!("{}{path}", server.base))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, body(&response.text().await.unwrap()))
}

impl Server {
    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, value: &Value) -> (u16, Value) {
        self.post_text(path, &value.to_string()).await
    }

    /// `POST path` with `text` as the body.
    pub async fn post_text(&self, path: &str, text: &str) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json")
            .body(text.to_owned())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, body(&response.text().await.unwrap()))
    }
}

/// An HTTP client for the tests. In a workspace build reqwest carries rustls with no crypto
/// provider of its own (the workspace picks ring), so one is installed before any client is
/// built, as the MCP and A2A clients do.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
