//! Workflows as MCP tools. `run_<workflow>` starts a run with the first agent's inputs; a run
//! that pauses for the user answers with its question and an opaque resume handle, and its
//! state stays in the server's checkpoint store:
//!
//! - a client on protocol `2026-07-28` or later that declares elicitation gets the
//!   specification's `input_required` result: an `elicitation/create` input request for the
//!   answer, with the handle as `requestState`; its retry of the same call carries the answer;
//! - every client can answer with `resume_<workflow>` (`{handle, answer}`), whose result is the
//!   next question or the run's end;
//! - a workflow with approval steps pauses after each approved agent's output (the result's
//!   `approval`), and its resume tool also takes `{handle, decision: "approve" | "reject" |
//!   "edit", reason?, value?}`: a rejection needs a `reason`, an edit the edited output as
//!   `value`, checked against the agent's output contract (a broken edit is the retry error
//!   naming the field, and the run stays paused at the same handle).
//!
//! A handle is `<HMAC-SHA256>.<sequence>.<run id>` under the server's key
//! ([`seal_pause`](crate::seal::seal_pause)): it names the checkpoint the run paused at, so it cannot be
//! guessed or forged, and it answers that one question only.

use crate::guard::Client;
use agent_contracts_runtime::workflow::{Decision, PausedRun, WorkflowOutcome};
use agent_contracts_runtime::{ChatModel, Error, Workflow};
use agent_contracts_runtime::{Contract, Limits, contract::ContractError, contract::ContractKind};
use agent_contracts_runtime::{store::CheckpointStore, store::RunStatus, store::StoreError};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, JsonObject, MetaObject, Tool,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Runs the in-memory store keeps for one client (a bearer token, or every client of a server
/// without tokens); past it that client's least recently saved run that is not running is
/// forgotten, and its handle answers as expired. Another client's runs are not touched.
pub const DEFAULT_MAX_RUNS: usize = 1_000;

/// The longest resume handle accepted, in bytes.
pub const MAX_HANDLE_BYTES: usize = 512;

/// The longest answer accepted, in characters.
pub const MAX_ANSWER_CHARS: usize = 65_536;

/// The key of the input request that asks for the answer (and of its response).
const ANSWER_KEY: &str = "answer";

/// Where paused runs are kept, and the key their handles are signed with.
#[derive(Clone)]
pub(crate) struct Runs {
    pub(crate) kept: Kept,
    /// Paused runs kept in memory for one client.
    pub(crate) max_per_client: usize,
    /// `None` when no key could be drawn from the OS: workflow calls then say so.
    pub(crate) key: Option<[u8; 32]>,
    /// How long after its question a handle still answers it.
    pub(crate) handle_ttl: std::time::Duration,
}

/// The store of paused runs: the server's memory, one bounded store per client, or the
/// store the server was given, shared by every client (and every instance on it).
#[derive(Clone)]
pub(crate) enum Kept {
    Memory(Arc<Mutex<HashMap<Client, Arc<dyn CheckpointStore>>>>),
    Store(Arc<dyn CheckpointStore>),
}

/// How long a resume handle answers its question by default: a day.
pub const DEFAULT_HANDLE_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

impl Runs {
    /// Bounded memory stores and a random key: handles die with the process.
    pub(crate) fn in_memory() -> Self {
        let mut key = [0u8; 32];
        let key = getrandom::fill(&mut key).ok().map(|()| key);
        Self {
            kept: Kept::Memory(Arc::default()),
            max_per_client: DEFAULT_MAX_RUNS,
            key,
            handle_ttl: DEFAULT_HANDLE_TTL,
        }
    }

    /// The store `client`'s runs are kept in. In memory each client has its own, so no
    /// client's runs push out another's; the clients are the server's tokens, so their
    /// number is bounded.
    pub(crate) fn store_of(&self, client: Client) -> Arc<dyn CheckpointStore> {
        match &self.kept {
            Kept::Store(store) => store.clone(),
            Kept::Memory(stores) => stores
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(client)
                .or_insert_with(|| {
                    Arc::new(agent_contracts_runtime::store::MemoryStore::bounded(
                        self.max_per_client,
                    ))
                })
                .clone(),
        }
    }
}

/// Who made one call, and how they can be asked for input.
#[derive(Clone)]
pub(crate) struct Caller {
    /// The client whose paused runs the call may start or answer.
    pub(crate) client: Client,
    /// The client takes an `input_required` result with an elicitation request.
    pub(crate) input_required: bool,
    pub(crate) cancel: CancellationToken,
}

/// A workflow served as `run_<workflow>` and `resume_<workflow>`.
pub(crate) struct ServedWorkflow {
    workflow: Workflow,
    run_tool: Tool,
    resume_tool: Tool,
    resume_contract: Contract,
    /// The server's limits, for the resume arguments' check.
    limits: Limits,
}

impl ServedWorkflow {
    pub(crate) fn new(
        workflow: Workflow,
        description: &str,
        limits: Limits,
    ) -> Result<Self, ContractError> {
        let name = workflow.name().to_owned();
        let resume_name = format!("resume_{name}");
        let approves = workflow.approvals().next().is_some();
        let resume_schema = resume_schema(approves);
        let resume_contract = Contract::new(&resume_name, ContractKind::Input, resume_schema)?;
        let output = Arc::new(object(&output_schema(&resume_name, approves)));
        let parameters = match workflow.first_agent() {
            Some(agent) => agent.tool_definition().parameters,
            None => {
                json!({"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]})
            }
        };
        let run_tool = Tool::new(
            format!("run_{name}"),
            format!(
                "{description} A run may pause to ask the user a question: the result then has `status: \"input_required\"`, the `question` and a `handle`; answer it with `{resume_name}`."
            ),
            Arc::new(object(&parameters)),
        )
        .with_raw_output_schema(output.clone());
        let resume_description = if approves {
            format!(
                "Answers a paused `run_{name}`: pass its `handle` and, for a question, the user's `answer`; for an approval (the result's `approval` is the output to decide on), the `decision`: `approve`, `reject` with a `reason`, or `edit` with the edited output as `value`. The result is the run's next pause or its end."
            )
        } else {
            format!(
                "Answers the question a paused `run_{name}` asked: pass its `handle` and the user's `answer`. The result is the run's next question or its end."
            )
        };
        let resume_tool = Tool::new(
            resume_name,
            resume_description,
            Arc::new(object(resume_contract.schema())),
        )
        .with_raw_output_schema(output);
        Ok(Self {
            workflow,
            run_tool,
            resume_tool,
            resume_contract,
            limits,
        })
    }

    pub(crate) fn tools(&self) -> [&Tool; 2] {
        [&self.run_tool, &self.resume_tool]
    }

    /// `run_<workflow>`: a new run from the arguments' text, or, when the call carries the
    /// `requestState` of an `input_required` result, that run answered.
    pub(crate) async fn run(
        &self,
        model: Arc<dyn ChatModel>,
        runs: &Runs,
        round: Option<(String, Option<InputResponses>)>,
        arguments: String,
        caller: &Caller,
    ) -> CallToolResponse {
        if let Some((handle, responses)) = round {
            return match elicited_answer(responses.as_ref()) {
                Ok(answer) => {
                    let arguments = json!({"handle": handle, "answer": answer});
                    self.answer(model, runs, arguments, caller).await
                }
                Err(message) => error(message).into(),
            };
        }
        let Some(key) = runs.key else {
            return no_key().into();
        };
        let runner = self
            .workflow
            .runner(model)
            .with_store(runs.store_of(caller.client));
        let result = cancellable(
            runner.start_with_kwargs(&arguments),
            &caller.cancel,
            self.workflow.name(),
        )
        .await;
        self.outcome(result, &key, caller)
    }

    /// `resume_<workflow>`: the arguments checked against the resume contract, then the
    /// paused run the handle names answered.
    pub(crate) async fn resume(
        &self,
        model: Arc<dyn ChatModel>,
        runs: &Runs,
        arguments: Option<JsonObject>,
        caller: &Caller,
    ) -> CallToolResponse {
        let arguments = Value::Object(arguments.unwrap_or_default());
        self.answer(model, runs, arguments, caller).await
    }

    async fn answer(
        &self,
        model: Arc<dyn ChatModel>,
        runs: &Runs,
        arguments: Value,
        caller: &Caller,
    ) -> CallToolResponse {
        if let Err(retry) = self.resume_contract.check(&arguments, &self.limits) {
            return CallToolResult::structured_error(retry.to_json()).into();
        }
        let given = match given(&arguments) {
            Ok(given) => given,
            Err(message) => return error(message).into(),
        };
        let Some(handle) = arguments["handle"].as_str() else {
            return error("`handle` must be a string".into()).into();
        };
        let Some(key) = runs.key else {
            return no_key().into();
        };
        let Ok(paused) = crate::seal::open_pause(&self.workflow, handle, &key) else {
            return error(format!(
                "unknown resume handle: it was not issued by this server for `{}`, or it was changed",
                self.workflow.name()
            ))
            .into();
        };
        let store = runs.store_of(caller.client);
        if let Some(expired) = self.expired(&*store, runs.handle_ttl, &paused).await {
            return error(expired).into();
        }
        let runner = self.workflow.runner(model).with_store(store.clone());
        let result = match &given {
            Given::Answer(answer) => {
                let resumed = runner.resume_paused(&paused, answer);
                cancellable(resumed, &caller.cancel, self.workflow.name()).await
            }
            Given::Decision(decision) => {
                let decided = runner.decide_paused(&paused, decision);
                cancellable(decided, &caller.cancel, self.workflow.name()).await
            }
        };
        // Refused before anything changed: the run is paused at the same handle.
        if let Err(Error::EditRefused { error: retry, .. }) = &result {
            return CallToolResult::structured_error(retry.to_json()).into();
        }
        match &result {
            Err(Error::Store(store)) => return error(self.store_refusal(store, runs)).into(),
            Err(failure) => {
                if let Some(handle) = self.paused_again(&*store, &paused, &key).await {
                    return error(format!(
                        "`{}` could not go on: {failure}. Nothing is lost: the run is paused at the same question; answer it again with the handle `{handle}`",
                        self.workflow.name()
                    ))
                    .into();
                }
            }
            Ok(_) => {}
        }
        self.outcome(result, &key, caller)
    }

    /// Why the handle's question can no longer be answered, if its time is up: the run is
    /// still paused at it, asked longer ago than the server's handle lifetime. The run stays
    /// as it is (an operator can still see or recover it).
    async fn expired(
        &self,
        store: &dyn CheckpointStore,
        handle_ttl: std::time::Duration,
        paused: &PausedRun,
    ) -> Option<String> {
        let record = store.load(&paused.run_id).await.ok()?;
        if record.status != RunStatus::Paused || record.sequence != paused.sequence {
            return None;
        }
        let age = agent_contracts_runtime::store::now_ms().saturating_sub(record.updated_ms);
        let ttl = u64::try_from(handle_ttl.as_millis()).unwrap_or(u64::MAX);
        (age > ttl).then(|| {
            format!(
                "this resume handle expired: its question was asked {} ago, and handles of `{}` answer for {}",
                human(age),
                self.workflow.name(),
                human(ttl)
            )
        })
    }

    /// After a failed answer: a fresh handle when the run went back to the same question (a
    /// transient model failure does that), since the old handle names the checkpoint before.
    async fn paused_again(
        &self,
        store: &dyn CheckpointStore,
        paused: &PausedRun,
        key: &[u8; 32],
    ) -> Option<String> {
        let record = store.load(&paused.run_id).await.ok()?;
        if record.status != RunStatus::Paused || record.sequence == paused.sequence {
            return None;
        }
        let again = PausedRun {
            run_id: record.run_id,
            sequence: record.sequence,
        };
        Some(crate::seal::seal_pause(&self.workflow, &again, key))
    }

    /// The result of a run that started or went on: the end, the next question, or an error.
    fn outcome(
        &self,
        result: Result<WorkflowOutcome, Error>,
        key: &[u8; 32],
        caller: &Caller,
    ) -> CallToolResponse {
        match result {
            Ok(WorkflowOutcome::Finished { output, state }) => {
                let finished = RunResult::Finished {
                    output,
                    outputs: state.upstream.to_context_map(),
                };
                CallToolResult::structured(finished.to_json())
                    .with_meta(Some(run_meta(&state.run_id)))
                    .into()
            }
            Ok(WorkflowOutcome::NeedsInput {
                request,
                state,
                checkpoint,
            }) => {
                let Some(paused) = checkpoint else {
                    return error("the paused run was not saved, so it cannot be resumed".into())
                        .into();
                };
                let handle = crate::seal::seal_pause(&self.workflow, &paused, key);
                // An elicitation asks for one string: an approval's decision is answered
                // through the resume tool.
                if caller.input_required && request.approval.is_none() {
                    return input_required(&request.prompt, handle, &state.run_id);
                }
                let asked = RunResult::InputRequired {
                    question: request.prompt,
                    requesting_agent: request.requesting_agent,
                    handle,
                    resume_tool: self.resume_tool.name.to_string(),
                    approval: request.approval,
                };
                CallToolResult::structured(asked.to_json())
                    .with_meta(Some(run_meta(&state.run_id)))
                    .into()
            }
            Err(Error::Retry {
                error: retry,
                context_id,
                ..
            }) => {
                let json = match &context_id {
                    Some(id) => serde_json::to_value(retry.with_context_id(id)).unwrap_or_default(),
                    None => retry.to_json(),
                };
                CallToolResult::structured_error(json).into()
            }
            Err(Error::Rejected { agent, reason, .. }) => {
                let rejected = RunResult::Rejected { agent, reason };
                CallToolResult::structured(rejected.to_json()).into()
            }
            Err(other) => error(format!(
                "`{}` could not finish: {other}",
                self.workflow.name()
            ))
            .into(),
        }
    }

    /// Why a store refused to resume the run a valid handle names.
    fn store_refusal(&self, store: &StoreError, runs: &Runs) -> String {
        let answered = "this question was already answered";
        match store {
            StoreError::NotFound { .. } if matches!(runs.kept, Kept::Memory(_)) => format!(
                "unknown or expired resume handle: the run is no longer kept (the server keeps each client's last {} runs in memory, until it restarts; a handle answers only for the client it was given to)",
                runs.max_per_client
            ),
            StoreError::NotFound { .. } => {
                "unknown or expired resume handle: the run is no longer stored".into()
            }
            StoreError::Conflict { .. } => format!(
                "{answered}: the run has gone on and asks another question, with its own handle"
            ),
            StoreError::AlreadyClaimed { .. } => {
                format!("{answered}: the run is going on with that answer")
            }
            StoreError::NotPaused { status, .. } => {
                format!("{answered}: the run is {status}")
            }
            other => format!("`{}` could not resume: {other}", self.workflow.name()),
        }
    }
}

/// The answer an `input_required` round's elicitation response carries.
fn elicited_answer(responses: Option<&InputResponses>) -> Result<Value, String> {
    let Some(response) = responses.and_then(|r| r.get(ANSWER_KEY)) else {
        return Err(format!(
            "the call carries a `requestState` but no `inputResponses.{ANSWER_KEY}`: answer the elicitation request"
        ));
    };
    let result: ElicitResult = serde_json::from_value(response.clone())
        .map_err(|e| format!("`inputResponses.{ANSWER_KEY}` is not an elicitation result: {e}"))?;
    match result.action {
        ElicitationAction::Accept => Ok(result
            .content
            .as_ref()
            .and_then(|c| c.get(ANSWER_KEY))
            .cloned()
            .unwrap_or(Value::Null)),
        _ => Err(
            "the user did not answer: the run stays paused, and its handle (the `requestState`) still answers it".into(),
        ),
    }
}

/// The specification's `input_required` result: an elicitation request for the answer, the
/// handle as `requestState`.
fn input_required(question: &str, handle: String, run_id: &str) -> CallToolResponse {
    let schema = ElicitationSchema::builder()
        .required_string_property(ANSWER_KEY, |s| {
            s.description("Your answer")
                .max_length(MAX_ANSWER_CHARS as u32)
        })
        .build();
    let schema = match schema {
        Ok(schema) => schema,
        Err(e) => return error(format!("could not ask for the answer: {e}")).into(),
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_owned(),
        requested_schema: schema,
    };
    let mut requests = InputRequests::new();
    requests.insert(
        ANSWER_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    InputRequiredResult::new(Some(requests), Some(handle))
        .with_meta(run_meta(run_id))
        .into()
}

/// What a resume call gives the paused run.
enum Given {
    Answer(String),
    Decision(Decision),
}

/// The answer or the decision of resume arguments that passed the resume contract.
fn given(arguments: &Value) -> Result<Given, String> {
    if let Some(answer) = arguments["answer"].as_str() {
        return Ok(Given::Answer(answer.to_owned()));
    }
    match arguments["decision"].as_str() {
        Some("approve") => Ok(Given::Decision(Decision::Approve)),
        Some("reject") => match arguments["reason"].as_str() {
            Some(reason) => Ok(Given::Decision(Decision::reject(reason))),
            None => Err("a `reject` decision needs a `reason` string".into()),
        },
        Some("edit") => match arguments.get("value") {
            Some(value) => Decision::edit(value)
                .map(Given::Decision)
                .map_err(|e| format!("the edited `value` does not serialize: {e}")),
            None => Err("an `edit` decision needs the edited output as `value`".into()),
        },
        _ => Err("give the user's `answer`, or a `decision`: `approve`, `reject` or `edit`".into()),
    }
}

/// The resume tool's arguments: a handle and a string answer, nothing else; with approval
/// steps, a handle and either an answer or a decision (a rejection's reason, an edit's value).
fn resume_schema(approves: bool) -> Value {
    if approves {
        return json!({
            "type": "object",
            "properties": {
                "handle": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_HANDLE_BYTES,
                    "description": "The `handle` of the paused result to answer",
                },
                "answer": {
                    "type": "string",
                    "maxLength": MAX_ANSWER_CHARS,
                    "description": "The user's answer to a question",
                },
                "decision": {
                    "type": "string",
                    "enum": ["approve", "reject", "edit"],
                    "description": "At an approval: approve the output, reject it (with a `reason`), or edit it (the edited output as `value`)",
                },
                "reason": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_ANSWER_CHARS,
                    "description": "Why the output is rejected",
                },
                "value": {
                    "description": "The edited output, which must meet the agent's output contract",
                },
            },
            "required": ["handle"],
            "additionalProperties": false,
            "oneOf": [{"required": ["answer"]}, {"required": ["decision"]}],
            "allOf": [
                {
                    "if": {"properties": {"decision": {"const": "reject"}}, "required": ["decision"]},
                    "then": {"required": ["reason"]},
                },
                {
                    "if": {"properties": {"decision": {"const": "edit"}}, "required": ["decision"]},
                    "then": {"required": ["value"]},
                },
            ],
        });
    }
    json!({
        "type": "object",
        "properties": {
            "handle": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_HANDLE_BYTES,
                "description": "The `handle` of the `input_required` result to answer",
            },
            "answer": {
                "type": "string",
                "maxLength": MAX_ANSWER_CHARS,
                "description": "The user's answer to the question",
            },
        },
        "required": ["handle", "answer"],
        "additionalProperties": false,
    })
}

/// What both tools of a workflow return: the run's end or its next question. The tools'
/// `outputSchema` is derived from it, so the two cannot drift apart.
#[derive(Serialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(crate) enum RunResult {
    /// The run ended.
    Finished {
        /// The run's final answer: the synthesis, or the last agent's output.
        output: String,
        /// Each agent's checked output, as `<agent>_output`.
        outputs: serde_json::Map<String, Value>,
    },
    /// The run paused to ask the user a question.
    InputRequired {
        /// What the run asks the user.
        question: String,
        /// The agent that asks.
        requesting_agent: String,
        /// Pass it to the resume tool with the answer.
        handle: String,
        /// The tool that takes the answer.
        resume_tool: String,
        /// At an approval step: the output to approve, reject or edit (`question` says so).
        #[serde(skip_serializing_if = "Option::is_none")]
        approval: Option<Value>,
    },
    /// A person rejected an agent's output, and the run ended.
    Rejected {
        /// The agent whose output was rejected.
        agent: String,
        /// The person's reason.
        reason: String,
    },
}

impl RunResult {
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// [`RunResult`]'s schema, with the one resume tool a workflow's results name; without
/// approval steps, neither the rejected result nor an approval's output.
fn output_schema(resume_tool: &str, approves: bool) -> Value {
    let mut schema = schemars::schema_for!(RunResult).to_value();
    if !approves && let Some(branches) = schema["oneOf"].as_array_mut() {
        branches.retain(|b| b["properties"]["status"]["const"] != "rejected");
        for branch in branches {
            if let Some(properties) = branch["properties"].as_object_mut() {
                properties.remove("approval");
            }
        }
    }
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        // MCP takes an object schema only, said at its root.
        map.insert("type".into(), json!("object"));
    }
    if let Some(branches) = schema["oneOf"].as_array_mut() {
        for branch in branches {
            if branch["properties"]["status"]["const"] == "input_required" {
                branch["properties"]["resume_tool"]["const"] = json!(resume_tool);
            }
        }
    }
    schema
}

fn object(value: &Value) -> JsonObject {
    match value {
        Value::Object(map) => map.clone(),
        _ => JsonObject::new(),
    }
}

fn error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn no_key() -> CallToolResult {
    error("the server has no key to sign resume handles with: the OS random source failed; configure one with `AgentServer::with_store`".into())
}

/// `_meta` of a workflow result: the run's ID.
fn run_meta(run_id: &str) -> MetaObject {
    let mut meta = JsonObject::new();
    meta.insert("run_id".into(), run_id.into());
    MetaObject(meta)
}

/// The run, stopped where it stands when the client cancels the call.
async fn cancellable(
    run: impl std::future::Future<Output = Result<WorkflowOutcome, Error>>,
    cancel: &CancellationToken,
    workflow: &str,
) -> Result<WorkflowOutcome, Error> {
    tokio::select! {
        result = run => result,
        () = cancel.cancelled() => Err(Error::Cancelled { agent: workflow.to_owned() }),
    }
}

/// A span of milliseconds as a person reads it: `300 ms`, `90 s`, `12 min`, `24 h`, `3 d`.
fn human(millis: u64) -> String {
    if millis < 1000 {
        return format!("{millis} ms");
    }
    let secs = millis / 1000;
    match secs {
        0..120 => format!("{secs} s"),
        120..7200 => format!("{} min", secs / 60),
        7200..172_800 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_meet_the_schema_derived_from_their_type() {
        let schema = output_schema("resume_plan", false);
        let contract = Contract::new("run_plan", ContractKind::Output, schema).unwrap();
        let limits = Limits::default();
        let finished = RunResult::Finished {
            output: "The plan".into(),
            outputs: serde_json::Map::from_iter([("a_output".into(), json!({"x": 1}))]),
        };
        let asked = |resume_tool: &str| RunResult::InputRequired {
            question: "When?".into(),
            requesting_agent: "a".into(),
            handle: "h".into(),
            resume_tool: resume_tool.into(),
            approval: None,
        };
        assert_eq!(finished.to_json()["status"], "finished");
        assert!(contract.check(&finished.to_json(), &limits).is_ok());
        assert_eq!(asked("resume_plan").to_json()["status"], "input_required");
        assert!(
            contract
                .check(&asked("resume_plan").to_json(), &limits)
                .is_ok()
        );
        // The one resume tool of this workflow, and no other.
        assert!(
            contract
                .check(&asked("resume_other").to_json(), &limits)
                .is_err()
        );
        assert!(
            contract
                .check(&json!({"status": "paused"}), &limits)
                .is_err()
        );
    }

    #[test]
    fn spans_read_in_the_largest_whole_unit_up_to_two_of_it() {
        let cases = [
            (0, "0 ms"),
            (999, "999 ms"),
            (1_000, "1 s"),
            (119_999, "119 s"),
            (120_000, "2 min"),
            (7_199_999, "119 min"),
            (7_200_000, "2 h"),
            (86_400_000, "24 h"),
            (172_799_999, "47 h"),
            (172_800_000, "2 d"),
        ];
        for (millis, text) in cases {
            assert_eq!(human(millis), text, "{millis}");
        }
    }
}
