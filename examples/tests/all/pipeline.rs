//! The main job as a test: the recorded requests show the retry error as the plan generator's
//! first tool result, and the golden prompt in the plan generator's user message.

use agent_contracts::{
    Config, DynAgent, Error, Runtime, ScriptedModel, model::Role, runtime::Side,
};
use agent_examples::agents::{DiscoveryAgent, PlanGeneratorAgent};
use agent_examples::pipeline;
use std::sync::Arc;

const GOLDEN: &str = include_str!("../../../tests/fixtures/plan_generator/expected_user_prompt.md");

#[tokio::test]
async fn pipeline_retries_and_renders_the_golden_prompt() {
    let model = Arc::new(pipeline::scripted_model());
    let (_runtime, outcome) = pipeline::run(model.clone()).await;
    let outcome = outcome.unwrap();
    assert!(
        outcome
            .content
            .starts_with("The crawl plan is written to plans/login_form_automation.md")
    );

    // The main agent's 5th request carries the first plan generator result: the retry error.
    let main = model.requests_of(pipeline::MAIN_AGENT);
    assert_eq!(main.len(), 6);
    let tool_results: Vec<serde_json::Value> = main[5]
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect();
    assert_eq!(tool_results.len(), 5);
    let retry = &tool_results[3];
    assert_eq!(retry["success"], false);
    assert_eq!(retry["error"], "Input contract validation failed");
    assert_eq!(
        retry["missing_fields"],
        serde_json::json!(["collected_information"])
    );
    assert_eq!(
        retry["hint"],
        "Please provide all required fields: collected_information"
    );
    assert_eq!(tool_results[4]["success"], true);
    assert_eq!(tool_results[4]["output"]["status"], "success");

    // The plan generator was asked once, on exactly the golden prompt.
    let plan = model.requests_of("plan_generator_agent");
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0].messages[1].role, Role::User);
    assert_eq!(plan[0].messages[1].content, GOLDEN);
}

#[tokio::test]
async fn output_retry_then_success() {
    let kwargs = r#"{"task": "Scan", "target_url": "https://a.example"}"#;
    let model = Arc::new(ScriptedModel::default().script(
        "discovery_agent",
        [
            agent_contracts::Message::assistant("I could not find JSON to give."),
            agent_contracts::Message::assistant(
                r#"{"page_title": "A", "discovered_elements": []}"#,
            ),
        ],
    ));
    let runtime = Runtime::new(model.clone());

    let output = runtime
        .call_sub_agent(&DiscoveryAgent, kwargs, Default::default())
        .await
        .unwrap();
    assert_eq!(output.output.value()["page_title"], "A");
    let requests = model.requests_of("discovery_agent");
    assert_eq!(requests.len(), 2);
    let retry = &requests[1].messages[3];
    assert_eq!(retry.role, Role::User);
    assert!(
        retry
            .content
            .starts_with("Your answer broke your output contract.")
    );
    assert!(
        retry
            .content
            .contains("\"error\": \"Output contains no JSON object\"")
    );
}

#[tokio::test]
async fn output_retries_are_bounded() {
    let bad = agent_contracts::Message::assistant(r#"{"plan_file_path": "", "status": "done"}"#);
    let model = Arc::new(ScriptedModel::default().script("plan_generator_agent", vec![bad; 10]));
    let config = Config::default().with_max_retries(2);
    let runtime = Runtime::with_config(model.clone(), config);

    let error = runtime
        .call_sub_agent(
            &PlanGeneratorAgent,
            &pipeline::full_plan_kwargs(),
            Default::default(),
        )
        .await
        .unwrap_err();
    let Error::RetriesExhausted {
        agent,
        side: Side::Output,
        attempts,
        last,
    } = &error
    else {
        panic!("expected exhausted output retries, got {error}");
    };
    assert_eq!((agent.as_str(), *attempts), ("plan_generator_agent", 3));
    assert_eq!(last.error, "Output contract validation failed");
    assert_eq!(model.requests_of("plan_generator_agent").len(), 3);
    assert!(error.to_string().starts_with(
        "`plan_generator_agent` failed its output contract 3 times (1 attempt and 2 retries); last error: Output contract validation failed"
    ));
}

#[tokio::test]
async fn input_retries_are_bounded() {
    let call =
        agent_contracts::model::tool_calls([("run_plan_generator_agent", r#"{"task": "Plan"}"#)]);
    let model = Arc::new(ScriptedModel::default().script("main", vec![call; 10]));
    let runtime = Runtime::new(model.clone());
    let tools: [&dyn DynAgent; 1] = [&PlanGeneratorAgent];
    let error = runtime
        .run_loop("main", "system", "user", &tools)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            Error::RetriesExhausted {
                attempts: 4,
                side: Side::Input { .. },
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().starts_with(
        "`plan_generator_agent` failed its input contract (called by `main`) 4 times (1 attempt and 3 retries)"
    ));
    assert_eq!(model.requests_of("main").len(), 4);
}

#[tokio::test]
async fn parallel_bad_calls_in_one_reply_count_as_one_attempt() {
    let bad = r#"{"task": "Plan"}"#;
    let parallel = agent_contracts::model::tool_calls([
        ("run_plan_generator_agent", bad),
        ("run_plan_generator_agent", bad),
        ("run_plan_generator_agent", bad),
        ("run_plan_generator_agent", bad),
        ("run_made_up_a", "{}"),
        ("run_made_up_b", "{}"),
    ]);
    let model = Arc::new(ScriptedModel::default().script(
        "main",
        [
            parallel,
            agent_contracts::Message::assistant("I give up on the plan."),
        ],
    ));
    let runtime = Runtime::new(model.clone());
    let tools: [&dyn DynAgent; 1] = [&PlanGeneratorAgent];
    let outcome = runtime
        .run_loop("main", "system", "user", &tools)
        .await
        .unwrap();
    assert_eq!(outcome.content, "I give up on the plan.");
    // Every call still got its own retry error as its tool result.
    let second = &model.requests_of("main")[1];
    let results = second
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .count();
    assert_eq!(results, 6);
}

/// The declared pipeline: the run builds `collected_information` from the sub-agents'
/// outputs as they wrote them, and the plan generator is asked on exactly the golden prompt,
/// as in the main job where a model assembled the same array.
#[tokio::test]
async fn declared_pipeline_collects_and_renders_the_golden_prompt() {
    use agent_contracts::workflow::WorkflowOutcome;
    use agent_examples::pipeline::PlanPipeline;
    assert_eq!(
        PlanPipeline::STEPS,
        [
            "discovery_agent",
            "selector_agent",
            "accessibility_agent",
            "plan_generator_agent"
        ]
    );
    assert_eq!(PlanPipeline::UNDECIDED, [] as [&str; 0]);
    let model = Arc::new(pipeline::declared_model());
    let workflow = pipeline::declared_workflow();
    let outcome = workflow
        .runner(model.clone())
        .start_with_kwargs(&pipeline::declared_kwargs())
        .await
        .unwrap();
    let WorkflowOutcome::Finished { state, .. } = outcome else {
        panic!("no step asks the user");
    };
    assert_eq!(state.upstream.entries().len(), 4);
    let plan = state
        .upstream
        .get::<serde_json::Value>("plan_generator_agent")
        .unwrap();
    assert_eq!(plan.value["status"], "success");
    // Each sub-agent was asked once; the plan generator once, its prompt the last message.
    for agent in ["discovery_agent", "selector_agent", "accessibility_agent"] {
        assert_eq!(model.requests_of(agent).len(), 1, "{agent}");
    }
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 1);
    let prompt = requests[0].messages.last().unwrap();
    assert_eq!(prompt.role, Role::User);
    assert_eq!(prompt.content, GOLDEN);
}

/// A resumed state cannot swap the text a collected item shows for other data.
#[tokio::test]
async fn a_written_output_that_is_not_its_value_is_refused() {
    use agent_contracts::workflow::WorkflowOutcome;
    let workflow = pipeline::declared_workflow();
    let outcome = workflow
        .runner(Arc::new(pipeline::declared_model()))
        .start_with_kwargs(&pipeline::declared_kwargs())
        .await
        .unwrap();
    let WorkflowOutcome::Finished { state, .. } = outcome else {
        panic!("no step asks the user");
    };
    let text = serde_json::to_string(&state).unwrap();
    assert!(workflow.parse_state(&text).is_ok());
    let tampered = text.replacen("\"forms_detected\":1", "\"forms_detected\":7", 1);
    assert_ne!(tampered, text);
    let error = workflow.parse_state(&tampered).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot resume workflow `plan_pipeline`: the stored output text of `discovery_agent` is not its stored value"
    );
}
