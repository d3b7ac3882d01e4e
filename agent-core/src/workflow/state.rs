//! What a workflow run is between two steps: the state that serializes to JSON at a pause and
//! resumes, in this process or another, and the checks a state from outside must pass.

use super::definition::{CollectedItem, Workflow};
use crate::call::{HeldCall, PausedTurn};
// Declared in the definition; a state names its steps.
pub(crate) use super::definition::Step;
use crate::chat::Message;
use crate::error::Error;
use crate::ids::{ContextId, ContextIdGenerator};
use crate::upstream::UpstreamContext;
use agent_contracts_contract::__private::text_depth;
use agent_contracts_contract::RawObject;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap};

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    /// The current agent has not been routed to yet.
    Routing,
    /// The current agent was routed to and owes an answer.
    Answering,
    /// The run waits for a person's decision on the output of the agent that asked
    /// (`pending.requesting_agent`); the current step is the one after it.
    Approving,
}

/// The agent that asked the user something, and everything needed to answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HumanFeedbackRequest {
    /// What the agent asks.
    pub prompt: String,
    /// Who asks.
    pub requesting_agent: String,
    /// The conversation so far.
    pub conversation: Vec<Message>,
    /// At an approval step: the output of `requesting_agent` a person approves, rejects or
    /// edits (answer with a [`Decision`](super::Decision)); `None` for a question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<serde_json::Value>,
    /// For a question one of the agent's tools asked ([`Tool::start`](crate::Tool::start)):
    /// the turn's tool calls held until it is answered, the first one the call that asks.
    /// The answer goes to that tool, not to the agent. `None` for the agent's own question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) turn: Option<PausedTurn>,
    /// For a question about a field only a person can give (`"x-source": "user"`) that the
    /// step's input lacks, or whose last answer its contract refused: the field. The answer
    /// becomes the field's value in the run's input, and the step is routed to again.
    /// `None` for any other question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl HumanFeedbackRequest {
    /// The tool whose call asks the question (a remote agent's skill, say), if a tool asks
    /// it; `None` when the agent itself asks, or at an approval step.
    pub fn asking_tool(&self) -> Option<&str> {
        self.turn
            .as_ref()
            .and_then(|turn| turn.asking())
            .map(|(tool, _)| tool)
    }
}

/// A decision given at an approval step, as the run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ApprovalRecord {
    /// The agent whose output was decided on.
    pub agent: String,
    /// `approve`, `reject` or `edit`.
    pub decision: String,
    /// A rejection's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A run's whole state: serializes to JSON and resumes from it. Its public fields are what a
/// caller reads (the outputs, the conversation, the open question); the rest is the run's
/// place, kept in the JSON and checked on resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WorkflowState {
    /// The workflow's name, checked on resume.
    pub workflow: String,
    /// The run's ID: the first segment of every context ID of the run.
    pub run_id: String,
    /// Context IDs issued per agent type, so a resumed run keeps numbering densely.
    pub(crate) issued: BTreeMap<String, u64>,
    /// The run's structured input: its fields are in every step's context, as the caller
    /// wrote them (their order, their numbers' text).
    #[serde(default, skip_serializing_if = "RawObject::is_empty")]
    pub input: RawObject,
    /// Each agent's output, with the agent and the context ID of the call that produced it;
    /// the next agent's context is the input plus its `<agent>_output` map.
    pub upstream: UpstreamContext,
    /// The context ID of the current agent's call, once it was routed to.
    pub(crate) current_call: Option<ContextId>,
    /// The shared conversation.
    pub conversation: Vec<Message>,
    /// The current step, `None` once the declared steps are done.
    pub(crate) current: Option<Step>,
    /// The index of the current step among the declared ones (routing by `next_agent` may
    /// leave it).
    pub(crate) step_index: Option<usize>,
    /// Where the current step stands.
    pub(crate) phase: Phase,
    /// Failed answers per agent.
    pub(crate) retries: BTreeMap<String, u32>,
    /// Agents run so far.
    pub(crate) hops: u32,
    /// The open question, while paused.
    pub pending: Option<HumanFeedbackRequest>,
    /// The decisions given at approval steps, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<ApprovalRecord>,
}

impl WorkflowState {
    /// The context the next agent receives: the run's input, then every `<agent>_output` in
    /// the order producers first appeared, each with the producer's latest value (a key seen
    /// before keeps its place and takes the new value).
    pub(crate) fn context(&self) -> Vec<(String, Box<RawValue>)> {
        let mut context: Vec<(String, Box<RawValue>)> = match self.input.entries() {
            Ok(entries) => entries
                .into_iter()
                .map(|(key, value)| (key.into_owned(), value.to_owned()))
                .collect(),
            Err(_) => Vec::new(),
        };
        let mut at: HashMap<String, usize> = context
            .iter()
            .enumerate()
            .map(|(i, (key, _))| (key.clone(), i))
            .collect();
        for part in &self.upstream {
            let key = format!("{}_output", part.producer);
            let Ok(value) = serde_json::value::to_raw_value(&part.value) else {
                continue;
            };
            match at.get(&key) {
                Some(&i) => context[i].1 = value,
                None => {
                    at.insert(key.clone(), context.len());
                    context.push((key, value));
                }
            }
        }
        context
    }
}

impl Workflow {
    /// Adds the fields collected for `consumer` to its context (replacing a key of the same
    /// name in place).
    pub(super) fn collected(
        &self,
        consumer: &str,
        state: &WorkflowState,
        context: &mut Vec<(String, Box<serde_json::value::RawValue>)>,
    ) {
        for collect in self.collects.iter().filter(|c| c.consumer == consumer) {
            let items: Vec<CollectedItem<'_>> = collect
                .items
                .iter()
                .filter_map(|(producer, description)| {
                    let part = state.upstream.latest(producer)?;
                    Some(CollectedItem {
                        agent_name: producer,
                        description,
                        output: match &part.written {
                            Some(text) => agent_contracts_contract::__private::Shown::Text(text),
                            None => agent_contracts_contract::__private::Shown::Value(&part.value),
                        },
                    })
                })
                .collect();
            let Ok(value) = serde_json::value::to_raw_value(&items) else {
                continue;
            };
            match context.iter_mut().find(|(key, _)| *key == collect.field) {
                Some(entry) => entry.1 = value,
                None => context.push((collect.field.clone(), value)),
            }
        }
    }

    /// Every upstream part was produced by a member of this workflow, in a call of this run
    /// and of that agent, and still passes the member's output contract (a stored output may
    /// have been edited since it was checked); the current call is the current agent's.
    fn check_calls(&self, state: &WorkflowState) -> Result<(), String> {
        let cut = |s: &str| agent_contracts_contract::__private::truncate(s, 100).into_owned();
        let of_run = |id: &ContextId, agent: &str, what: &str| {
            let issued = state.issued.get(agent).copied().unwrap_or(0);
            if id.run_id() != state.run_id || id.agent_type() != agent || id.sequence() > issued {
                return Err(format!(
                    "{what} has context id `{}`, which is not a call of `{}` in this run",
                    cut(&id.to_string()),
                    cut(agent)
                ));
            }
            Ok(())
        };
        for part in &state.upstream {
            let Some(member) = self.members.get(&part.producer) else {
                return Err(format!(
                    "the state's upstream part from `{}` names no agent of this workflow",
                    cut(&part.producer)
                ));
            };
            of_run(&part.context_id, &part.producer, "an upstream part")?;
            if let Err(error) = member.agent.check_output(&part.value, &self.config.limits) {
                return Err(format!(
                    "the stored output of `{}` no longer passes its output contract: {error}",
                    part.producer
                ));
            }
            // The text is what a collected item shows: it must be the value checked.
            if let Some(written) = &part.written
                && serde_json::from_str::<serde_json::Value>(written.get())
                    .ok()
                    .as_ref()
                    != Some(&part.value)
            {
                return Err(format!(
                    "the stored output text of `{}` is not its stored value",
                    cut(&part.producer)
                ));
            }
        }
        match (&state.current_call, &state.current) {
            (Some(id), Some(step)) => of_run(id, &step.agent, "the current call"),
            (Some(_), None) => Err("the state has a current call but no current step".into()),
            (None, _) => Ok(()),
        }
    }

    /// The conversation holds no system message: system prompts are assembled per request,
    /// so one stored in the state could only be an injection every later agent would obey.
    fn check_conversation(&self, state: &WorkflowState) -> Result<(), String> {
        match state
            .conversation
            .iter()
            .position(|m| m.role == crate::chat::Role::System)
        {
            Some(at) => Err(format!(
                "the state's conversation holds a system message (message {})",
                at + 1
            )),
            None => Ok(()),
        }
    }

    /// Parses a resume state from untrusted JSON text: size and depth are checked before
    /// parsing, and the state must belong to this workflow and name known agents.
    pub fn parse_state(&self, text: &str) -> Result<WorkflowState, Error> {
        let bad = |reason: String| self.bad_state(reason);
        let limits = &self.config.limits;
        if text.len() > limits.max_bytes {
            return Err(bad(format!(
                "state of {} bytes exceeds {} bytes",
                text.len(),
                limits.max_bytes
            )));
        }
        // A conversation nests a few levels; contexts are within the same limit as calls.
        if text_depth(text) > limits.max_depth.saturating_add(4) {
            return Err(bad(format!(
                "state nesting exceeds {} levels",
                limits.max_depth.saturating_add(4)
            )));
        }
        let state: WorkflowState = serde_json::from_str(text)
            .map_err(|e| bad(format!("state is not a valid workflow state: {e}")))?;
        self.check_state(&state).map_err(bad)?;
        Ok(state)
    }

    pub(crate) fn bad_state(&self, reason: String) -> Error {
        Error::BadState {
            workflow: self.name.clone(),
            reason,
        }
    }

    /// A pending approval is of an agent with an approval step, and shows that agent's
    /// latest output, the one the run goes on with: a person never approves one value while
    /// the run carries another.
    fn check_approval(
        &self,
        state: &WorkflowState,
        pending: &HumanFeedbackRequest,
    ) -> Result<(), String> {
        let cut = |s: &str| agent_contracts_contract::__private::truncate(s, 100).into_owned();
        let agent = &pending.requesting_agent;
        if self.approval_of(agent).is_none() {
            return Err(format!(
                "the state waits for an approval of `{}`, which has no approval step",
                cut(agent)
            ));
        }
        if state.current_call.is_some() {
            return Err("the state waits for an approval inside a call".into());
        }
        match state.upstream.latest(agent) {
            Some(part) if Some(&part.value) == pending.approval.as_ref() => Ok(()),
            _ => Err(format!(
                "the state's output to approve is not the latest output of `{}`",
                cut(agent)
            )),
        }
    }

    /// A question a tool asked: the held calls start with the one that asks, whose question
    /// is the pending one; each is a call of one of the asking agent's tools, asked for by
    /// the conversation's last assistant message and not answered yet. A stored state that
    /// held a call the agent never made would hand a person's answer to any tool.
    fn check_turn(
        &self,
        state: &WorkflowState,
        pending: &HumanFeedbackRequest,
        turn: &PausedTurn,
    ) -> Result<(), String> {
        let cut = |s: &str| agent_contracts_contract::__private::truncate(s, 100).into_owned();
        let agent = &pending.requesting_agent;
        if pending.approval.is_some() || state.phase != Phase::Answering {
            return Err("the state's tool question is not a question being answered".into());
        }
        match turn.asking() {
            Some((_, pause)) if pause.question == pending.prompt => {}
            Some(_) => return Err("the state's question is not its tool's question".into()),
            None => {
                return Err("the state's held tool calls do not start with one that asks".into());
            }
        }
        let Some(member) = self.members.get(agent) else {
            return Err(format!(
                "the state's tool question is from unknown `{}`",
                cut(agent)
            ));
        };
        let tools: Vec<String> = member.tools.iter().map(|t| t.definition().name).collect();
        let Some(at) = state
            .conversation
            .iter()
            .rposition(|m| m.role == crate::chat::Role::Assistant)
        else {
            return Err("the state holds tool calls no assistant message made".into());
        };
        let asked = &state.conversation[at].tool_calls;
        let answered: Vec<&str> = state.conversation[at + 1..]
            .iter()
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        for call in &turn.calls {
            if !tools.iter().any(|t| t == call.tool()) {
                return Err(format!(
                    "the state holds a call of `{}`, which is not a tool of `{}`",
                    cut(call.tool()),
                    cut(agent)
                ));
            }
            let made = asked
                .iter()
                .any(|c| c.id == call.id() && c.name == call.tool());
            if !made || answered.contains(&call.id()) {
                return Err(format!(
                    "the state holds the call `{}`, which the last answer of `{}` did not make or which is answered",
                    cut(call.id()),
                    cut(agent)
                ));
            }
            if let HeldCall::Paused { pause, .. } = call
                && text_depth(&pause.state.to_string()) > self.config.limits.max_depth
            {
                return Err("a held tool call's state nests too deep".into());
            }
        }
        Ok(())
    }

    pub(crate) fn check_state(&self, state: &WorkflowState) -> Result<(), String> {
        let cut = |s: &str| agent_contracts_contract::__private::truncate(s, 100).into_owned();
        if state.workflow != self.name {
            return Err(format!(
                "the state belongs to workflow `{}`",
                cut(&state.workflow)
            ));
        }
        if let Err(e) = ContextIdGenerator::resume(state.run_id.clone(), state.issued.clone()) {
            return Err(format!("the state's context id counters are invalid: {e}"));
        }
        if let Some(step) = &state.current
            && !self.members.contains_key(&step.agent)
        {
            return Err(format!(
                "the state's current agent `{}` is unknown",
                cut(&step.agent)
            ));
        }
        if let Some((agent, n)) = state
            .retries
            .iter()
            .find(|(_, n)| **n > self.config.max_retries)
        {
            return Err(format!(
                "the state's retry count for `{}` ({n}) is past the bound of {}",
                cut(agent),
                self.config.max_retries
            ));
        }
        if state.step_index.is_some_and(|i| i >= self.steps.len()) {
            return Err("the state's step index is past the declared steps".into());
        }
        if state.hops > self.config.max_hops {
            return Err(format!(
                "the state's hop count ({}) is past the bound of {}",
                state.hops, self.config.max_hops
            ));
        }
        self.check_calls(state)?;
        self.check_conversation(state)?;
        if let (Some(pending), Some(step)) = (&state.pending, &state.current)
            && state.phase == Phase::Answering
            && pending.requesting_agent != step.agent
        {
            return Err(format!(
                "the state's question is from `{}`, but the current agent is `{}`",
                cut(&pending.requesting_agent),
                step.agent
            ));
        }
        if let Some(pending) = &state.pending
            && let Some(turn) = &pending.turn
        {
            self.check_turn(state, pending, turn)?;
        }
        if let Some(pending) = &state.pending
            && let Some(field) = &pending.field
        {
            let agent = state
                .current
                .as_ref()
                .and_then(|step| self.members.get(&step.agent));
            let known = agent.is_some_and(|m| m.agent.input_contract().user_field(field).is_some());
            if !known || pending.turn.is_some() || state.current_call.is_some() {
                return Err(format!(
                    "the state's question asks for `{}`, which is no field a person gives to the current agent",
                    cut(field)
                ));
            }
        }
        match (&state.pending, state.phase) {
            (Some(pending), Phase::Answering) if pending.approval.is_some() => {
                Err("the state's question carries an output to approve".into())
            }
            (Some(pending), Phase::Approving) => self.check_approval(state, pending),
            (None, Phase::Approving) => {
                Err("the state is approving but has no pending approval".into())
            }
            (Some(_), Phase::Answering) | (None, Phase::Routing) => Ok(()),
            (None, Phase::Answering) => {
                Err("the state is answering but has no pending question".into())
            }
            (Some(_), Phase::Routing) => {
                Err("the state has a pending question but is not answering".into())
            }
        }
    }
}
