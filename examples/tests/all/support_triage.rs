//! The support-triage workflow: it pauses after the drafter every time; approve, reject, edit
//! and a broken edit, in the library, through `support-triage --store` and over MCP
//! (`agent-demo mcp`); a run enqueued with typed input drained to the approval pause.

use agent_contracts::store::{CheckpointStore as _, MemoryStore, RunStatus};
use agent_contracts::workflow::{Decision, OnReject, WorkflowOutcome};
use agent_contracts::{Error, Workflow};
use agent_examples::support_triage::{
    self, CLASSIFICATION, Canned, DRAFT, REDRAFT, REQUEST, TICKET, Ticket,
};
use serde_json::{Value, json};
use std::sync::Arc;

const EDITED: &str = r#"{"reply": "Refunded: the second $49.00 charge on order A-1042 is on its way back.", "escalate": false}"#;
/// Breaks the drafter's output contract: no `escalate`.
const BROKEN: &str = r#"{"reply": "Refunded."}"#;

fn ticket() -> Ticket {
    serde_json::from_str(TICKET).unwrap()
}

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// A run to its approval: the drafter's output, and the state.
async fn paused(workflow: &Workflow) -> agent_contracts::workflow::WorkflowState {
    let runner = workflow.runner(Canned);
    let outcome = runner.start_with_input(REQUEST, &ticket()).await.unwrap();
    let WorkflowOutcome::NeedsInput { request, state, .. } = outcome else {
        panic!("the run must pause for the approval: {outcome:?}");
    };
    assert_eq!(request.requesting_agent, "reply_drafter_agent");
    assert_eq!(request.approval, Some(value(DRAFT)));
    assert_eq!(
        request.prompt,
        "Review the output of `reply_drafter_agent`: approve it, reject it with a reason, or edit it."
    );
    let outputs = state.upstream.to_context_map();
    assert_eq!(
        outputs["ticket_classifier_agent_output"],
        value(CLASSIFICATION)
    );
    state
}

#[tokio::test]
async fn approve_edit_and_reject_each_end_the_run_as_said() {
    let workflow = support_triage::workflow();
    let runner = workflow.runner(Canned);

    let approved = runner
        .decide(paused(&workflow).await, &Decision::Approve)
        .await
        .unwrap();
    let WorkflowOutcome::Finished { output, state } = approved else {
        panic!("an approved last step ends the run");
    };
    assert_eq!(output, DRAFT);
    assert_eq!(state.approvals[0].decision, "approve");

    let edit = Decision::Edit {
        value: EDITED.into(),
    };
    let edited = runner.decide(paused(&workflow).await, &edit).await.unwrap();
    let WorkflowOutcome::Finished { output, state } = edited else {
        panic!("an edited last step ends the run");
    };
    assert_eq!(output, EDITED);
    assert_eq!(
        state.upstream.to_context_map()["reply_drafter_agent_output"],
        value(EDITED)
    );

    let broken = Decision::Edit {
        value: BROKEN.into(),
    };
    let state = paused(&workflow).await;
    let refused = runner.decide(state.clone(), &broken).await.unwrap_err();
    let Error::EditRefused { agent, error } = &refused else {
        panic!("a broken edit is refused: {refused}");
    };
    assert_eq!(agent, "reply_drafter_agent");
    assert_eq!(error.missing_fields, ["escalate"]);
    assert!(refused.to_string().contains("escalate"), "{refused}");
    // Feedback text does not answer an approval.
    let answered = runner.resume(state, "looks good").await.unwrap_err();
    assert!(
        answered.to_string().contains("waits for a decision"),
        "{answered}"
    );

    let rejected = runner
        .decide(paused(&workflow).await, &Decision::reject("Too casual"))
        .await
        .unwrap_err();
    assert_eq!(
        rejected.to_string(),
        "workflow `support_triage` ended: a person rejected the output of `reply_drafter_agent`: Too casual"
    );
}

#[tokio::test]
async fn a_rejection_that_reroutes_to_the_drafter_pauses_after_the_redraft() {
    let workflow = support_triage::workflow().approve(
        "reply_drafter_agent",
        OnReject::Reroute("reply_drafter_agent".into()),
    );
    let runner = workflow.runner(Canned);
    let outcome = runner
        .decide(
            paused(&workflow).await,
            &Decision::reject("Apologize first"),
        )
        .await
        .unwrap();
    let WorkflowOutcome::NeedsInput { request, state, .. } = outcome else {
        panic!("the redraft is approved again");
    };
    assert_eq!(request.approval, Some(value(REDRAFT)));
    let rejection = request
        .conversation
        .iter()
        .find(|m| m.content.contains("and rejected it"))
        .expect("the reason is in the conversation");
    assert!(rejection.content.contains("Apologize first"));
    let approved = runner.decide(state, &Decision::Approve).await.unwrap();
    assert!(matches!(approved, WorkflowOutcome::Finished { output, .. } if output == REDRAFT));
}

#[tokio::test]
async fn a_queued_run_with_typed_input_is_drained_to_the_approval() {
    let workflow = support_triage::workflow();
    let store = Arc::new(MemoryStore::default());
    let runner = workflow.runner(Canned).with_store(store.clone());

    // Refused before anything is stored: the classifier needs `customer_tier`.
    let kwargs = json!({"task": REQUEST, "ticket_text": "Charged twice"}).to_string();
    let refused = runner.enqueue_with_kwargs(&kwargs).await.unwrap_err();
    assert_eq!(
        refused.retry_error().unwrap().missing_fields,
        ["customer_tier"]
    );
    assert!(store.list().await.unwrap().is_empty());

    let run_id = runner.enqueue_with_input(REQUEST, &ticket()).await.unwrap();
    assert_eq!(store.load(&run_id).await.unwrap().status, RunStatus::Queued);
    let worker = workflow.runner(Canned).with_store(store.clone());
    let Some(WorkflowOutcome::NeedsInput { request, .. }) = worker.run_next().await.unwrap() else {
        panic!("the queued run runs to its approval");
    };
    assert_eq!(request.approval, Some(value(DRAFT)));
    assert_eq!(store.load(&run_id).await.unwrap().status, RunStatus::Paused);
    assert!(worker.run_next().await.unwrap().is_none());

    // Decided from the store: a broken edit leaves it paused; an approval completes it.
    let broken = Decision::Edit {
        value: BROKEN.into(),
    };
    let refused = worker.decide_run(&run_id, &broken).await.unwrap_err();
    assert!(matches!(refused, Error::EditRefused { .. }), "{refused}");
    assert_eq!(store.load(&run_id).await.unwrap().status, RunStatus::Paused);
    worker
        .decide_run(&run_id, &Decision::Approve)
        .await
        .unwrap();
    assert_eq!(
        store.load(&run_id).await.unwrap().status,
        RunStatus::Finished
    );
}

#[cfg(feature = "store")]
mod cli {
    use super::{BROKEN, DRAFT, EDITED};
    use std::process::{Command, Output};

    const BIN: &str = env!("CARGO_BIN_EXE_support-triage");

    fn run(args: &[&str]) -> Output {
        Command::new(BIN).args(args).output().unwrap()
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Starts a run that stops at the approval; returns its ID.
    fn start(url: &str) -> String {
        let out = run(&["--store", url]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
        assert!(
            stdout.contains("=== [reply_drafter_agent] waits for approval ===\n"),
            "{stdout}"
        );
        stdout
            .lines()
            .find_map(|l| {
                l.strip_prefix("run ")?
                    .strip_suffix(" is saved, waiting for approval")
            })
            .expect("the run id line")
            .to_owned()
    }

    fn status_of(url: &str, run_id: &str) -> String {
        let out = run(&["--store", url, "--list", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let run = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == run_id)
            .expect("the run is listed");
        run["status"].as_str().unwrap().to_owned()
    }

    #[test]
    fn approve_reject_edit_and_a_broken_edit_through_the_cli() {
        let dir = std::env::temp_dir().join(format!("support-triage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite:{}", dir.join("runs.db").display());
        let url = url.as_str();

        let run_id = start(url);
        assert_eq!(status_of(url, &run_id), "paused");
        let list = text(&run(&["--store", url, "--list"]).stdout);
        assert!(
            list.contains(&format!("{run_id}  paused  support_triage\n")),
            "{list}"
        );
        let approved = run(&["--store", url, "--resume", &run_id, "--approve"]);
        let stdout = text(&approved.stdout);
        assert!(
            approved.status.success(),
            "{stdout}{}",
            text(&approved.stderr)
        );
        assert!(
            stdout.ends_with(&format!("=== reply ===\n{DRAFT}\n")),
            "{stdout}"
        );
        assert_eq!(status_of(url, &run_id), "completed");
        let list = text(&run(&["--store", url, "--list"]).stdout);
        assert!(
            list.contains(&format!("{run_id}  completed  support_triage\n")),
            "{list}"
        );

        let run_id = start(url);
        let rejected = run(&[
            "--store",
            url,
            "--resume",
            &run_id,
            "--reject",
            "Too casual",
        ]);
        assert_eq!(rejected.status.code(), Some(1));
        assert_eq!(
            text(&rejected.stderr),
            "error: workflow `support_triage` ended: a person rejected the output of `reply_drafter_agent`: Too casual\n"
        );
        assert_eq!(status_of(url, &run_id), "failed");

        let run_id = start(url);
        let broken = dir.join("broken.json");
        std::fs::write(&broken, BROKEN).unwrap();
        let broken = broken.to_str().unwrap();
        let refused = run(&["--store", url, "--resume", &run_id, "--edit", broken]);
        assert_eq!(refused.status.code(), Some(1));
        let message = text(&refused.stderr);
        assert!(
            message.starts_with(
                "error: the edit of `reply_drafter_agent`'s output breaks its output contract: "
            ) && message.contains("escalate"),
            "{message}"
        );
        assert_eq!(status_of(url, &run_id), "paused");
        let edit = dir.join("edit.json");
        std::fs::write(&edit, EDITED).unwrap();
        let edited = run(&[
            "--store",
            url,
            "--resume",
            &run_id,
            "--edit",
            edit.to_str().unwrap(),
        ]);
        let stdout = text(&edited.stdout);
        assert!(edited.status.success(), "{stdout}{}", text(&edited.stderr));
        assert!(
            stdout.ends_with(&format!("=== reply ===\n{EDITED}\n")),
            "{stdout}"
        );

        // A queued run of a ticket file, drained by a worker to its approval.
        let ticket = dir.join("ticket.json");
        std::fs::write(&ticket, super::TICKET).unwrap();
        let enqueued = run(&["--store", url, "--enqueue", ticket.to_str().unwrap()]);
        assert!(enqueued.status.success(), "{}", text(&enqueued.stderr));
        let queued = text(&enqueued.stdout).trim().to_owned();
        assert_eq!(status_of(url, &queued), "queued");
        let drained = run(&["--store", url, "--worker"]);
        assert!(drained.status.success(), "{}", text(&drained.stderr));
        assert!(
            text(&drained.stdout).contains(&format!("run {queued} waits for approval\n")),
            "{}",
            text(&drained.stdout)
        );
        assert_eq!(status_of(url, &queued), "paused");
        // A ticket that breaks the input contract is refused, and nothing is stored.
        std::fs::write(&ticket, r#"{"ticket_text": "Help"}"#).unwrap();
        let refused = run(&["--store", url, "--enqueue", ticket.to_str().unwrap()]);
        assert_eq!(refused.status.code(), Some(1));
        assert!(
            text(&refused.stderr).contains("customer_tier"),
            "{}",
            text(&refused.stderr)
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[cfg(feature = "demo")]
mod mcp {
    use super::{BROKEN, DRAFT, EDITED, TICKET, value};
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use serde_json::{Value, json};

    fn call(name: &str, arguments: Value) -> CallToolRequestParams {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(map) = arguments {
            params.arguments = Some(map);
        }
        params
    }

    #[tokio::test]
    async fn approve_reject_edit_and_a_broken_edit_over_mcp() {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"));
        command.arg("mcp");
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let run_tool = tools
            .iter()
            .find(|t| t.name == "run_support_triage")
            .unwrap();
        assert_eq!(
            run_tool.input_schema["required"],
            json!(["task", "ticket_text", "customer_tier"])
        );
        // No tool declares the reserved `run_identifier`.
        assert!(
            tools
                .iter()
                .all(|t| t.input_schema["properties"].get("run_identifier").is_none())
        );
        let mut arguments: Value = serde_json::from_str(TICKET).unwrap();
        arguments["task"] = json!(support_triage_request());

        let start = async || {
            let paused = client
                .call_tool(call("run_support_triage", arguments.clone()))
                .await
                .unwrap();
            assert_eq!(paused.is_error, Some(false));
            let paused = paused.structured_content.unwrap();
            assert_eq!(paused["status"], "input_required");
            assert_eq!(paused["requesting_agent"], "reply_drafter_agent");
            assert_eq!(paused["approval"], value(DRAFT));
            paused["handle"].as_str().unwrap().to_owned()
        };
        let resume = async |arguments: Value| {
            client
                .call_tool(call("resume_support_triage", arguments))
                .await
                .unwrap()
        };

        let handle = start().await;
        let done = resume(json!({"handle": handle, "decision": "approve"})).await;
        let done = done.structured_content.unwrap();
        assert_eq!(done["status"], "finished");
        assert_eq!(done["output"], DRAFT);

        let handle = start().await;
        let edit = json!({"handle": handle, "decision": "edit", "value": value(BROKEN)});
        let refused = resume(edit).await;
        assert_eq!(refused.is_error, Some(true));
        let refused = refused.structured_content.unwrap();
        assert_eq!(refused["missing_fields"], json!(["escalate"]));
        // The run is still paused at the same handle: a good edit ends it.
        let edit = json!({"handle": handle, "decision": "edit", "value": value(EDITED)});
        let done = resume(edit).await.structured_content.unwrap();
        assert_eq!(done["status"], "finished");
        assert_eq!(done["outputs"]["reply_drafter_agent_output"], value(EDITED));

        let handle = start().await;
        let missing = resume(json!({"handle": handle, "decision": "reject"})).await;
        assert_eq!(missing.is_error, Some(true));
        let reject = json!({"handle": handle, "decision": "reject", "reason": "Too casual"});
        let rejected = resume(reject).await;
        assert_eq!(rejected.is_error, Some(false));
        assert_eq!(
            rejected.structured_content.unwrap(),
            json!({"status": "rejected", "agent": "reply_drafter_agent", "reason": "Too casual"})
        );
        client.cancel().await.unwrap();
    }

    fn support_triage_request() -> &'static str {
        agent_examples::support_triage::REQUEST
    }
}

/// The drafter's input holds the classifier's output as the classifier's own type (its
/// `types` mapping): a classification read by the classifier's contract goes into a drafter
/// input as it is, with no conversion (this compiles only if the two are one type).
#[test]
fn the_drafter_takes_the_classifiers_own_type() {
    use support_triage::agents::reply_drafter_agent::input::ReplyDrafterAgentInput;
    use support_triage::agents::ticket_classifier_agent::output::TicketClassifierAgentOutput;
    let classification: TicketClassifierAgentOutput = serde_json::from_str(CLASSIFICATION).unwrap();
    let mut input: ReplyDrafterAgentInput = serde_json::from_value(json!({
        "ticket_text": "Charged twice",
        "customer_tier": "pro",
        "ticket_classifier_agent_output": {"summary": "Other", "category": "other"},
    }))
    .unwrap();
    input.ticket_classifier_agent_output = classification;
    assert_eq!(
        serde_json::to_value(&input.ticket_classifier_agent_output).unwrap(),
        value(CLASSIFICATION)
    );
}
