//! Reruns: an output retry and a redo a human asked for both get the previous attempt, so the
//! rerun's prompt names the error and differs from the first prompt.

use agent_contracts::__private::describe_retry_error;
use agent_contracts::prompt::PreviousAttempt;
use agent_contracts::transcript::Event;
use agent_contracts::{
    Config, DynAgent, Error, Message, Runtime, ScriptedModel, model::Role, runtime::Side,
};
use agent_contracts::{transcript::ContextId, transcript::ContextIdGenerator};
use agent_tests::{DiscoveryAgent, GOLDEN, KWARGS, PlanGeneratorAgent, block_on};
use std::sync::Arc;

const BAD_PLAN: &str =
    r#"{"plan_file_path": "", "status": "done", "agent_response_content": "ok"}"#;
const PLAN: &str =
    r#"{"plan_file_path": "plans/p.md", "status": "success", "agent_response_content": "ok"}"#;
const SCAN: &str = r#"{"task": "Scan", "target_url": "https://a.example"}"#;
const PAGE: &str = r#"{"page_title": "A", "discovered_elements": []}"#;

fn id(text: &str) -> ContextId {
    text.parse().unwrap()
}

fn last_user(messages: &[Message]) -> &str {
    &messages
        .iter()
        .rfind(|m| m.role == Role::User)
        .unwrap()
        .content
}

// ---- output retries -----------------------------------------------------------------------

#[test]
fn the_retry_prompt_names_the_previous_error_and_differs_from_the_first() {
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(BAD_PLAN), Message::assistant(PLAN)],
    ));
    let runtime = Runtime::new(model.clone());

    let output =
        block_on(runtime.call_sub_agent(&PlanGeneratorAgent, KWARGS, Default::default())).unwrap();
    assert_eq!(output.output.value()["status"], "success");
    assert_eq!(output.attempt, 2);

    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 2);
    let (first, rerun) = (&requests[0].messages, &requests[1].messages);
    assert_eq!(last_user(first), GOLDEN);
    let retry = last_user(rerun);
    assert_ne!(retry, last_user(first));
    assert_ne!(rerun, first);
    // The contract error, as JSON and in the Previous attempt section.
    assert!(
        retry.starts_with("Your answer broke your output contract."),
        "{retry}"
    );
    assert!(
        retry.contains("\"error\": \"Output contract validation failed\""),
        "{retry}"
    );
    let section = &retry[retry.find("## Previous attempt").expect(retry)..];
    assert!(
        section.starts_with(&format!(
            "## Previous attempt\n\nAttempt 1 at this task (context id `{}`, ",
            output.context_id
        )),
        "{section}"
    );
    assert!(
        section.contains(
            ") was rejected with this error:\n\n```text\nOutput contract validation failed: "
        ),
        "{section}"
    );
    assert!(
        section
            .contains(r#"- at `/status`: "done" is not one of "success", "partial" or "failed""#),
        "{section}"
    );
    assert!(section.contains("- at `/plan_file_path`:"), "{section}");
    // The previous output, as markdown.
    assert!(
        section.contains("Its output was:\n\n- **plan_file_path**: \"\"\n- **status**: done\n"),
        "{section}"
    );
    assert!(section.ends_with("Answer again without repeating that answer: fix what went wrong."));
}

#[test]
fn an_answer_without_json_is_shown_verbatim_in_a_fence() {
    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [
            Message::assistant("I found ```nothing``` to give."),
            Message::assistant(PAGE),
        ],
    ));
    let runtime = Runtime::new(model.clone());

    block_on(runtime.call_sub_agent(&DiscoveryAgent, SCAN, Default::default())).unwrap();
    let requests = model.requests_of("discovery_agent");
    let retry = last_user(&requests[1].messages);
    assert!(
        retry
            .contains("was rejected with this error:\n\n```text\nOutput contains no JSON object: "),
        "{retry}"
    );
    assert!(
        retry.contains("Its output was:\n\n````\nI found ```nothing``` to give.\n````\n\n"),
        "{retry}"
    );
}

#[test]
fn every_retry_prompt_is_new() {
    let bad = |n: usize| {
        Message::assistant(format!(
            r#"{{"page_title": {n}, "discovered_elements": []}}"#
        ))
    };
    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [bad(1), bad(2), bad(3), Message::assistant(PAGE)],
    ));
    let runtime = Runtime::new(model.clone());

    let output =
        block_on(runtime.call_sub_agent(&DiscoveryAgent, SCAN, Default::default())).unwrap();
    assert_eq!(output.attempt, 4);
    let requests = model.requests_of("discovery_agent");
    let prompts: Vec<&str> = requests.iter().map(|r| last_user(&r.messages)).collect();
    for (i, prompt) in prompts.iter().enumerate().skip(1) {
        assert!(
            prompt.contains(&format!("Attempt {i} at this task")),
            "{prompt}"
        );
        assert!(
            prompt.contains(&format!("- **page_title**: {i}")),
            "{prompt}"
        );
        assert!(!prompts[..i].contains(prompt));
    }
}

#[test]
fn exhausted_retries_still_end_the_call() {
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        vec![Message::assistant(BAD_PLAN); 5],
    ));
    let config = Config::default().with_max_retries(1);
    let runtime = Runtime::with_config(model.clone(), config);

    let error = block_on(runtime.call_sub_agent(&PlanGeneratorAgent, KWARGS, Default::default()))
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::RetriesExhausted {
                attempts: 2,
                side: Side::Output,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(model.requests_of("plan_generator_agent").len(), 2);
}

// ---- a redo a human asked for -------------------------------------------------------------

#[test]
fn a_redo_is_a_new_call_whose_prompt_shows_the_previous_attempt() {
    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [
            Message::assistant(PAGE),
            Message::assistant(r#"{"page_title": "A", "discovered_elements": [{"id": "email"}]}"#),
        ],
    ));
    let runtime = Runtime::new(model.clone());
    let prepared = DiscoveryAgent.prepare(SCAN, &Default::default()).unwrap();
    let first =
        block_on(runtime.call_sub_agent(&DiscoveryAgent, SCAN, Default::default())).unwrap();
    assert_eq!((first.context_id.sequence(), first.attempt), (1, 1));

    let previous = PreviousAttempt::from(&first)
        .with_error("You listed no elements; the page has a login form.");
    assert_eq!(previous.context_id, first.context_id);
    assert_eq!(previous.attempt, 1);
    let redo = agent_contracts::runtime::CallOptions::default().with_previous(&previous);
    let redo = block_on(runtime.call_sub_agent(&DiscoveryAgent, SCAN, redo)).unwrap();
    assert_eq!(redo.output.value()["discovered_elements"][0]["id"], "email");
    assert_eq!(redo.attempt, 2);
    assert_eq!(redo.context_id.sequence(), 2);
    assert_ne!(redo.context_id, first.context_id);

    let requests = model.requests_of("discovery_agent");
    let (before, after) = (
        last_user(&requests[0].messages),
        last_user(&requests[1].messages),
    );
    assert_eq!(before, prepared.user_prompt);
    assert_ne!(after, before);
    let expected = format!("{}\n\n{}", prepared.user_prompt, previous.render().unwrap());
    assert_eq!(after, expected);
    assert!(after.contains(&format!(
        "Attempt 1 at this task (context id `{}`",
        first.context_id
    )));
    assert!(after.contains("```text\nYou listed no elements; the page has a login form.\n```"));
    // The output as the model wrote it.
    assert!(
        after.contains(
            "Its output was:\n\n- **page_title**: A\n- **discovered_elements**: *(empty)*"
        )
    );
    // A fresh conversation: system and user.
    assert_eq!(requests[1].messages.len(), 2);
    // The transcript marks it as a rerun, with the prompt the model got.
    let events = runtime.transcript().events();
    assert!(events.contains(&Event::AgentCall {
        agent: "discovery_agent".into(),
        context_id: redo.context_id.clone(),
        attempt: 2,
    }));
    assert!(events.contains(&Event::RenderedPrompt {
        agent: "discovery_agent".into(),
        prompt: expected,
    }));
    assert!(
        runtime
            .transcript()
            .to_string()
            .contains("(attempt 2, a rerun) ===")
    );
}

#[test]
fn a_redo_without_a_reason_is_sent_back_to_be_redone() {
    let mut previous = PreviousAttempt::new(
        id("run-1/discovery_agent/3/2026-01-19T10:15:00.123Z"),
        PAGE,
        2,
    );
    previous.at = "2026-01-19T10:16:00.000Z".parse().unwrap();
    assert_eq!(
        previous.render().unwrap(),
        "## Previous attempt\n\n\
         Attempt 2 at this task (context id `run-1/discovery_agent/3/2026-01-19T10:15:00.123Z`, \
         2026-01-19T10:16:00.000Z) was sent back to be redone.\n\n\
         Its output was:\n\n\
         - **page_title**: A\n\
         - **discovered_elements**: *(empty)*\n\n\
         Answer again without repeating that answer: fix what went wrong."
    );
}

#[test]
fn the_section_renders_exactly() {
    let previous = PreviousAttempt::new(
        id("run-1/plan_generator_agent/1/2026-01-19T10:15:00.123Z"),
        "no JSON here",
        1,
    )
    .with_error("Output contains no JSON object: no `{` found");
    let previous = {
        let mut value = previous;
        value.at = "2026-01-19T10:15:02.000Z".parse().unwrap();
        value
    };
    assert_eq!(
        previous.render().unwrap(),
        "## Previous attempt\n\n\
         Attempt 1 at this task (context id `run-1/plan_generator_agent/1/2026-01-19T10:15:00.123Z`, \
         2026-01-19T10:15:02.000Z) was rejected with this error:\n\n\
         ```text\nOutput contains no JSON object: no `{` found\n```\n\n\
         Its output was:\n\n```\nno JSON here\n```\n\n\
         Answer again without repeating that answer: fix what went wrong."
    );
    let empty = {
        let mut value = previous.clone();
        value.serialized_output = "  \n".into();
        value
    };
    assert!(empty.render().unwrap().contains("was rejected with this error:\n\n```text\nOutput contains no JSON object: no `{` found\n```\n\nIt gave no output.\n\n"));
    // A JSON scalar is shown as text; an array as markdown.
    let scalar = {
        let mut value = previous.clone();
        value.serialized_output = "42".into();
        value
    };
    assert!(
        scalar
            .render()
            .unwrap()
            .contains("Its output was:\n\n```\n42\n```")
    );
    let array = {
        let mut value = previous;
        value.serialized_output = r#"["a", "b"]"#.into();
        value
    };
    assert!(
        array
            .render()
            .unwrap()
            .contains("Its output was:\n\n- a\n- b\n")
    );
}

#[test]
fn previous_attempts_serialize_and_come_back() {
    let ids = ContextIdGenerator::new("run-9").unwrap();
    let previous = PreviousAttempt::new(ids.next("a").unwrap(), "{}", 3).with_error("bad");
    let json = serde_json::to_value(&previous).unwrap();
    assert_eq!(
        json.as_object().unwrap().keys().collect::<Vec<_>>(),
        // Sorted, as a `Value` holds them.
        [
            "at",
            "attempt",
            "context_id",
            "error_message",
            "serialized_output",
        ]
    );
    assert_eq!(json["at"], previous.at.to_string());
    assert_eq!(
        serde_json::from_value::<PreviousAttempt>(json).unwrap(),
        previous
    );
}

#[test]
fn retry_errors_are_described_with_every_violation() {
    let error = PlanGeneratorAgent
        .check_output(
            &serde_json::from_str(BAD_PLAN).unwrap(),
            &agent_contracts::Limits::default(),
        )
        .unwrap_err();
    let text = describe_retry_error(&error);
    assert!(
        text.starts_with("Output contract validation failed: "),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("- at `/")).count(),
        error.errors.len()
    );
    let single = agent_contracts::RetryError::call(
        agent_contracts::contract::ErrorKind::NotJson,
        "bad",
        "fix it",
    );
    assert_eq!(
        describe_retry_error(&single),
        "Tool call arguments are not valid JSON: bad"
    );
}
