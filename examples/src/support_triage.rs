//! The support-triage workflow: a classifier reads a ticket (its output has a bounded
//! summary, a category enum and an optional order object), a drafter writes the reply from
//! the classifier's verdict (its input `$ref`s the classifier's output contract), and a person
//! approves, rejects or edits every draft before the run ends.
//!
//! The agents are derived (`#[derive(Agent)]`). The drafter's input reaches the classifier's
//! output through a `$ref` of its contract file, so both contracts stay one text, and its
//! `types` mapping makes that field the classifier's own generated type (one type, no copy:
//! the classifier's output is the drafter's input field as it is); the compile-time data-flow
//! check compares the two contracts.

use agent_contracts::model::{BoxFuture, ChatRequest, ChatResponse, ModelError, Role};
use agent_contracts::workflow::Decision;
use agent_contracts::{ChatModel, Message, Workflow};

/// The derived agents of `support_triage/`.
pub mod agents {
    use agent_contracts::Agent;

    /// Classifies a support ticket: a one-line summary, a category and the order it names
    #[derive(Agent)]
    #[agent(
        name = "ticket_classifier_agent",
        input = "support_triage/ticket_classifier_agent/input.schema.json",
        output = "support_triage/ticket_classifier_agent/output.schema.json"
    )]
    pub struct TicketClassifierAgent;

    /// Drafts the reply to a classified support ticket
    #[derive(Agent)]
    #[agent(
        name = "reply_drafter_agent",
        input = "support_triage/reply_drafter_agent/input.schema.json",
        output = "support_triage/reply_drafter_agent/output.schema.json",
        types = { "../ticket_classifier_agent/output.schema.json" = crate::support_triage::agents::ticket_classifier_agent::output::TicketClassifierAgentOutput }
    )]
    pub struct ReplyDrafterAgent;
}

pub use agents::reply_drafter_agent::output::ReplyDrafterAgentOutput as Draft;
pub use agents::ticket_classifier_agent::input::TicketClassifierAgentInput as Ticket;

/// The request every run starts with; the ticket itself is the run's input.
pub const REQUEST: &str = "Triage this support ticket and draft the reply.";

/// The workflow's name, as stores and MCP tools know it.
pub const NAME: &str = "support_triage";

/// The steps, checked when the crate compiles: the drafter gets the ticket from the run's
/// input and the classifier's output, typed by its contract; every draft waits for a person.
#[derive(agent_contracts::Workflow)]
#[workflow(
    name = "support_triage",
    schemas = "support_triage",
    input = "support_triage/workflow.input.schema.json",
    agents = "crate::support_triage::agents",
    steps = ["ticket_classifier_agent", "reply_drafter_agent"],
    approve = ["reply_drafter_agent"]
)]
pub struct SupportTriage;

/// The workflow: classify, draft, and a person's approval of the draft; a rejection ends the
/// run.
pub fn workflow() -> Workflow {
    SupportTriage::workflow([
        "Classify the ticket: summarize it in one sentence, pick its category, and name the order it is about, if any",
        "Draft the reply to the customer from the ticket and its classification",
    ])
}

/// The canned classification.
pub const CLASSIFICATION: &str = r#"{"summary": "The customer was charged twice for order A-1042 and wants one charge refunded.", "category": "billing", "order": {"id": "A-1042", "amount_usd": 49.0}}"#;

/// The canned draft.
pub const DRAFT: &str = r#"{"reply": "Sorry about the double charge on order A-1042. We have refunded the second charge of $49.00; it reaches your card in 3 to 5 business days.", "escalate": false}"#;

/// The canned redraft, after a rejection rerouted the run to the drafter.
pub const REDRAFT: &str = r#"{"reply": "We are sorry for the trouble with order A-1042: the second charge of $49.00 is refunded, and it reaches your card in 3 to 5 business days.", "escalate": false}"#;

/// The ticket of the offline runs.
pub const TICKET: &str = r#"{"ticket_text": "Hi, I was charged twice for order A-1042 ($49). Please refund one of the charges.", "customer_tier": "pro"}"#;

/// The canned answer of a support-triage step: `None` for an agent of another workflow. A
/// drafter asked after a rejection redrafts.
pub fn canned_answer(request: &ChatRequest) -> Option<&'static str> {
    let rejected = request
        .messages
        .iter()
        .any(|m| m.role == Role::User && m.content.contains("and rejected it"));
    match request.agent.as_str() {
        "ticket_classifier_agent" => Some(CLASSIFICATION),
        "reply_drafter_agent" if rejected => Some(REDRAFT),
        "reply_drafter_agent" => Some(DRAFT),
        _ => None,
    }
}

/// The offline model: the canned answers, any number of runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Canned;

impl ChatModel for Canned {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let answer = canned_answer(request)
            .ok_or_else(|| ModelError::Other(format!("no canned answer for `{}`", request.agent)));
        Box::pin(async move { answer.map(|text| Message::assistant(text).into()) })
    }
}

/// The decision the command-line flags name: `--approve`, `--reject REASON`, or `--edit`
/// with the edited draft's JSON text.
pub fn decision(approve: bool, reject: Option<&str>, edit: Option<String>) -> Option<Decision> {
    match (approve, reject, edit) {
        (true, None, None) => Some(Decision::Approve),
        (false, Some(reason), None) => Some(Decision::reject(reason)),
        (false, None, Some(value)) => Some(Decision::Edit { value }),
        _ => None,
    }
}
