//! Every sentence the runtime and workflows say to a model, as askama templates under
//! `templates/` (`runtime/`, `workflow/`, `contributors/`): text a model reads is data, kept
//! apart from the code that decides when to send it.
//!
//! Each renders into a `String`; writing into a `String` cannot fail, and none of these
//! templates calls a fallible filter, so a render error is impossible and maps to `""`.

use crate::ids::ContextId;
use askama::Template;

/// Text and a backtick fence longer than any backtick run in it, so no text can close its
/// fence early.
pub(crate) struct Fenced<'a> {
    pub(crate) fence: String,
    pub(crate) text: &'a str,
}

impl<'a> Fenced<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut longest = 0;
        let mut run = 0;
        for c in text.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        Self {
            fence: "`".repeat((longest + 1).max(3)),
            text,
        }
    }
}

/// `runtime/output_retry.md`: an answer broke the output contract.
#[derive(Template)]
#[template(path = "runtime/output_retry.md", escape = "none")]
struct OutputRetry<'a> {
    error: Fenced<'a>,
    previous: &'a str,
}

/// The message that sends an output-contract error (pretty JSON, with the call's context ID)
/// back to the agent that broke it, followed by the "Previous attempt" section.
pub(crate) fn output_retry(error_json: &str, previous: &str) -> String {
    OutputRetry {
        error: Fenced::new(error_json),
        previous,
    }
    .render()
    .unwrap_or_default()
}

/// `workflow/handoff_refused.md`: a handoff validator refused the producer's output.
#[derive(Template)]
#[template(path = "workflow/handoff_refused.md", escape = "none")]
struct HandoffRefused<'a> {
    consumer: &'a str,
    message: &'a str,
    previous: &'a str,
}

/// The message that sends a handoff validator's refusal back to the producer.
pub(crate) fn handoff_refused(consumer: &str, message: &str, previous: &str) -> String {
    HandoffRefused {
        consumer,
        message,
        previous,
    }
    .render()
    .unwrap_or_default()
}

/// `workflow/human_feedback.md`: the user's answer to an agent's question.
#[derive(Template)]
#[template(path = "workflow/human_feedback.md", escape = "none")]
struct HumanFeedback<'a> {
    feedback: &'a str,
}

/// The user message that carries a human's answer back into a paused run.
pub(crate) fn human_feedback(feedback: &str) -> String {
    HumanFeedback { feedback }.render().unwrap_or_default()
}

/// `workflow/approval_prompt.md`: what a person is asked at an approval step.
#[derive(Template)]
#[template(path = "workflow/approval_prompt.md", escape = "none")]
struct ApprovalPrompt<'a> {
    agent: &'a str,
}

/// The question of an approval step's pause.
pub(crate) fn approval_prompt(agent: &str) -> String {
    ApprovalPrompt { agent }.render().unwrap_or_default()
}

/// `workflow/approval_approved.md`: a person approved an output.
#[derive(Template)]
#[template(path = "workflow/approval_approved.md", escape = "none")]
struct ApprovalApproved<'a> {
    agent: &'a str,
}

/// The user message that says a person approved `agent`'s output.
pub(crate) fn approval_approved(agent: &str) -> String {
    ApprovalApproved { agent }.render().unwrap_or_default()
}

/// `workflow/approval_edited.md`: a person edited an output.
#[derive(Template)]
#[template(path = "workflow/approval_edited.md", escape = "none")]
struct ApprovalEdited<'a> {
    agent: &'a str,
    value: Fenced<'a>,
}

/// The user message that carries a person's edit of `agent`'s output.
pub(crate) fn approval_edited(agent: &str, value: &str) -> String {
    ApprovalEdited {
        agent,
        value: Fenced::new(value),
    }
    .render()
    .unwrap_or_default()
}

/// `workflow/approval_rejected.md`: a person rejected an output.
#[derive(Template)]
#[template(path = "workflow/approval_rejected.md", escape = "none")]
struct ApprovalRejected<'a> {
    agent: &'a str,
    reason: Fenced<'a>,
}

/// The user message that carries a person's rejection of `agent`'s output, and why.
pub(crate) fn approval_rejected(agent: &str, reason: &str) -> String {
    ApprovalRejected {
        agent,
        reason: Fenced::new(reason),
    }
    .render()
    .unwrap_or_default()
}

/// `workflow/routing_task.md`: the task of an agent that a `next_agent` routed to outside the
/// declared steps.
#[derive(Template)]
#[template(path = "workflow/routing_task.md", escape = "none")]
struct RoutingTask<'a> {
    previous_agent: &'a str,
}

/// The task given to an agent routed to by `previous_agent`'s `next_agent`.
pub(crate) fn routing_task(previous_agent: &str) -> String {
    RoutingTask { previous_agent }.render().unwrap_or_default()
}

/// `workflow/synthesis_system.md`: the synthesis step's system prompt.
#[derive(Template)]
#[template(path = "workflow/synthesis_system.md", escape = "none")]
struct SynthesisSystem<'a> {
    workflow: &'a str,
}

/// The system prompt of a workflow's synthesis step.
pub(crate) fn synthesis_system(workflow: &str) -> String {
    SynthesisSystem { workflow }.render().unwrap_or_default()
}

/// `contributors/identity.md`.
#[derive(Template)]
#[template(path = "contributors/identity.md", escape = "none")]
struct Identity<'a> {
    name: &'a str,
    description: &'a str,
}

/// "You are the `<name>` agent. `<description>`".
pub(crate) fn identity(name: &str, description: &str) -> String {
    Identity { name, description }.render().unwrap_or_default()
}

/// `contributors/output_contract.md`.
#[derive(Template)]
#[template(path = "contributors/output_contract.md", escape = "none")]
struct OutputContract<'a> {
    schema: Option<Fenced<'a>>,
}

/// The output contract as pretty JSON in a fence, or the plain instruction without one.
pub(crate) fn output_contract(schema_json: Option<&str>) -> String {
    OutputContract {
        schema: schema_json.map(Fenced::new),
    }
    .render()
    .unwrap_or_default()
}

/// One line of the upstream part.
pub(crate) struct UpstreamLine<'a> {
    pub(crate) producer: &'a str,
    pub(crate) context_id: &'a ContextId,
}

/// `contributors/upstream.md`.
#[derive(Template)]
#[template(path = "contributors/upstream.md", escape = "none")]
struct Upstream<'a> {
    parts: &'a [UpstreamLine<'a>],
}

/// Which agent calls produced a call's context.
pub(crate) fn upstream(parts: &[UpstreamLine<'_>]) -> String {
    Upstream { parts }.render().unwrap_or_default()
}

/// `contributors/context_id.md`.
#[derive(Template)]
#[template(path = "contributors/context_id.md", escape = "none")]
struct OwnContextId<'a> {
    context_id: &'a ContextId,
}

/// Tells an agent its own context ID.
pub(crate) fn context_id(context_id: &ContextId) -> String {
    OwnContextId { context_id }.render().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    //! Golden texts: each template's exact output.
    use super::*;

    fn id() -> ContextId {
        "run-1/catering_agent/2/2026-01-02T03:04:05.678Z"
            .parse()
            .unwrap()
    }

    #[test]
    fn output_retry_text() {
        let text = output_retry("{\n  \"a\": \"``\"\n}", "## Previous attempt\n\nx");
        assert_eq!(
            text,
            "Your answer broke your output contract. Fix it and answer again with one JSON object.\n\n```json\n{\n  \"a\": \"``\"\n}\n```\n\n## Previous attempt\n\nx"
        );
        // A backtick run in the error cannot close the fence.
        let text = output_retry("\"````\"", "p");
        assert!(text.contains("`````json\n\"````\"\n`````\n"), "{text}");
    }

    #[test]
    fn handoff_refused_text() {
        assert_eq!(
            handoff_refused("catering_agent", "too low", "## Previous attempt"),
            "The `catering_agent` agent cannot use your output: too low\nFix it and answer again with one JSON object.\n\n## Previous attempt"
        );
    }

    #[test]
    fn human_feedback_text() {
        assert_eq!(
            human_feedback("Three are vegetarian."),
            "User provided the following input: Three are vegetarian.\nPlease continue with your analysis based on this feedback."
        );
    }

    #[test]
    fn approval_texts() {
        assert_eq!(
            approval_prompt("drafter"),
            "Review the output of `drafter`: approve it, reject it with a reason, or edit it."
        );
        assert_eq!(
            approval_approved("drafter"),
            "A person reviewed the output of `drafter` and approved it."
        );
        assert_eq!(
            approval_edited("drafter", r#"{"reply": "Hi"}"#),
            "A person reviewed the output of `drafter` and edited it. The output the run goes on with:\n\n```json\n{\"reply\": \"Hi\"}\n```"
        );
        assert_eq!(
            approval_rejected("drafter", "Too curt; say ```sorry```"),
            "A person reviewed the output of `drafter` and rejected it:\n\n````\nToo curt; say ```sorry```\n````\n\nTake the reason into account in your answer."
        );
    }

    #[test]
    fn routing_task_text() {
        assert_eq!(
            routing_task("venue_agent"),
            "Previous specialist (venue_agent) completed their analysis. Please review the conversation history and continue with your specialized analysis."
        );
    }

    #[test]
    fn synthesis_system_text() {
        assert_eq!(
            synthesis_system("event_planning"),
            "You are the coordinator of the `event_planning` workflow. Synthesize the specialists' work for the user."
        );
    }

    #[test]
    fn identity_text() {
        assert_eq!(
            identity("venue_agent", "Finds venues."),
            "You are the `venue_agent` agent. Finds venues."
        );
    }

    #[test]
    fn output_contract_text() {
        assert_eq!(
            output_contract(Some("{\n  \"type\": \"object\"\n}")),
            "Answer with one JSON object that matches this output contract:\n```json\n{\n  \"type\": \"object\"\n}\n```"
        );
        assert_eq!(output_contract(None), "Answer with one JSON object.");
    }

    #[test]
    fn upstream_text() {
        let id = id();
        let parts = [
            UpstreamLine {
                producer: "venue_agent",
                context_id: &id,
            },
            UpstreamLine {
                producer: "budget_agent",
                context_id: &id,
            },
        ];
        assert_eq!(
            upstream(&parts),
            "Your context was produced by these agent calls (`<agent>_output` in the context):\n- `venue_agent`: context id `run-1/catering_agent/2/2026-01-02T03:04:05.678Z`\n- `budget_agent`: context id `run-1/catering_agent/2/2026-01-02T03:04:05.678Z`"
        );
    }

    #[test]
    fn context_id_text() {
        assert_eq!(
            context_id(&id()),
            "Your context id for this call is `run-1/catering_agent/2/2026-01-02T03:04:05.678Z`: use it wherever your output records its own id (`resultId`)."
        );
    }
}

/// `eval/judge_system.md`: what a judge model is.
#[derive(Template)]
#[template(path = "eval/judge_system.md", escape = "none")]
struct JudgeSystem;

/// The system prompt of an eval's judge.
pub(crate) fn judge_system() -> String {
    JudgeSystem.render().unwrap_or_default()
}

/// `eval/judge_user.md`: the rubric and the answer a judge decides on.
#[derive(Template)]
#[template(path = "eval/judge_user.md", escape = "none")]
struct JudgeUser<'a> {
    agent: &'a str,
    rubric: Fenced<'a>,
    answer: Fenced<'a>,
}

/// The user prompt of an eval's judge: `rubric`, then `agent`'s answer (pretty JSON).
pub(crate) fn judge_user(agent: &str, rubric: &str, answer: &str) -> String {
    JudgeUser {
        agent,
        rubric: Fenced::new(rubric),
        answer: Fenced::new(answer),
    }
    .render()
    .unwrap_or_default()
}

/// `runtime/user_field.md`: a field only a person can give, asked of a person.
#[derive(Template)]
#[template(path = "runtime/user_field.md", escape = "none")]
struct UserField<'a> {
    agent: &'a str,
    field: &'a str,
    description: Option<&'a str>,
    refusal: Option<&'a str>,
}

/// The question for a person about the field `field` of `agent`'s input (its schema's
/// `description`), and why their last answer was refused, when it was.
pub(crate) fn user_field(
    agent: &str,
    field: &str,
    description: Option<&str>,
    refusal: Option<&str>,
) -> String {
    UserField {
        agent,
        field,
        description,
        refusal,
    }
    .render()
    .unwrap_or_default()
}
