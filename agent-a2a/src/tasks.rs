//! The tasks a server keeps: each task's state, output and history, who may see it, how to
//! stop it, and the events a streaming caller hears as it runs.

use crate::guard::Client;
use crate::wire::{TaskState, agent_message, text_part};
use agent_contracts_runtime::workflow::PausedRun;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio_util::sync::CancellationToken;

/// Tasks a server keeps by default ([`A2aServer::with_max_tasks`](crate::A2aServer::with_max_tasks)).
pub const DEFAULT_MAX_TASKS: usize = 1_000;

/// Events a streaming caller may fall behind by before it misses some.
const EVENT_BUFFER: usize = 256;

/// Most history messages a task keeps (its first and its last ones).
const MAX_HISTORY: usize = 32;

/// One event of a task as it runs: a `StreamResponse` object, and whether the task has
/// settled with it (the stream ends there).
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) response: Value,
    pub(crate) settled: bool,
}

/// What a task is, as `GetTask` shows it.
struct View {
    state: TaskState,
    message: Option<Value>,
    artifacts: Vec<Value>,
    history: Vec<Value>,
}

/// One task.
pub(crate) struct Task {
    pub(crate) id: String,
    pub(crate) context_id: String,
    pub(crate) client: Client,
    /// The skill: an agent's or a workflow's name.
    pub(crate) skill: String,
    pub(crate) cancel: CancellationToken,
    view: Mutex<View>,
    /// The state, for the callers that wait for the task to settle.
    state: tokio::sync::watch::Sender<TaskState>,
    events: tokio::sync::broadcast::Sender<Event>,
    /// Where a workflow's run paused (its question's checkpoint).
    pub(crate) paused: Mutex<Option<PausedRun>>,
    /// An agent's call waiting on a person for a field only they can give: the call's
    /// kwargs so far and the field asked.
    pub(crate) asking: Mutex<Option<(String, String)>>,
    /// Whether the partial answer artifact has started (its next chunk appends).
    partial_started: Mutex<bool>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Task {
    pub(crate) fn new(id: String, context_id: String, client: Client, skill: String) -> Self {
        Self {
            id,
            context_id,
            client,
            skill,
            cancel: CancellationToken::new(),
            view: Mutex::new(View {
                state: TaskState::Submitted,
                message: None,
                artifacts: Vec::new(),
                history: Vec::new(),
            }),
            state: tokio::sync::watch::Sender::new(TaskState::Submitted),
            events: tokio::sync::broadcast::Sender::new(EVENT_BUFFER),
            paused: Mutex::new(None),
            asking: Mutex::new(None),
            partial_started: Mutex::new(false),
        }
    }

    /// The task's state now.
    pub(crate) fn state(&self) -> TaskState {
        lock(&self.view).state
    }

    /// The task as `GetTask` and `SendMessage` answer it.
    pub(crate) fn to_json(&self) -> Value {
        let view = lock(&self.view);
        let mut status = json!({"state": view.state.as_str()});
        if let Some(message) = &view.message {
            status["message"] = message.clone();
        }
        json!({
            "id": self.id,
            "contextId": self.context_id,
            "status": status,
            "artifacts": view.artifacts,
            "history": view.history,
            "metadata": {"skill": self.skill},
        })
    }

    /// The events from now on, for a streaming caller.
    pub(crate) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Keeps `message` in the history (the first [`MAX_HISTORY`] / 2 and the last ones).
    pub(crate) fn remember(&self, message: Value) {
        let mut view = lock(&self.view);
        if view.history.len() >= MAX_HISTORY {
            view.history.remove(MAX_HISTORY / 2);
        }
        view.history.push(message);
    }

    /// Moves the task to `state`, with a message of the agent made of `parts` (none: no
    /// message). A task that ended stays as it ended: a run that finishes after its task was
    /// canceled changes nothing. Returns whether the state was set.
    pub(crate) fn set_status(&self, state: TaskState, parts: Vec<Value>) -> bool {
        let message = (!parts.is_empty()).then(|| agent_message(&self.id, &self.context_id, parts));
        let status = {
            let mut view = lock(&self.view);
            if view.state.is_terminal() {
                return false;
            }
            view.state = state;
            view.message = message.clone();
            if let Some(message) = &message
                && state.is_settled()
            {
                if view.history.len() >= MAX_HISTORY {
                    view.history.remove(MAX_HISTORY / 2);
                }
                view.history.push(message.clone());
            }
            let mut status = json!({"state": state.as_str()});
            if let Some(message) = message {
                status["message"] = message;
            }
            status
        };
        self.state.send_replace(state);
        let _ = self.events.send(Event {
            response: json!({"statusUpdate": {
                "taskId": self.id,
                "contextId": self.context_id,
                "status": status,
            }}),
            settled: state.is_settled(),
        });
        true
    }

    /// A progress note while the task works (a model call started): a `working` status
    /// update, kept as the task's status message.
    pub(crate) fn note(&self, text: &str) {
        if !self.state().is_settled() {
            self.set_status(TaskState::Working, vec![text_part(text)]);
        }
    }

    /// Adds the output artifact, before the status that ends the task.
    pub(crate) fn add_artifact(&self, name: &str, parts: Vec<Value>, metadata: Value) {
        let artifact = json!({
            "artifactId": crate::wire::new_id("artifact"),
            "name": name,
            "parts": parts,
            "metadata": metadata,
        });
        lock(&self.view).artifacts.push(artifact.clone());
        let _ = self.events.send(Event {
            response: json!({"artifactUpdate": {
                "taskId": self.id,
                "contextId": self.context_id,
                "artifact": artifact,
                "append": false,
                "lastChunk": true,
            }}),
            settled: false,
        });
    }

    /// More of an answer's text as it streams, to streaming callers only (the `partial`
    /// artifact, chunk by chunk; `GetTask` shows the checked output, not this).
    pub(crate) fn partial(&self, agent: &str, text: &str) {
        if self.events.receiver_count() == 0 {
            return;
        }
        let append = std::mem::replace(&mut *lock(&self.partial_started), true);
        let _ = self.events.send(Event {
            response: json!({"artifactUpdate": {
                "taskId": self.id,
                "contextId": self.context_id,
                "artifact": {
                    "artifactId": format!("{}-partial", self.id),
                    "name": "partial",
                    "parts": [text_part(text)],
                    "metadata": {"agent": agent},
                },
                "append": append,
                "lastChunk": false,
            }}),
            settled: false,
        });
    }

    /// Waits until the task settles (ends, or waits for the caller).
    pub(crate) async fn settled(&self) {
        let mut state = self.state.subscribe();
        let _ = state.wait_for(|state| state.is_settled()).await;
    }
}

/// The tasks of a server, bounded: past the bound the oldest task is forgotten (a settled
/// one first), and its ID answers as not found.
pub(crate) struct Tasks {
    max: usize,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    by_id: HashMap<String, Arc<Task>>,
    order: VecDeque<String>,
}

impl Tasks {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            table: Mutex::default(),
        }
    }

    /// Keeps `task`, forgetting the oldest past the bound.
    pub(crate) fn insert(&self, task: Arc<Task>) {
        let mut table = lock(&self.table);
        if table.by_id.insert(task.id.clone(), task.clone()).is_none() {
            table.order.push_back(task.id.clone());
        }
        while table.by_id.len() > self.max {
            let settled = table.order.iter().position(|id| {
                table
                    .by_id
                    .get(id)
                    .is_none_or(|task| task.state().is_settled())
            });
            let Some(id) = table.order.remove(settled.unwrap_or(0)) else {
                break;
            };
            table.by_id.remove(&id);
        }
    }

    /// The task `id`, if `client` may see it: another client's task is not found, as one
    /// that does not exist.
    pub(crate) fn get(&self, id: &str, client: Client) -> Option<Arc<Task>> {
        lock(&self.table)
            .by_id
            .get(id)
            .filter(|task| task.client == client)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str) -> Arc<Task> {
        Arc::new(Task::new(id.into(), "c".into(), Client::Anyone, "s".into()))
    }

    #[test]
    fn an_ended_task_stays_ended_and_the_bound_forgets_settled_tasks_first() {
        let one = task("one");
        assert!(one.set_status(TaskState::Canceled, vec![]));
        assert!(!one.set_status(TaskState::Completed, vec![]));
        assert_eq!(one.to_json()["status"]["state"], "TASK_STATE_CANCELED");
        let tasks = Tasks::new(2);
        let running = task("running");
        running.set_status(TaskState::Working, vec![]);
        tasks.insert(running);
        tasks.insert(one);
        tasks.insert(task("three"));
        assert!(tasks.get("running", Client::Anyone).is_some());
        assert!(tasks.get("one", Client::Anyone).is_none());
        assert!(tasks.get("three", Client::Token(0)).is_none());
    }
}
