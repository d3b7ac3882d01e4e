//! Approval steps: the pause after an approved agent's output, and a person's [`Decision`]
//! applied to it (approved, edited within the agent's output contract, or rejected: the run
//! ends or goes to another agent).

use super::{Runner, WorkflowOutcome};
use crate::chat::Message;
use crate::error::Error;
use crate::workflow::decision::Decision;
use crate::workflow::definition::OnReject;
use crate::workflow::state::{ApprovalRecord, HumanFeedbackRequest, Phase, WorkflowState};
use agent_contracts_contract::__private::text_depth;
use agent_contracts_contract::{ErrorKind, RawJson, RetryError};
use serde_json::Value;
use serde_json::value::RawValue;

impl Runner<'_> {
    /// Answers a paused approval step with a person's decision: the output the run paused with
    /// ([`HumanFeedbackRequest::approval`]) goes on as it is, is replaced by the edit (checked
    /// against the agent's output contract first: a broken edit is
    /// [`Error::EditRefused`], naming the field, and nothing changes), or is rejected: the
    /// run ends ([`Error::Rejected`]) or goes to the agent the approval names. A state paused
    /// at a question is refused (answer it with [`resume`](Self::resume)).
    ///
    /// ```
    /// use agent_contracts::workflow::{Decision, OnReject, WorkflowOutcome};
    /// use agent_contracts::{Agent, Message, ScriptedModel, Workflow};
    /// use std::sync::Arc;
    ///
    /// /// Finds venues.
    /// #[derive(Agent)]
    /// #[agent(name = "venue_agent", input = "../schemas/venue_agent/input.schema.json",
    ///         output = "../schemas/venue_agent/output.schema.json")]
    /// struct VenueAgent;
    ///
    /// let workflow = Workflow::new("venues")
    ///     .agent(&VenueAgent)
    ///     .goal([("venue_agent", "Find a venue")])
    ///     .approve("venue_agent", OnReject::End);
    /// let model = ScriptedModel::default().script("venue_agent", [Message::assistant(
    ///     r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#,
    /// )]);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let runner = workflow.runner(Arc::new(model));
    /// let WorkflowOutcome::NeedsInput { request, state, .. } = runner.start("A party").await? else {
    ///     panic!("an approved step always pauses");
    /// };
    /// assert_eq!(request.approval.unwrap()["venue_name"], "Loft");
    /// let edit = r#"{"venue_name": "Barn", "capacity": 60, "cost_usd": 900, "notes": "ok"}"#;
    /// let edit = Decision::Edit { value: edit.into() };
    /// let WorkflowOutcome::Finished { output, .. } = runner.decide(state, &edit).await? else {
    ///     panic!("the run ends after its only step");
    /// };
    /// assert!(output.contains("Barn"));
    /// # Ok::<(), agent_contracts::Error>(()) }).unwrap();
    /// ```
    pub async fn decide(
        &self,
        state: WorkflowState,
        decision: &Decision,
    ) -> Result<WorkflowOutcome, Error> {
        self.workflow.check()?;
        self.workflow
            .check_state(&state)
            .map_err(|reason| self.workflow.bad_state(reason))?;
        self.check_decision(&state, decision)?;
        self.apply_decision(state, decision).await
    }

    /// A state paused at a question takes feedback text; one paused at an approval does not.
    pub(super) fn check_feedback(&self, state: &WorkflowState) -> Result<(), Error> {
        match state.pending.as_ref().filter(|p| p.approval.is_some()) {
            Some(pending) => Err(self.workflow.bad_state(format!(
                "the run waits for a decision on the output of `{}`, not an answer: approve, reject or edit it (`Runner::decide`)",
                pending.requesting_agent
            ))),
            None => Ok(()),
        }
    }

    /// Whether `decision` can answer the state's pause, before anything is claimed or
    /// changed: the run waits for an approval, and an edit passes the agent's output
    /// contract.
    pub(super) fn check_decision(
        &self,
        state: &WorkflowState,
        decision: &Decision,
    ) -> Result<(), Error> {
        let Some(pending) = state.pending.as_ref().filter(|p| p.approval.is_some()) else {
            return Err(self.workflow.bad_state(
                "the run waits for no approval: a question is answered with text (`Runner::resume`)"
                    .into(),
            ));
        };
        if let Decision::Edit { value } = decision {
            self.edited(&pending.requesting_agent, value)?;
        }
        Ok(())
    }

    /// The edit of `agent`'s output, parsed within the workflow's limits and checked against
    /// the agent's output contract.
    fn edited(&self, agent: &str, text: &str) -> Result<(Value, RawJson), Error> {
        let member = self.workflow.known(agent, "the approval")?;
        let limits = &self.workflow.config.limits;
        let refused = |kind: ErrorKind, message: String| Error::EditRefused {
            agent: agent.to_owned(),
            error: RetryError::call(
                kind,
                message,
                "Give the edited output as one JSON object that meets the agent's output contract",
            ),
        };
        if text.len() > limits.max_bytes {
            let kind = ErrorKind::TooLarge {
                size: text.len(),
                limit: limits.max_bytes,
            };
            return Err(refused(kind, "the edit is too large".into()));
        }
        if text_depth(text) > limits.max_depth {
            let kind = ErrorKind::TooDeep {
                limit: limits.max_depth,
            };
            return Err(refused(kind, "the edit nests too deep".into()));
        }
        let raw: Box<RawValue> = serde_json::from_str(text)
            .map_err(|e| refused(ErrorKind::NotJson, format!("the edit is not JSON: {e}")))?;
        let value: Value = serde_json::from_str(raw.get())
            .map_err(|e| refused(ErrorKind::NotJson, format!("the edit is not JSON: {e}")))?;
        member
            .agent
            .check_output(&value, limits)
            .map_err(|error| Error::EditRefused {
                agent: agent.to_owned(),
                error,
            })?;
        Ok((value, RawJson::from(raw)))
    }

    /// Applies a checked decision and drives the run on (or ends it, on a rejection that
    /// ends it).
    pub(super) async fn apply_decision(
        &self,
        mut state: WorkflowState,
        decision: &Decision,
    ) -> Result<WorkflowOutcome, Error> {
        let ids = self.restore_ids(&state)?;
        let Some(pending) = state.pending.take() else {
            return Err(self
                .workflow
                .bad_state("the state has no pending approval".into()));
        };
        let agent = pending.requesting_agent;
        state.phase = Phase::Routing;
        let mut record = ApprovalRecord {
            agent: agent.clone(),
            decision: decision.as_str().to_owned(),
            reason: None,
        };
        let message = match decision {
            Decision::Approve => crate::texts::approval_approved(&agent),
            Decision::Edit { value } => {
                let (edited, written) = self.edited(&agent, value)?;
                let Some(id) = state.upstream.latest(&agent).map(|p| p.context_id.clone()) else {
                    return Err(self
                        .workflow
                        .bad_state(format!("the state has no output of `{agent}` to edit")));
                };
                state
                    .upstream
                    .push_written(agent.clone(), id, edited, Some(written));
                crate::texts::approval_edited(&agent, value)
            }
            Decision::Reject { reason } => {
                record.reason = Some(reason.clone());
                let Some(approval) = self.workflow.approval_of(&agent) else {
                    return Err(self
                        .workflow
                        .bad_state(format!("`{agent}` has no approval step")));
                };
                match &approval.on_reject {
                    OnReject::End => {
                        let message =
                            Message::user(crate::texts::approval_rejected(&agent, reason));
                        self.engine().record(&agent, &message);
                        state.conversation.push(message);
                        state.approvals.push(record);
                        state.issued = ids.snapshot();
                        let error = Error::Rejected {
                            workflow: self.workflow.name.clone(),
                            agent: agent.clone(),
                            reason: reason.clone(),
                        };
                        self.checkpoint_rejected(&state, &agent, &error).await?;
                        return Err(error);
                    }
                    OnReject::Reroute(to) => {
                        let (step, index) = self.routed(to, &agent, &state);
                        state.current = Some(step);
                        state.step_index = index;
                    }
                }
                crate::texts::approval_rejected(&agent, reason)
            }
        };
        let message = Message::user(message);
        self.engine().record(&agent, &message);
        state.conversation.push(message);
        state.approvals.push(record);
        self.drive(state, ids).await
    }

    /// The pause after `agent`'s output, which a person approves, rejects or edits: the
    /// request carries the output, the state waits in [`Phase::Approving`].
    pub(super) fn approval_pause(
        &self,
        agent: String,
        mut state: WorkflowState,
    ) -> WorkflowOutcome {
        let approval = state.upstream.latest(&agent).map(|part| part.value.clone());
        let request = HumanFeedbackRequest {
            prompt: crate::texts::approval_prompt(&agent),
            requesting_agent: agent,
            conversation: state.conversation.clone(),
            approval,
            turn: None,
            field: None,
        };
        state.phase = Phase::Approving;
        state.pending = Some(HumanFeedbackRequest {
            conversation: Vec::new(),
            ..request.clone()
        });
        WorkflowOutcome::NeedsInput {
            request,
            state,
            checkpoint: None,
        }
    }
}
