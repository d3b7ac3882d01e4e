//! A runtime run kept in a store as it happens: its record (listed under its first agent's
//! name, running, then finished or failed) and its transcript events, appended as they are
//! recorded, bounded, with secrets taken out before anything is written.
//!
//! ```
//! use agent_contracts::recorder::{RecordLimits, RunRecorder};
//! use agent_contracts::store::{CheckpointStore, MemoryStore, RunStatus};
//! use agent_contracts::{Config, Message, Runtime, ScriptedModel};
//! use std::sync::Arc;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let store: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());
//! let recorder = RunRecorder::start(store.clone(), "main_agent", RecordLimits::default()).await?;
//! let config = Config::default().with_transcript_sink(recorder.clone());
//! let model = ScriptedModel::default().script("main_agent", [Message::assistant("done")]);
//! let runtime = Runtime::with_config(model, config);
//! let outcome = runtime.run_loop("main_agent", "You plan.", "Plan it", &[]).await;
//! let record = recorder.finish(runtime.transcript(), &Default::default(), outcome.as_ref().map(|_| ()).map_err(|e| e.to_string())).await?;
//! assert_eq!((record.workflow.as_str(), record.status), ("main_agent", RunStatus::Finished));
//! let events = store.events(&record.run_id, 0, 100).await?;
//! assert!(events.iter().any(|e| e.event.contains("\"done\"")));
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```

use crate::cost::Prices;
use crate::store::{CheckpointStore, RunRecord, RunStatus, StoreError, StoredEvent, now_ms};
use crate::transcript::{Event, Transcript, TranscriptSink};
use regex::Regex;
use serde_json::json;
use std::borrow::Cow;
use std::sync::{Arc, LazyLock, Mutex};
use tokio::sync::mpsc;

/// How much of a run's transcript a [`RunRecorder`] writes: past either bound, further events
/// are dropped, counted, and the drop is said in the run's record (its state's `dropped`)
/// and by a last event of kind `dropped`.
///
/// ```
/// let limits = agent_contracts::recorder::RecordLimits::default().with_max_events(100);
/// assert_eq!(limits.max_events, 100);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordLimits {
    /// Most events written per run (default 10 000).
    pub max_events: u64,
    /// Most bytes of event JSON written per run (default 16 MiB).
    pub max_bytes: u64,
}

impl Default for RecordLimits {
    fn default() -> Self {
        Self {
            max_events: 10_000,
            max_bytes: 16 << 20,
        }
    }
}

impl RecordLimits {
    /// These limits with [`max_events`](Self::max_events) set.
    pub fn with_max_events(mut self, max_events: u64) -> Self {
        self.max_events = max_events;
        self
    }

    /// These limits with [`max_bytes`](Self::max_bytes) set.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }
}

/// Takes secrets out of text before it is written: every value it was given
/// ([`with_secret`](Self::with_secret), such as the API keys a process read), and what looks
/// like one whatever it is: a bearer token (`Bearer ...`), an OpenAI or Anthropic key
/// (`sk-...`), and the value of a key or header named like a secret (`api_key`, `x-api-key`,
/// `authorization`, `password`, `secret`, `token`). Each becomes `***`.
///
/// ```
/// use agent_contracts::recorder::Redactor;
/// let redactor = Redactor::default().with_secret("hunter2hunter2");
/// let text = r#"{"h": "Authorization: Bearer abc.def-123456", "k": "sk-ant-0123456789abcdefXYZ", "p": "hunter2hunter2"}"#;
/// let clean = redactor.redact(text);
/// assert!(!clean.contains("abc.def") && !clean.contains("0123456789abcdef") && !clean.contains("hunter2"));
/// assert!(serde_json::from_str::<serde_json::Value>(&clean).is_ok());
/// assert_eq!(redactor.redact("basic knowledge of the bearer of news"), "basic knowledge of the bearer of news");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

/// What looks like a secret, compiled once: an OpenAI or Anthropic key, and the value of a
/// key or header named like a secret.
static PATTERNS: LazyLock<[(Regex, &'static str); 2]> = LazyLock::new(|| {
    let compile = |pattern: &str| Regex::new(pattern).expect("a fixed pattern compiles");
    [
        (compile(r"\bsk-[A-Za-z0-9_-]{12,}"), "***"),
        (
            compile(
                r#"(?i)((?:api[_-]?key|x-api-key|authorization|password|secret|access[_-]?token|refresh[_-]?token)\\?"?\s*[:=]\s*\\?"?)[^"\\\s,}&]{6,}"#,
            ),
            "${1}***",
        ),
    ]
});

/// A bearer or basic credential (`Bearer <token>`), compiled once; taken out when the token has
/// a digit or is 20 characters or more, so prose (`basic knowledge`) is kept.
static CREDENTIAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{6,})")
        .expect("a fixed pattern compiles")
});

impl Redactor {
    /// This redactor, also taking out `secret` wherever it appears (ignored when shorter than
    /// 4 bytes: it would take out ordinary words).
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        let secret = secret.into();
        if secret.len() >= 4 && !self.secrets.contains(&secret) {
            self.secrets.push(secret);
        }
        self
    }

    /// This redactor, also taking out the value of each environment variable of `names`
    /// that is set (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, ...).
    pub fn with_env(self, names: &[&str]) -> Self {
        names
            .iter()
            .filter_map(|name| std::env::var(name).ok())
            .fold(self, Self::with_secret)
    }

    /// `text` with every secret replaced by `***`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), "***"));
            }
        }
        let credential = CREDENTIAL.replace_all(&out, |c: &regex::Captures<'_>| {
            let token = &c[3];
            match token.bytes().any(|b| b.is_ascii_digit()) || token.len() >= 20 {
                true => format!("{}{}***", &c[1], &c[2]),
                false => c[0].to_owned(),
            }
        });
        if let Cow::Owned(changed) = credential {
            out = Cow::Owned(changed);
        }
        for (pattern, with) in PATTERNS.iter() {
            if let Cow::Owned(changed) = pattern.replace_all(&out, *with) {
                out = Cow::Owned(changed);
            }
        }
        out
    }
}

/// What the recorder counted: written and dropped.
#[derive(Debug, Default)]
struct Tally {
    seq: u64,
    bytes: u64,
    dropped_events: u64,
    dropped_bytes: u64,
    sender: Option<mpsc::UnboundedSender<StoredEvent>>,
}

/// Keeps a runtime run in a store as it happens: set it as the run's
/// [`TranscriptSink`] (`Config::with_transcript_sink`), and [`finish`](Self::finish) it with
/// the run's outcome. Its events are handed to a task that appends them to the store in
/// batches ([`CheckpointStore::append_events`]), so recording never waits on the store.
pub struct RunRecorder {
    store: Arc<dyn CheckpointStore>,
    run_id: String,
    agent: String,
    limits: RecordLimits,
    redactor: Redactor,
    tally: Mutex<Tally>,
    writer: Mutex<Option<tokio::task::JoinHandle<Result<(), StoreError>>>>,
}

impl std::fmt::Debug for RunRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRecorder")
            .field("run_id", &self.run_id)
            .field("agent", &self.agent)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl RunRecorder {
    /// Saves a new run of `agent` (its first agent: `main_agent` for the main job), running,
    /// and starts the task that appends its events. Its secrets are taken out by
    /// [`Redactor::default`]; [`start_with`](Self::start_with) takes another.
    pub async fn start(
        store: Arc<dyn CheckpointStore>,
        agent: &str,
        limits: RecordLimits,
    ) -> Result<Arc<Self>, StoreError> {
        Self::start_with(store, agent, limits, Redactor::default()).await
    }

    /// [`start`](Self::start) with `redactor`.
    pub async fn start_with(
        store: Arc<dyn CheckpointStore>,
        agent: &str,
        limits: RecordLimits,
        redactor: Redactor,
    ) -> Result<Arc<Self>, StoreError> {
        let run_id = uuid::Uuid::now_v7().to_string();
        let record = RunRecord::new(&run_id, agent, RunStatus::Running, state(agent, None));
        store.save(&record).await?;
        let (sender, receiver) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write(store.clone(), run_id.clone(), receiver));
        Ok(Arc::new(Self {
            store,
            run_id,
            agent: agent.to_owned(),
            limits,
            redactor,
            tally: Mutex::new(Tally {
                sender: Some(sender),
                ..Tally::default()
            }),
            writer: Mutex::new(Some(writer)),
        }))
    }

    /// The run's ID in the store.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Writes the events still on their way, then saves the run's record: finished for
    /// `Ok`, failed with the reason for `Err`, its state holding the run's agent, events
    /// written and dropped, tokens and cost (priced by `prices`). Returns the saved record.
    /// An error appending the events is returned after the record is saved.
    pub async fn finish(
        &self,
        transcript: &Transcript,
        prices: &Prices,
        outcome: Result<(), String>,
    ) -> Result<RunRecord, StoreError> {
        let dropped = {
            let mut tally = self.lock();
            let sender = tally.sender.take();
            if tally.dropped_events > 0
                && let Some(sender) = &sender
            {
                let event = json!({
                    "kind": "dropped",
                    "events": tally.dropped_events,
                    "bytes": tally.dropped_bytes,
                    "max_events": self.limits.max_events,
                    "max_bytes": self.limits.max_bytes,
                });
                tally.seq += 1;
                let _ = sender.send(StoredEvent::new(tally.seq, now_ms(), event.to_string()));
            }
            (tally.dropped_events, tally.dropped_bytes, tally.seq)
        };
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let written = match writer {
            Some(task) => task.await.unwrap_or_else(|e| {
                Err(StoreError::backend(format!(
                    "the event writer stopped: {e}"
                )))
            }),
            None => Ok(()),
        };
        let usage = transcript.usage();
        let summary = json!({
            "events": dropped.2,
            "dropped": {"events": dropped.0, "bytes": dropped.1},
            "usage": usage,
            // `+ 0.0`: an empty sum is -0.0.
            "cost": transcript.cost(prices) + 0.0,
        });
        let mut record = self.store.load(&self.run_id).await?;
        let (status, error) = match outcome {
            Ok(()) => (RunStatus::Finished, None),
            Err(reason) => (
                RunStatus::Failed,
                Some(self.redactor.redact(&reason).into_owned()),
            ),
        };
        record.status = status;
        record.error = error;
        record.state = state(&self.agent, Some(summary));
        record.sequence = self.store.save(&record).await?;
        written.map(|()| record)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TranscriptSink for RunRecorder {
    fn record(&self, event: &Event) {
        let text = event.to_json().to_string();
        let text = self.redactor.redact(&text).into_owned();
        let size = text.len() as u64;
        let mut tally = self.lock();
        if tally.sender.is_none() {
            return;
        }
        let full = tally.seq >= self.limits.max_events
            || tally.bytes.saturating_add(size) > self.limits.max_bytes
            || tally.dropped_events > 0;
        if full {
            tally.dropped_events += 1;
            tally.dropped_bytes = tally.dropped_bytes.saturating_add(size);
            return;
        }
        let seq = tally.seq + 1;
        if let Some(sender) = &tally.sender {
            // A closed channel (the writer failed) loses the event: `finish` says why.
            let _ = sender.send(StoredEvent::new(seq, now_ms(), text));
        }
        tally.seq = seq;
        tally.bytes = tally.bytes.saturating_add(size);
    }
}

/// A runtime run's state as stored: `{"runtime": {"agent": ..., ...summary}}`, which no
/// workflow's state parses as, so a workflow's worker or listing never mistakes it.
fn state(agent: &str, summary: Option<serde_json::Value>) -> String {
    let mut runtime = json!({ "agent": agent });
    if let (Some(serde_json::Value::Object(fields)), Some(object)) =
        (summary, runtime.as_object_mut())
    {
        object.extend(fields);
    }
    json!({ "runtime": runtime }).to_string()
}

/// Appends the events as they come, in batches of what has arrived; the first error ends it.
async fn write(
    store: Arc<dyn CheckpointStore>,
    run_id: String,
    mut receiver: mpsc::UnboundedReceiver<StoredEvent>,
) -> Result<(), StoreError> {
    const BATCH: usize = 64;
    let mut batch = Vec::with_capacity(BATCH);
    while receiver.recv_many(&mut batch, BATCH).await > 0 {
        store.append_events(&run_id, &batch).await?;
        batch.clear();
    }
    Ok(())
}

/// Appends `events` (a durable workflow run's, from its runner's transcript, after it paused or
/// ended) to the stored run `run_id` after the events it holds already, secrets taken out by
/// `redactor`, within `limits` counted over all of the run's events (past them, a `dropped`
/// event says how many were left out). Returns how many events were written. For a process
/// that drives a run in steps (start, then resume elsewhere): each appends its own part.
pub async fn append_transcript(
    store: &dyn CheckpointStore,
    run_id: &str,
    events: &[Event],
    limits: RecordLimits,
    redactor: &Redactor,
) -> Result<u64, StoreError> {
    let held = store
        .events(
            run_id,
            0,
            usize::try_from(limits.max_events).unwrap_or(usize::MAX),
        )
        .await?;
    let mut seq = held.last().map_or(0, |e| e.seq);
    let mut bytes: u64 = held.iter().map(|e| e.event.len() as u64).sum();
    let mut batch = Vec::new();
    let (mut dropped, mut dropped_bytes) = (0u64, 0u64);
    for event in events {
        let text = redactor.redact(&event.to_json().to_string()).into_owned();
        let size = text.len() as u64;
        if dropped > 0 || seq >= limits.max_events || bytes.saturating_add(size) > limits.max_bytes
        {
            dropped += 1;
            dropped_bytes = dropped_bytes.saturating_add(size);
            continue;
        }
        seq += 1;
        bytes = bytes.saturating_add(size);
        batch.push(StoredEvent::new(seq, now_ms(), text));
    }
    if dropped > 0 {
        let event = json!({
            "kind": "dropped",
            "events": dropped,
            "bytes": dropped_bytes,
            "max_events": limits.max_events,
            "max_bytes": limits.max_bytes,
        });
        batch.push(StoredEvent::new(seq + 1, now_ms(), event.to_string()));
    }
    store.append_events(run_id, &batch).await?;
    Ok(batch.len() as u64)
}
