//! Chat models: the `ChatModel` trait, the messages it exchanges, and `ScriptedModel`, a
//! deterministic model that replays a script so everything runs offline and in tests.

use crate::tool::ToolDefinition;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

/// A boxed future, so `ChatModel` stays object safe without an extra crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The user, or a parent agent speaking as one.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// A tool call the model asked for. `arguments` is the raw JSON text: untrusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The model's id for the call, echoed in the tool result.
    pub id: String,
    /// The tool's name (`run_<agent>`).
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// Tool calls an assistant message asks for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
    /// A tool result for the call `id`.
    pub fn tool(id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}

/// What a model is asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest {
    /// The agent asking (for routing scripted replies and for tracing).
    pub agent: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
}

/// A model that failed to answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// A scripted model ran out of replies for an agent.
    #[error("the script has no reply left for agent `{agent}` (request {request})")]
    ScriptExhausted {
        /// The agent that asked.
        agent: String,
        /// How many requests that agent had made, counting this one.
        request: usize,
    },
    /// Any other provider failure.
    #[error("model failed: {0}")]
    Other(String),
}

/// A chat model: messages and tool definitions in, an assistant message out.
///
/// Implement it to reach a provider; the runtime and workflows only ever call `complete`.
///
/// ```
/// use agent_core::model::{BoxFuture, ChatRequest, ModelError};
/// use agent_core::{ChatModel, Message};
///
/// /// Answers every request with the same JSON.
/// struct Constant(&'static str);
///
/// impl ChatModel for Constant {
///     fn complete<'a>(
///         &'a self,
///         _request: &'a ChatRequest,
///     ) -> BoxFuture<'a, Result<Message, ModelError>> {
///         Box::pin(async move { Ok(Message::assistant(self.0)) })
///     }
/// }
/// ```
pub trait ChatModel: Send + Sync {
    /// Answers one request.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>>;
}

/// A deterministic model: per agent, a queue of replies given in order. It records every
/// request it receives so tests can assert on prompts.
///
/// ```
/// use agent_core::model::{ChatRequest, tool_calls};
/// use agent_core::{ChatModel, Message, ScriptedModel};
///
/// let model = ScriptedModel::new()
///     .script("main", [tool_calls([("run_search_agent", r#"{"task": "Find it"}"#)])])
///     .script("search_agent", [Message::assistant(r#"{"found": true}"#)]);
/// let request = ChatRequest { agent: "search_agent".into(), messages: vec![], tools: vec![] };
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let reply = model.complete(&request).await.unwrap();
/// assert_eq!(reply.content, r#"{"found": true}"#);
/// // The script for `search_agent` is used up: the next request is an error, not a hang.
/// assert!(model.complete(&request).await.is_err());
/// assert_eq!(model.requests_of("search_agent").len(), 2);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    scripts: Mutex<BTreeMap<String, VecDeque<Message>>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends replies for `agent`.
    pub fn script(self, agent: &str, replies: impl IntoIterator<Item = Message>) -> Self {
        lock(&self.scripts)
            .entry(agent.to_owned())
            .or_default()
            .extend(replies);
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        lock(&self.requests).clone()
    }

    /// Requests made by one agent.
    pub fn requests_of(&self, agent: &str) -> Vec<ChatRequest> {
        lock(&self.requests)
            .iter()
            .filter(|r| r.agent == agent)
            .cloned()
            .collect()
    }
}

/// A reply that calls tools: `(name, arguments JSON text)` pairs, ids `call_<n>`.
pub fn tool_calls<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str)>) -> Message {
    let tool_calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCallRequest {
            id: format!("call_{}_{i}", name),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        })
        .collect();
    Message {
        tool_calls,
        ..Message::assistant("")
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it: the script and the
/// log stay readable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ChatModel for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        let reply = {
            let mut requests = lock(&self.requests);
            requests.push(request.clone());
            let count = requests.iter().filter(|r| r.agent == request.agent).count();
            lock(&self.scripts)
                .get_mut(&request.agent)
                .and_then(VecDeque::pop_front)
                .ok_or_else(|| ModelError::ScriptExhausted {
                    agent: request.agent.clone(),
                    request: count,
                })
        };
        Box::pin(async move { reply })
    }
}
