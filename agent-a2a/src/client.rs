//! Remote A2A agents as tools: [`RemoteAgent::connect`] reads an agent's card, and
//! [`RemoteAgent::tools`] makes each of its skills an agent's [`Tool`], its contract the
//! schemas the card declares in the [`CONTRACTS_EXTENSION`](crate::CONTRACTS_EXTENSION)
//! (a skill without them takes `{"task": "..."}` and answers anything).
//!
//! A call is checked against the skill's input schema before it is sent: a broken call never
//! reaches the remote agent, and the model gets the retry error. The remote agent's answer is
//! untrusted: its body is bounded, and the output artifact's data part is checked against the
//! skill's output schema. A task the remote agent rejects or fails comes back as a tool result
//! the model can act on (its retry error, when it sent one as a data part). A task that asks
//! for input (`TASK_STATE_INPUT_REQUIRED`) pauses the calling run: the tool's
//! [`start`](Tool::start) ends with a [`ToolPause`] holding the question and the task, a
//! workflow step that called it pauses as for its own question (stored with the run), and the
//! person's answer goes to [`resume`](Tool::resume), which sends it on the same task; the
//! call's result is the task's outcome, or its next question.

use agent_contracts_runtime::contract::{ContractKind, ToolDefinition};
use agent_contracts_runtime::model::BoxFuture;
use agent_contracts_runtime::runtime::{ToolOutcome, ToolPause};
use agent_contracts_runtime::{Contract, Limits, Tool};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The largest agent card read, in bytes.
pub const MAX_CARD_BYTES: usize = 1024 * 1024;

/// The longest task or context ID kept from a remote agent's answer, in bytes.
const MAX_TASK_ID_BYTES: usize = 256;

/// The longest question of a remote task kept for a person, in bytes.
const MAX_QUESTION_BYTES: usize = 4096;

/// What could not be read of a remote agent.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The card could not be fetched.
    #[error("the A2A agent at {url} could not be reached: {reason}")]
    Unreachable {
        /// The agent's base URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The card is not one this client can use.
    #[error("the agent card at {url} cannot be used: {reason}")]
    Card {
        /// The agent's base URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// How a remote skill is called.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct ToolSettings {
    /// The bounds of the arguments and of the answer (the answer's body may be
    /// [`MAX_ENVELOPE_BYTES`](crate::MAX_ENVELOPE_BYTES) larger).
    pub limits: Limits,
    /// How long a call may take, end to end.
    pub timeout: Duration,
}

impl Default for ToolSettings {
    /// The default limits; 5 minutes a call.
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            timeout: Duration::from_secs(300),
        }
    }
}

/// A remote A2A agent: its card, and where its JSON-RPC binding is.
#[derive(Clone)]
pub struct RemoteAgent {
    base: String,
    rpc_url: String,
    card: Value,
    http: reqwest::Client,
    bearer: Option<String>,
}

impl std::fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("base", &self.base)
            .field("rpc_url", &self.rpc_url)
            .field("bearer", &self.bearer.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

/// Installs ring as the process's rustls crypto provider unless one is installed: reqwest's
/// rustls (without aws-lc-rs, which this workspace leaves out for its C build) needs one to
/// build any client.
fn install_crypto_provider() {
    #[cfg(feature = "rustls")]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one first: either way one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// An error and its sources, one after the other (reqwest's own text names only the URL).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Reads a response's body, refusing one past `max` bytes.
async fn bounded_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > max {
            return Err(format!("the response is larger than {max} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl RemoteAgent {
    /// Reads the card at `<base_url>/.well-known/agent-card.json` and finds its JSON-RPC
    /// interface.
    pub async fn connect(base_url: &str) -> Result<Self, ClientError> {
        Self::connect_with(base_url, None).await
    }

    /// Like [`RemoteAgent::connect`], sending `Authorization: Bearer <token>` with every
    /// request (the token is never shown).
    pub async fn connect_with(base_url: &str, bearer: Option<&str>) -> Result<Self, ClientError> {
        let base = base_url.trim_end_matches('/').to_owned();
        let unreachable = |reason: String| ClientError::Unreachable {
            url: base.clone(),
            reason,
        };
        let bad = |reason: String| ClientError::Card {
            url: base.clone(),
            reason,
        };
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| unreachable(e.to_string()))?;
        let mut request = http.get(format!("{base}{}", crate::CARD_PATH));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| unreachable(chain(&e)))?;
        if !response.status().is_success() {
            return Err(unreachable(format!(
                "the card answered {}",
                response.status()
            )));
        }
        let body = bounded_body(response, MAX_CARD_BYTES)
            .await
            .map_err(unreachable)?;
        let card: Value =
            serde_json::from_slice(&body).map_err(|e| bad(format!("not JSON: {e}")))?;
        let rpc_url = card["supportedInterfaces"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["protocolBinding"] == "JSONRPC")
            .and_then(|i| i["url"].as_str())
            .map(str::to_owned)
            .ok_or_else(|| bad("no JSONRPC interface in `supportedInterfaces`".into()))?;
        if !(rpc_url.starts_with("http://") || rpc_url.starts_with("https://")) {
            return Err(bad(format!(
                "the JSONRPC interface's URL `{rpc_url}` is not HTTP"
            )));
        }
        Ok(Self {
            base,
            rpc_url,
            card,
            http,
            bearer: bearer.map(str::to_owned),
        })
    }

    /// The card as read.
    pub fn card(&self) -> &Value {
        &self.card
    }

    /// Each skill as a tool named by its id, its contracts the card's. A skill whose declared
    /// schemas do not compile is refused, naming it.
    pub fn tools(&self, settings: ToolSettings) -> Result<Vec<Arc<dyn Tool>>, ClientError> {
        let agent = Arc::new(self.clone());
        let contracts = self.card["capabilities"]["extensions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["uri"] == crate::CONTRACTS_EXTENSION)
            .map(|e| e["params"]["skills"].clone())
            .unwrap_or(Value::Null);
        let skills = self.card["skills"].as_array().cloned().unwrap_or_default();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for skill in skills {
            let Some(id) = skill["id"].as_str() else {
                continue;
            };
            let bad = |reason: String| ClientError::Card {
                url: self.base.clone(),
                reason: format!("skill `{id}`: {reason}"),
            };
            let declared = &contracts[id];
            let input_schema = match &declared["input_schema"] {
                Value::Null => {
                    json!({"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]})
                }
                schema => schema.clone(),
            };
            let input = Contract::new(id, ContractKind::Input, input_schema.clone())
                .map_err(|e| bad(e.to_string()))?;
            // An agent-contracts server's skill takes its contract's fields beside `task` (and
            // the other reserved keys), as a parent model calls an agent: the tool's
            // parameters say so, and the call is checked against both.
            let ours = skill["tags"]
                .as_array()
                .is_some_and(|tags| tags.iter().any(|t| t == "agent-contracts"));
            let (parameters, envelope) = match ours {
                true => {
                    let parameters = ToolDefinition::for_contract(id, "", &input).parameters;
                    let envelope = Contract::new(id, ContractKind::Input, parameters.clone())
                        .map_err(|e| bad(e.to_string()))?;
                    (parameters, Some(envelope))
                }
                false => (input_schema, None),
            };
            let output = || match &declared["output_schema"] {
                Value::Null => Ok(None),
                schema => Contract::new(id, ContractKind::Output, schema.clone())
                    .map(Some)
                    .map_err(|e| bad(e.to_string())),
            };
            let description = skill["description"].as_str().unwrap_or_default();
            tools.push(Arc::new(RemoteSkill {
                skill: id.to_owned(),
                agent: agent.clone(),
                definition: ToolDefinition {
                    name: id.to_owned(),
                    description: format!(
                        "{description} (a remote A2A agent's skill; its arguments and answer are checked against its schemas)"
                    ),
                    parameters,
                },
                input,
                envelope,
                output: output()?,
                settings: settings.clone(),
            }));
        }
        Ok(tools)
    }

    /// One JSON-RPC request; its `result`, or why there is none.
    async fn rpc(
        &self,
        method: &str,
        params: Value,
        settings: &ToolSettings,
    ) -> Result<Value, String> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.rpc_url)
            .header("content-type", "application/json")
            .header("A2A-Version", crate::PROTOCOL_VERSION)
            .timeout(settings.timeout)
            .body(body.to_string());
        if let Some(token) = &self.bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| chain(&e))?;
        let status = response.status();
        let max = settings
            .limits
            .max_bytes
            .saturating_add(crate::MAX_ENVELOPE_BYTES);
        let body = bounded_body(response, max).await?;
        let answer: Value = serde_json::from_slice(&body)
            .map_err(|_| format!("the agent answered {status} with a body that is not JSON"))?;
        if let Some(error) = answer.get("error") {
            let message = error["message"].as_str().unwrap_or("no message");
            return Err(format!(
                "the agent refused the call ({}): {}",
                error["code"],
                agent_contracts_runtime::__private::truncate(message, 2000)
            ));
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| "the agent's answer has neither `result` nor `error`".into())
    }
}

/// One skill of a remote agent, as an agent's [`Tool`]: a call of the skill, and the answers
/// to the questions its task asks.
struct RemoteSkill {
    agent: Arc<RemoteAgent>,
    skill: String,
    definition: ToolDefinition,
    /// The skill's input contract, checked on the arguments without the reserved keys.
    input: Contract,
    /// The whole call's shape (`task` and the contract's fields), for an agent-contracts
    /// server's skill.
    envelope: Option<Contract>,
    output: Option<Contract>,
    settings: ToolSettings,
}

/// The data part of `parts`, if any.
fn data_of(parts: &Value) -> Option<&Value> {
    parts.as_array()?.iter().find_map(|part| part.get("data"))
}

/// The text parts of `parts`, joined.
fn text_of(parts: &Value) -> String {
    parts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

impl RemoteSkill {
    fn failed(&self, error: String) -> Value {
        json!({"success": false, "tool": self.definition.name, "error": error})
    }

    async fn call_checked(&self, arguments: &str) -> ToolOutcome {
        let limits = &self.settings.limits;
        if arguments.len() > limits.max_bytes {
            return ToolOutcome::done(self.failed(format!(
                "the arguments are {} bytes; at most {} are taken",
                arguments.len(),
                limits.max_bytes
            )));
        }
        let arguments: Value = match serde_json::from_str(arguments) {
            Ok(value) => value,
            Err(e) => {
                return ToolOutcome::done(self.failed(format!("the arguments are not JSON: {e}")));
            }
        };
        // A broken call never reaches the remote agent: the model gets the retry error.
        let own_fields = match (&self.envelope, &arguments) {
            (Some(_), Value::Object(map)) => Value::Object(
                map.iter()
                    .filter(|(key, _)| {
                        !agent_contracts_runtime::contract::RESERVED_KEYS.contains(&key.as_str())
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            _ => arguments.clone(),
        };
        let checked = agent_contracts_runtime::__private::check_shape(&arguments, limits, 0)
            .and_then(|()| match &self.envelope {
                Some(envelope) => envelope.check(&arguments, limits),
                None => Ok(()),
            })
            .and_then(|()| self.input.check(&own_fields, limits));
        if let Err(retry) = checked {
            return ToolOutcome::done(retry.to_json());
        }
        let message = json!({
            "messageId": format!("msg-{}", uuid::Uuid::now_v7()),
            "role": "ROLE_USER",
            "parts": [{"data": arguments, "mediaType": "application/json"}],
            "metadata": {"skill": self.skill},
        });
        self.send(message).await
    }

    /// A person's answer to the question a task of this skill asked, sent on that task. The
    /// pause is read back from a stored run: its task must be a string of this skill's.
    async fn answer_checked(&self, pause: &ToolPause, answer: &str) -> ToolOutcome {
        let limits = &self.settings.limits;
        let state = &pause.state;
        let task_id = state["task_id"]
            .as_str()
            .filter(|id| !id.is_empty() && id.len() <= MAX_TASK_ID_BYTES);
        let Some(task_id) = task_id.filter(|_| state["skill"] == self.skill.as_str()) else {
            return ToolOutcome::done(self.failed(format!(
                "the paused call names no task of `{}` to answer",
                self.skill
            )));
        };
        if answer.trim().is_empty() || answer.len() > limits.max_bytes {
            // The question stands: an empty or oversized answer is not sent.
            return ToolOutcome::Paused(pause.clone());
        }
        let mut message = json!({
            "messageId": format!("msg-{}", uuid::Uuid::now_v7()),
            "role": "ROLE_USER",
            "taskId": task_id,
            "parts": [{"text": answer}],
            "metadata": {"skill": self.skill},
        });
        if let Some(context) = state["context_id"]
            .as_str()
            .filter(|c| c.len() <= MAX_TASK_ID_BYTES)
        {
            message["contextId"] = json!(context);
        }
        self.send(message).await
    }

    /// Sends `message` and reads the task's outcome.
    async fn send(&self, message: Value) -> ToolOutcome {
        let result = match self
            .agent
            .rpc("SendMessage", json!({"message": message}), &self.settings)
            .await
        {
            Ok(result) => result,
            Err(error) => {
                return ToolOutcome::done(self.failed(format!(
                    "the A2A agent at {} could not be called: {error}",
                    self.agent.base
                )));
            }
        };
        // A direct message answer: its data, or its text.
        if let Some(message) = result.get("message") {
            return ToolOutcome::done(match data_of(&message["parts"]) {
                Some(data) => self.checked_output(data.clone()),
                None => self.checked_output(Value::String(text_of(&message["parts"]))),
            });
        }
        let task = &result["task"];
        let status = &task["status"];
        let state = status["state"].as_str().unwrap_or_default();
        let done = match crate::TaskState::parse(state) {
            Some(crate::TaskState::Completed) => {
                let output = task["artifacts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find_map(|artifact| data_of(&artifact["parts"]).cloned());
                match output {
                    Some(data) => self.checked_output(data),
                    None => {
                        let text = task["artifacts"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|artifact| text_of(&artifact["parts"]))
                            .collect::<Vec<_>>()
                            .join("\n");
                        self.checked_output(Value::String(text))
                    }
                }
            }
            // The remote agent asks its user: the calling run pauses with the question, and
            // the answer goes to this task.
            Some(crate::TaskState::InputRequired) => {
                let question = text_of(&status["message"]["parts"]);
                let question = match question.trim().is_empty() {
                    true => format!("`{}` asks for more input", self.skill),
                    false => {
                        agent_contracts_runtime::__private::truncate(&question, MAX_QUESTION_BYTES)
                            .into_owned()
                    }
                };
                let bounded = |value: &Value| {
                    value
                        .as_str()
                        .filter(|s| s.len() <= MAX_TASK_ID_BYTES)
                        .map(str::to_owned)
                };
                let Some(task_id) = bounded(&task["id"]) else {
                    return ToolOutcome::done(self.failed(
                        "the remote agent asks for input on a task without a usable ID".into(),
                    ));
                };
                return ToolOutcome::Paused(ToolPause::new(
                    question,
                    json!({
                        "skill": self.skill,
                        "task_id": task_id,
                        "context_id": bounded(&task["contextId"]),
                    }),
                ));
            }
            Some(
                crate::TaskState::Rejected | crate::TaskState::Failed | crate::TaskState::Canceled,
            ) => match data_of(&status["message"]["parts"]) {
                // A structured error (an agent's retry error, say) reaches the model whole.
                Some(data) => data.clone(),
                None => self.failed(format!(
                    "the remote agent's task ended {state}: {}",
                    agent_contracts_runtime::__private::truncate(
                        &text_of(&status["message"]["parts"]),
                        2000
                    )
                )),
            },
            _ => self.failed(format!(
                "the remote agent answered with a task in state `{}`, not an outcome",
                agent_contracts_runtime::__private::truncate(state, 64)
            )),
        };
        ToolOutcome::done(done)
    }

    /// The remote answer, checked: the same bounds as the arguments, then the output schema.
    fn checked_output(&self, data: Value) -> Value {
        let Some(contract) = &self.output else {
            return data;
        };
        let limits = &self.settings.limits;
        match agent_contracts_runtime::__private::check_shape(&data, limits, 0)
            .and_then(|()| contract.check(&data, limits))
        {
            Ok(()) => data,
            Err(retry) => json!({
                "success": false,
                "tool": self.definition.name,
                "error": "the remote agent's answer breaks the skill's output schema",
                "violations": retry.to_json(),
            }),
        }
    }
}

impl Tool for RemoteSkill {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    /// Run by the remote agent, agent-side of the model's client: an extension.
    fn tool_type(&self) -> &'static str {
        "extension"
    }

    /// The call's result; a question the remote task asks cannot pause a plain call, so it
    /// comes back as a failed result with the question (a run's calls go through
    /// [`Tool::start`], which pauses).
    fn call<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, Value> {
        Box::pin(async move {
            match self.call_checked(arguments).await {
                ToolOutcome::Paused(pause) => json!({
                    "success": false,
                    "tool": self.definition.name,
                    "status": "input_required",
                    "question": pause.question,
                    "error": "the remote agent asks a person a question, and this call cannot pause for the answer",
                }),
                ToolOutcome::Done(output) => output.value,
                _ => self.failed("the call ended in a way this client does not know".into()),
            }
        })
    }

    /// The call: its result, or a pause with the question the remote task asks.
    fn start<'a>(&'a self, arguments: &'a str) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(self.call_checked(arguments))
    }

    /// A person's answer, sent on the task that asked: its result, or the next question.
    fn resume<'a>(&'a self, pause: &'a ToolPause, answer: &'a str) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(self.answer_checked(pause, answer))
    }
}
