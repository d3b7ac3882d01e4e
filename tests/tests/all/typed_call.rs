//! The typed front door: `Runtime::call::<A>` returns `A::Output`, input errors never reach
//! the model, output retries carry the "Previous attempt" section and the context ID (in the
//! runtime and in a workflow step alike), the config's limits reach every contract, tool calls
//! run concurrently in order, and a run can be cancelled or dropped.

use agent_contracts::{
    ChatModel, Config, DynAgent, Error, Limits, Message, Runtime, ScriptedModel,
    model::ChatRequest, runtime::CancellationToken, runtime::Side,
};
use agent_contracts::{Workflow, workflow::WorkflowOutcome};
use agent_contracts::{
    model::BoxFuture, model::ChatResponse, model::ModelError, model::tool_calls,
};
use agent_tests::{DiscoveryAgent, GOLDEN, KWARGS, PlanGeneratorAgent};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const BAD_PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "done"}"#;
const GOOD_PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill both inputs, submit."}"#;

fn plan_model() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(BAD_PLAN), Message::assistant(GOOD_PLAN)],
    ))
}

#[tokio::test]
async fn a_typed_call_returns_the_typed_output_after_an_output_retry() {
    let model = plan_model();
    let runtime = Runtime::new(model.clone());
    let plan = runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    assert_eq!(plan.plan_file_path.as_str(), "plans/login.md");
    assert_eq!(
        plan.agent_response_content,
        "Fill both inputs, submit.".to_owned()
    );

    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 2);
    // The first request's user message is the golden prompt, byte for byte.
    assert_eq!(requests[0].messages[1].content, GOLDEN);
    // The second carries the bad answer, then the retry error and the "Previous attempt"
    // section, both naming the call's context ID.
    let id = runtime
        .transcript()
        .events()
        .iter()
        .find_map(|e| match e {
            agent_contracts::transcript::Event::AgentCall { context_id, .. } => {
                Some(context_id.to_string())
            }
            _ => None,
        })
        .unwrap();
    let second = &requests[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[2].content, BAD_PLAN);
    let retry = &second[3].content;
    assert!(
        retry.starts_with(
            "Your answer broke your output contract. Fix it and answer again with one JSON object.\n\n```json\n{\n  \"success\": false,\n  \"error\": \"Output contract validation failed\","
        ),
        "{retry}"
    );
    assert_names_the_call(retry, &id);
}

#[tokio::test]
async fn a_call_missing_collected_information_never_reaches_the_model() {
    let model = plan_model();
    let runtime = Runtime::new(model.clone());
    let mut kwargs: serde_json::Map<String, Value> = serde_json::from_str(KWARGS).unwrap();
    kwargs.remove("collected_information");
    let error = runtime
        .call::<PlanGeneratorAgent>(&Value::Object(kwargs).to_string())
        .await
        .unwrap_err();
    let Error::Retry { agent, error, .. } = &error else {
        panic!("expected a retry error, got {error}");
    };
    assert_eq!(agent, "plan_generator_agent");
    assert_eq!(error.missing_fields, ["collected_information"]);
    assert_eq!(
        error.hint,
        "Please provide all required fields: collected_information"
    );
    assert!(model.requests_of("plan_generator_agent").is_empty());
}

#[tokio::test]
async fn max_errors_in_the_config_reaches_the_contract() {
    // Three wrong types at once: the default lists all three, a config of one lists one.
    let kwargs = r#"{"task": "t", "target_url": 1, "task_name": 2, "collected_information": 3}"#;
    let all = Runtime::new(plan_model())
        .call::<PlanGeneratorAgent>(kwargs)
        .await
        .unwrap_err();
    assert_eq!(all.retry_error().unwrap().errors.len(), 3);
    let config = Config::default().with_limits(Limits::default().with_max_errors(1));
    let one = Runtime::with_config(plan_model(), config)
        .call::<PlanGeneratorAgent>(kwargs)
        .await
        .unwrap_err();
    assert_eq!(one.retry_error().unwrap().errors.len(), 1);
}

#[tokio::test]
async fn output_retries_end_with_one_error_naming_agent_side_and_attempts() {
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        vec![Message::assistant(BAD_PLAN); 5],
    ));
    let config = Config::default().with_max_retries(1);
    let error = Runtime::with_config(model, config)
        .call::<PlanGeneratorAgent>(KWARGS)
        .await
        .unwrap_err();
    let Error::RetriesExhausted {
        agent,
        side,
        attempts,
        last,
    } = &error
    else {
        panic!("expected exhausted retries, got {error}");
    };
    assert_eq!(
        (agent.as_str(), side, *attempts),
        ("plan_generator_agent", &Side::Output, 2)
    );
    assert_eq!(last.error, "Output contract validation failed");
}

// ---- a workflow step retries the same way -------------------------------------------------

#[tokio::test]
async fn a_workflow_step_retries_with_the_previous_attempt_and_its_context_id() {
    let workflow = Workflow::new("plans")
        .agent(&PlanGeneratorAgent)
        .goal([("plan_generator_agent", "Generate Crawl Plan")]);
    let model = plan_model();
    let runner = workflow.runner(model.clone());
    let outcome = runner.start_with_kwargs(KWARGS).await.unwrap();
    let WorkflowOutcome::Finished { state, .. } = outcome else {
        panic!("the plan generator asked no question");
    };
    let part = state
        .upstream
        .get::<serde_json::Value>("plan_generator_agent")
        .unwrap();
    assert_eq!(part.value["status"], "success");
    let id = part.context_id.to_string();
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 2);
    let retry = &requests[1].messages.last().unwrap().content;
    assert!(
        retry.starts_with("Your answer broke your output contract."),
        "{retry}"
    );
    assert_names_the_call(retry, &id);
}

#[tokio::test]
async fn a_workflow_starts_with_structured_input_for_its_first_agent() {
    let workflow = Workflow::new("plans")
        .agent(&PlanGeneratorAgent)
        .goal([("plan_generator_agent", "Generate Crawl Plan")]);
    // The kwargs' task is the user's request; the fields reach the first agent's contract.
    let model = plan_model();
    let runner = workflow.runner(model.clone());
    runner.start_with_kwargs(KWARGS).await.unwrap();
    let first = &model.requests_of("plan_generator_agent")[0];
    assert_eq!(first.messages[1].content, "Generate Crawl Plan");
    assert_eq!(first.messages[2].content, GOLDEN);

    // A typed input works the same way.
    let input: Value = serde_json::from_str(KWARGS).unwrap();
    let model = plan_model();
    workflow
        .runner(model.clone())
        .start_with_input("Make a plan", &input)
        .await
        .unwrap();
    assert_eq!(model.requests_of("plan_generator_agent").len(), 2);

    // Without the required fields the first agent cannot start, and the model is not asked.
    let model = plan_model();
    let error = workflow
        .runner(model.clone())
        .start("Make a plan")
        .await
        .unwrap_err();
    let Error::Retry { agent, error, .. } = &error else {
        panic!("expected a retry error, got {error}");
    };
    assert_eq!(agent, "plan_generator_agent");
    assert_eq!(
        error.missing_fields,
        ["target_url", "task_name", "collected_information"]
    );
    assert!(model.requests_of("plan_generator_agent").is_empty());
}

// ---- sub-agent outputs are typed for Rust callers -----------------------------------------

#[tokio::test]
async fn a_loop_hands_out_each_sub_agent_output_typed() {
    let discovery = r#"{"page_title": "Login", "discovered_elements": []}"#;
    let call = r#"{"task": "Scan", "target_url": "https://a.example"}"#;
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "main",
                [
                    tool_calls([("run_discovery_agent", call)]),
                    Message::assistant("done"),
                ],
            )
            .script("discovery_agent", [Message::assistant(discovery)]),
    );
    let runtime = Runtime::new(model);
    let tools: [&dyn DynAgent; 1] = [&DiscoveryAgent];
    let outcome = runtime.run_loop("main", "", "go", &tools).await.unwrap();
    let page = outcome.output_of::<DiscoveryAgent>().unwrap();
    assert_eq!(page.page_title, "Login");
    assert!(outcome.output_of::<PlanGeneratorAgent>().is_none());
}

// ---- concurrency, cancellation, dropping --------------------------------------------------

/// Answers each sub-agent after a delay that makes the first call finish last, and counts the
/// calls in flight.
struct SlowModel {
    inner: ScriptedModel,
    in_flight: AtomicUsize,
    most: AtomicUsize,
}

impl ChatModel for SlowModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            if request.agent == "main" {
                return self.inner.complete(request).await;
            }
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            let url = &request.messages[1].content;
            let delay = if url.contains("first") { 30 } else { 5 };
            tokio::time::sleep(Duration::from_millis(delay)).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(Message::assistant(format!(
                r#"{{"page_title": "{}", "discovered_elements": []}}"#,
                if url.contains("first") {
                    "first"
                } else {
                    "later"
                }
            ))
            .into())
        })
    }
}

#[tokio::test]
async fn tool_calls_of_one_turn_run_concurrently_and_keep_the_models_order() {
    let call =
        |host: &str| format!(r#"{{"task": "Scan", "target_url": "https://{host}.example"}}"#);
    let (a, b, c) = (call("first"), call("second"), call("third"));
    let turn = tool_calls([
        ("run_discovery_agent", a.as_str()),
        ("run_discovery_agent", b.as_str()),
        ("run_discovery_agent", c.as_str()),
    ]);
    let model = Arc::new(SlowModel {
        inner: ScriptedModel::default().script("main", [turn, Message::assistant("done")]),
        in_flight: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    });
    let config = Config::default().with_max_concurrency(2);
    let runtime = Runtime::with_config(model.clone(), config);
    let tools: [&dyn DynAgent; 1] = [&DiscoveryAgent];
    let outcome = runtime.run_loop("main", "", "go", &tools).await.unwrap();
    assert_eq!(model.most.load(Ordering::SeqCst), 2);
    let titles: Vec<&str> = outcome
        .outputs
        .iter()
        .filter_map(|output| output.typed::<DiscoveryAgent>())
        .map(|p| p.page_title.as_str())
        .collect();
    assert_eq!(titles, ["first", "later", "later"]);
    // The tool messages follow the model's order too.
    let results: Vec<&Message> = outcome
        .messages
        .iter()
        .filter(|m| m.tool_call_id.is_some())
        .collect();
    assert!(results[0].content.contains("\"page_title\":\"first\""));
}

/// A model that never answers, and counts how many calls it saw and dropped.
#[derive(Default)]
struct Silent {
    started: AtomicUsize,
    dropped: Arc<AtomicUsize>,
}

struct CountDrop(Arc<AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl ChatModel for Silent {
    fn complete<'a>(
        &'a self,
        _: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let guard = CountDrop(self.dropped.clone());
        Box::pin(async move {
            let _guard = guard;
            std::future::pending().await
        })
    }
}

#[tokio::test]
async fn a_cancelled_run_ends_with_a_clear_error_and_keeps_its_transcript() {
    let token = CancellationToken::new();
    let model = Arc::new(Silent::default());
    let runtime = Runtime::with_config(model.clone(), Config::default().with_cancel(token.clone()));
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(runtime.call::<PlanGeneratorAgent>(KWARGS), cancel);
    let error = result.unwrap_err();
    assert!(matches!(&error, Error::Cancelled { agent } if agent == "plan_generator_agent"));
    assert_eq!(
        error.to_string(),
        "the run was cancelled while `plan_generator_agent` was running"
    );
    assert_eq!(model.dropped.load(Ordering::SeqCst), 1);
    // The transcript keeps what happened before: the call and its rendered prompt.
    let transcript = runtime.transcript().to_string();
    assert!(transcript.contains("=== [plan_generator_agent] rendered user prompt ==="));
}

#[tokio::test]
async fn dropping_a_runs_future_stops_it() {
    let model = Arc::new(Silent::default());
    let runtime = Runtime::new(model.clone());
    let run = runtime.call::<PlanGeneratorAgent>(KWARGS);
    let timed_out = tokio::time::timeout(Duration::from_millis(10), run).await;
    assert!(timed_out.is_err());
    assert_eq!(model.started.load(Ordering::SeqCst), 1);
    assert_eq!(model.dropped.load(Ordering::SeqCst), 1);
}

// ---- usage and the token budget -----------------------------------------------------------

fn with_usage(text: &str, input: u64, output: u64) -> ChatResponse {
    ChatResponse::from(Message::assistant(text))
        .with_usage(agent_contracts::model::Usage::new(input, output))
}

#[tokio::test]
async fn usage_is_recorded_and_a_token_budget_stops_the_run() {
    let script = || {
        ScriptedModel::default().script(
            "plan_generator_agent",
            [
                with_usage(BAD_PLAN, 900, 50),
                with_usage(GOOD_PLAN, 1000, 60),
            ],
        )
    };
    // Without a budget: both calls' usage is in the transcript, and the totals add up.
    let runtime = Runtime::new(Arc::new(script()));
    runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    let usage = runtime.transcript().usage();
    assert_eq!((usage.input_tokens, usage.output_tokens), (1900, 110));
    let counts = runtime.transcript().counts();
    assert_eq!((counts.model_calls, counts.output_retries), (2, 1));
    assert!(
        runtime
            .transcript()
            .to_string()
            .contains("=== [plan_generator_agent] tokens: 900 in, 50 out ===")
    );
    // A budget of 900 tokens is passed by the first call: the run stops there.
    let config = Config::default().with_token_budget(900);
    let model = Arc::new(script());
    let error = Runtime::with_config(model.clone(), config)
        .call::<PlanGeneratorAgent>(KWARGS)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the run used 950 tokens, past its budget of 900, when `plan_generator_agent` was answered"
    );
    assert!(matches!(
        error,
        Error::TokenBudget {
            used: 950,
            budget: 900,
            ..
        }
    ));
    assert_eq!(model.requests_of("plan_generator_agent").len(), 1);
}

#[tokio::test]
async fn a_sub_agent_call_asks_for_its_output_contract_as_structured_output() {
    let model = plan_model();
    Runtime::new(model.clone())
        .call::<PlanGeneratorAgent>(KWARGS)
        .await
        .unwrap();
    let request = &model.requests_of("plan_generator_agent")[0];
    let schema = request.output_schema.as_ref().unwrap();
    assert_eq!(
        &schema.schema,
        <PlanGeneratorAgent as agent_contracts::Agent>::output_contract()
            .unwrap()
            .schema()
    );
}

/// An output retry's message names the call twice: in the retry error and in the "Previous
/// attempt" section.
fn assert_names_the_call(retry: &str, id: &str) {
    assert!(
        retry.contains(&format!("\"context_id\": \"{id}\"")),
        "{retry}"
    );
    assert!(
        retry.contains(&format!(
            "## Previous attempt\n\nAttempt 1 at this task (context id `{id}`, "
        )),
        "{retry}"
    );
}

/// Runs can be spawned: every entry point's future is `Send` (a server runs each call on its
/// own task).
#[test]
fn run_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    let runtime = Runtime::new(plan_model());
    send(&runtime.call::<PlanGeneratorAgent>(KWARGS));
    let tools: [&dyn DynAgent; 1] = [&DiscoveryAgent];
    send(&runtime.run_loop("main", "", "go", &tools));
    let workflow = Workflow::new("plans").agent(&PlanGeneratorAgent);
    let runner = workflow.runner(plan_model());
    send(&runner.start("go"));
    send(&runner.start_with_kwargs(KWARGS));
}
