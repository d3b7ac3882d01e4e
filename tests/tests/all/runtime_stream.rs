//! Streamed delivery in the runtime: a sub-agent's answer checked against its output contract
//! while it streams, closed at the byte that breaks it and asked again with the retry error
//! built from what was received; the watch sees every delta; `Runtime::stream::<A>` yields
//! typed partials, a retry, then the checked output; answers delivered whole are unchanged,
//! and a workflow step (which may ask a question) is checked only once complete.

use agent_contracts::{
    Config, Runtime, ScriptedModel, Workflow, stream::Delivery, stream::StreamEvent,
    stream::Streamed, transcript::Event, workflow::WorkflowOutcome,
};
use agent_tests::{KWARGS, PlanGeneratorAgent};
use futures_util::StreamExt as _;
use std::sync::{Arc, Mutex};

/// The story's broken answer: a status no member of the contract's `enum` starts with, at
/// byte 72 of 290.
fn broken() -> String {
    crate::prefix_check::broken_plan_answer()
}

const GOOD: &str = crate::prefix_check::PLAN_ANSWER;

fn model(chunk: usize) -> Arc<ScriptedModel> {
    Arc::new(
        ScriptedModel::default()
            .chunk_size(chunk)
            .script("plan_generator_agent", [broken().as_str(), GOOD]),
    )
}

/// Every event a watch saw, as text.
#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn delivery(&self) -> Delivery {
        let seen = self.clone();
        Delivery::watched(move |event: StreamEvent<'_>| {
            let line = match event {
                StreamEvent::Text { agent, text } => format!("{agent} text {text}"),
                StreamEvent::Thinking { agent, text } => format!("{agent} thinking {text}"),
                StreamEvent::Stopped {
                    agent,
                    received,
                    error,
                } => format!("{agent} stopped {received} {:?}", error.path),
                StreamEvent::Done { agent } => format!("{agent} done"),
                _ => "other".to_owned(),
            };
            seen.0.lock().unwrap().push(line);
        })
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_broken_answer_is_closed_at_its_chunk_and_asked_again() {
    let model = model(16);
    let seen = Seen::default();
    let config = Config::default().with_delivery(seen.delivery());
    let runtime = Runtime::with_config(model.clone(), config);
    let plan = runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    assert_eq!(
        plan.plan_file_path.as_str(),
        "plans/login_form_automation.md"
    );

    // The broken answer was read up to the chunk holding its `"d` and no further.
    let answer = broken();
    let decided = answer.find("\"done").unwrap() + 1;
    let received = decided.div_ceil(16) * 16;
    assert!(
        received < answer.len() / 3,
        "{received} of {}",
        answer.len()
    );
    let events = runtime.transcript().events();
    let stopped: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Stopped {
                agent,
                received,
                at,
            } => Some((agent.as_str(), *received, *at)),
            _ => None,
        })
        .collect();
    assert_eq!(stopped, [("plan_generator_agent", received, decided)]);
    let counts = runtime.transcript().counts();
    assert_eq!(
        (counts.stopped_answers, counts.stopped_bytes),
        (1, received)
    );
    assert_eq!((counts.model_calls, counts.output_retries), (2, 1));
    assert!(
        runtime
            .transcript()
            .to_string()
            .contains(&format!(
                "=== [plan_generator_agent] answer stopped after {received} bytes (byte {decided} broke the output contract) ==="
            ))
    );

    // The retry went back with what was received, and the error about `status`.
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 2);
    let second = &requests[1].messages;
    assert_eq!(second[2].content, answer[..received]);
    assert!(
        second[3].content.contains("\"status\""),
        "{}",
        second[3].content
    );
    assert!(
        second[3].content.contains("is not one of"),
        "{}",
        second[3].content
    );

    // The watch saw the broken answer's chunks, its stop, then the good answer whole.
    let lines = seen.lines();
    let stop = lines
        .iter()
        .position(|l| l.starts_with("plan_generator_agent stopped"))
        .unwrap();
    assert_eq!(stop, received / 16);
    assert_eq!(
        lines[stop],
        format!("plan_generator_agent stopped {received} [Key(\"status\")]")
    );
    let text: String = lines[stop + 1..]
        .iter()
        .filter_map(|l| l.strip_prefix("plan_generator_agent text "))
        .collect();
    assert_eq!(text, GOOD);
    assert_eq!(lines.last().unwrap(), "plan_generator_agent done");
}

#[tokio::test]
async fn delivered_whole_the_broken_answer_is_read_to_its_end() {
    let model = model(16);
    let runtime = Runtime::new(model.clone());
    runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    let counts = runtime.transcript().counts();
    assert_eq!((counts.stopped_answers, counts.output_retries), (0, 1));
    let second = &model.requests_of("plan_generator_agent")[1].messages;
    assert_eq!(second[2].content, broken());
}

#[tokio::test]
async fn a_typed_stream_yields_partials_a_retry_and_the_output() {
    let runtime = Runtime::new(model(16));
    let mut stream = runtime.stream::<PlanGeneratorAgent>(KWARGS);
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    let retry = items
        .iter()
        .position(|i| matches!(i, Streamed::Retry))
        .unwrap();
    assert_eq!(
        items
            .iter()
            .filter(|i| matches!(i, Streamed::Retry))
            .count(),
        1
    );
    // Before the retry: the broken answer's path, never its status.
    let before: Vec<_> = items[..retry]
        .iter()
        .map(|i| match i {
            Streamed::Partial(p) => (p.plan_file_path.clone(), p.status.is_some()),
            _ => panic!("only partials before the retry"),
        })
        .collect();
    assert!(before.iter().all(|(_, status)| !status));
    assert_eq!(
        before.last().unwrap().0.as_deref(),
        Some("plans/login_form_automation.md")
    );
    // After it: the good answer grows to its full content, then the output ends the stream.
    let Some(Streamed::Output(plan)) = items.last() else {
        panic!("the output comes last")
    };
    assert_eq!(
        plan.plan_file_path.as_str(),
        "plans/login_form_automation.md"
    );
    let contents: Vec<usize> = items[retry + 1..items.len() - 1]
        .iter()
        .map(|i| match i {
            Streamed::Partial(p) => p.agent_response_content.as_ref().map_or(0, String::len),
            _ => panic!("only partials between the retry and the output"),
        })
        .collect();
    assert!(contents.len() > 5, "{contents:?}");
    assert!(contents.windows(2).all(|w| w[0] <= w[1]), "{contents:?}");
    assert_eq!(*contents.last().unwrap(), plan.agent_response_content.len());
    assert!(stream.next().await.is_none(), "nothing after the output");
}

#[tokio::test]
async fn a_typed_stream_ends_with_the_calls_error() {
    let runtime = Runtime::new(model(16));
    let mut stream = runtime.stream::<PlanGeneratorAgent>(r#"{"task": "Plan it"}"#);
    let error = stream.next().await.unwrap().err().unwrap();
    let retry = error.retry_error().unwrap();
    assert!(retry.missing_fields.contains(&"target_url".to_owned()));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_workflow_question_streams_without_being_refused() {
    // Not the plan's shape: a step's answer may be a question, checked once complete.
    let question = r#"{"user_input_needed": true, "user_prompt": "Which page?"}"#;
    let model = ScriptedModel::default()
        .chunk_size(4)
        .script("plan_generator_agent", [question]);
    let workflow = Workflow::new("plans")
        .agent(&PlanGeneratorAgent)
        .goal([("plan_generator_agent", "Generate Crawl Plan")])
        .config(Config::default().with_delivery(Delivery::streamed()));
    let runner = workflow.runner(Arc::new(model));
    let outcome = runner.start_with_kwargs(KWARGS).await.unwrap();
    let WorkflowOutcome::NeedsInput { request, .. } = outcome else {
        panic!("the agent asked a question")
    };
    assert_eq!(request.prompt, "Which page?");
    assert_eq!(runner.transcript().counts().stopped_answers, 0);
}
