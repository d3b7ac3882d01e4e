//! A field only a person can give (`"x-source": "user"`: the plan generator's `target_url`)
//! that a parent model's call omitted is asked of a person, not of the model: the loop
//! pauses with the field's question, a refused answer is asked again with the reason, and
//! the answer, merged into the call, runs the sub-agent. A call that also lacks fields the
//! model can give gets a retry error about those alone; a direct call keeps its
//! `Error::Retry`, whole.

use agent_contracts::model::tool_calls;
use agent_contracts::runtime::{LoopOutcome, UserAsk};
use agent_contracts::{Agent, DynAgent, Error, Message, Runtime, ScriptedModel};
use serde_json::{Value, json};
use std::sync::Arc;

/// Writes crawl plans.
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json"
)]
struct PlanGeneratorAgent;

const PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill the form, submit."}"#;

const QUESTION: &str = "`plan_generator_agent` needs `target_url`, which only you can give: The URL of the page the crawl plan is for, exactly as the sub-agents visited it. Example: 'https://myapp.com/login'";

/// The plan generator's kwargs as a parent writes them, without `target_url`.
fn kwargs_without_url() -> String {
    json!({
        "task": "Plan it",
        "task_name": "login",
        "collected_information": [
            {"agent_name": "discovery_agent", "description": "Found the form",
             "output": {"page_title": "Login", "discovered_elements": []}},
            {"agent_name": "selector_agent", "description": "Chose the selectors",
             "output": {"selectors": {}, "strategy": "id-first"}}
        ]
    })
    .to_string()
}

fn tool_results(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m.tool_call_id.is_some())
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect()
}

#[test]
fn the_contract_knows_its_user_fields_from_the_schema() {
    let contract = PlanGeneratorAgent.input_contract();
    let names: Vec<&str> = contract
        .user_fields()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["target_url"]);
    assert_eq!(contract.user_fields()[0].schema["minLength"], 1);
    // An output contract has none.
    assert!(
        <PlanGeneratorAgent as Agent>::output_contract()
            .unwrap()
            .user_fields()
            .is_empty()
    );
}

#[test]
fn what_a_calling_model_is_told_leaves_out_only_the_persons_missing_fields() {
    let contract = PlanGeneratorAgent.input_contract();
    let limits = agent_contracts::Limits::default();
    let error_of = |call: Value| contract.check(&call, &limits).unwrap_err();
    // Missing the person's field and a model's: the model hears of its own alone.
    let mixed = error_of(json!({"task_name": "login"}));
    assert_eq!(
        mixed.missing_fields,
        ["target_url", "collected_information"]
    );
    let told = contract.for_calling_model(mixed.clone());
    assert_eq!(told.missing_fields, ["collected_information"]);
    assert_eq!(told.required_fields, ["task_name", "collected_information"]);
    assert_eq!(told.errors.len(), mixed.errors.len() - 1);
    assert_eq!(told.validation_message, told.errors[0].message);
    assert!(!serde_json::to_string(&told).unwrap().contains("target_url"));
    // A fault elsewhere with the person's field missing: that field is left out too.
    let mut call = serde_json::from_str::<Value>(&kwargs_without_url()).unwrap();
    call["task_name"] = json!(7);
    let told = contract.for_calling_model(error_of(call));
    assert!(told.missing_fields.is_empty());
    assert_eq!(told.errors.len(), 1);
    assert_eq!(told.hint, "Please fix the invalid fields: task_name");
    // Only the person's field missing: unchanged (that call is asked of a person).
    let only = error_of(serde_json::from_str(&kwargs_without_url()).unwrap());
    assert_eq!(contract.for_calling_model(only.clone()), only);
    // The person's field given, and broken: the model gave it, so it hears of it.
    let mut call = serde_json::from_str::<Value>(&kwargs_without_url()).unwrap();
    call["target_url"] = json!("");
    call["task_name"] = json!(7);
    let given = error_of(call);
    assert_eq!(contract.for_calling_model(given.clone()), given);
    // A contract without such fields, and an output contract's error: unchanged.
    let output = <PlanGeneratorAgent as Agent>::output_contract().unwrap();
    let answer = output.check(&json!({}), &limits).unwrap_err();
    assert_eq!(output.for_calling_model(answer.clone()), answer);
}

#[tokio::test]
async fn an_omitted_user_field_pauses_the_loop_and_the_answer_runs_the_sub_agent() {
    let call = tool_calls([("run_plan_generator_agent", kwargs_without_url().as_str())]);
    let model = Arc::new(
        ScriptedModel::default()
            .script("main", [call, Message::assistant("Planned.")])
            .script("plan_generator_agent", [Message::assistant(PLAN)]),
    );
    let runtime = Runtime::new(model.clone());
    let tools: [&dyn DynAgent; 1] = [&PlanGeneratorAgent];

    let LoopOutcome::Paused(pause) = runtime
        .run_loop_pausable("main", "", "Plan the login page", &tools)
        .await
        .unwrap()
    else {
        panic!("the call lacks a field only a person can give");
    };
    assert_eq!(pause.tool, "run_plan_generator_agent");
    assert_eq!(pause.question, QUESTION);
    // Nobody was asked but the parent, once: no retry error went back to it.
    assert!(model.requests_of("plan_generator_agent").is_empty());
    assert_eq!(model.requests_of("main").len(), 1);

    // An answer that breaks the field's schema (`minLength: 1`) is asked again, with why.
    let LoopOutcome::Paused(pause) = runtime.resume_loop(pause, "", &tools).await.unwrap() else {
        panic!("a refused answer is asked again");
    };
    assert!(
        pause
            .question
            .starts_with("That answer was refused: \"\" is shorter than 1 character. "),
        "{}",
        pause.question
    );
    assert!(pause.question.ends_with(QUESTION));
    assert!(model.requests_of("plan_generator_agent").is_empty());

    let LoopOutcome::Done(outcome) = runtime
        .resume_loop(pause, "https://myapp.com/login", &tools)
        .await
        .unwrap()
    else {
        panic!("the answer completes the call");
    };
    assert_eq!(outcome.content, "Planned.");
    let plan = model.requests_of("plan_generator_agent");
    assert_eq!(plan.len(), 1);
    assert!(
        plan[0].messages[1]
            .content
            .contains("https://myapp.com/login")
    );
    let results = tool_results(&outcome.messages);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["success"], true);
    assert_eq!(results[0]["output"]["status"], "success");
    // The parent's model was asked twice: before the call, and after its result.
    assert_eq!(model.requests_of("main").len(), 2);
}

#[tokio::test]
async fn a_call_that_also_lacks_model_fields_gets_a_retry_error_about_those_alone() {
    let kwargs = json!({"task": "Plan it", "task_name": "login"}).to_string();
    let call = tool_calls([("run_plan_generator_agent", kwargs.as_str())]);
    // Its second call gives what the retry error asked for, and still no `target_url`.
    let again = tool_calls([("run_plan_generator_agent", kwargs_without_url().as_str())]);
    let model = Arc::new(ScriptedModel::default().script("main", [call, again]));
    let runtime = Runtime::new(model.clone());
    let tools: [&dyn DynAgent; 1] = [&PlanGeneratorAgent];
    let LoopOutcome::Paused(pause) = runtime
        .run_loop_pausable("main", "", "Plan it", &tools)
        .await
        .unwrap()
    else {
        panic!("the second call lacks only the person's field");
    };
    // The first call's retry error went back to the model about its own field alone: the
    // person's field is neither missing nor required there, nor named anywhere in it.
    let second = &model.requests_of("main")[1];
    let results = tool_results(&second.messages);
    assert_eq!(results.len(), 1);
    let error = &results[0];
    assert_eq!(error["success"], false);
    assert_eq!(error["missing_fields"], json!(["collected_information"]));
    assert_eq!(
        error["required_fields"],
        json!(["task_name", "collected_information"])
    );
    assert_eq!(
        error["hint"],
        "Please provide all required fields: collected_information"
    );
    assert_eq!(error["errors"].as_array().unwrap().len(), 1);
    assert!(!error.to_string().contains("target_url"), "{error}");
    // The second is asked of a person, and the sub-agent's model was never called.
    assert_eq!(pause.question, QUESTION);
    assert!(model.requests_of("plan_generator_agent").is_empty());
}

#[tokio::test]
async fn a_direct_call_with_faults_of_its_own_still_names_the_persons_field() {
    // The program holds the whole input: its retry error is the contract's, whole.
    let runtime = Runtime::new(ScriptedModel::default());
    let kwargs = json!({"task": "Plan it", "task_name": "login"}).to_string();
    let error = runtime
        .call::<PlanGeneratorAgent>(&kwargs)
        .await
        .unwrap_err();
    let error = error.retry_error().unwrap();
    assert_eq!(
        error.missing_fields,
        ["target_url", "collected_information"]
    );
}

#[tokio::test]
async fn a_direct_call_keeps_its_retry_error_and_can_read_the_question_from_it() {
    let runtime = Runtime::new(ScriptedModel::default());
    let error = runtime
        .call::<PlanGeneratorAgent>(&kwargs_without_url())
        .await
        .unwrap_err();
    let Error::Retry { error, .. } = &error else {
        panic!("expected a retry error, got {error:?}");
    };
    let ask = UserAsk::of(&PlanGeneratorAgent, error).unwrap();
    assert_eq!(ask.field.name, "target_url");
    assert_eq!(ask.question, QUESTION);
    let kwargs = ask
        .with_answer(
            &kwargs_without_url(),
            ask.value_of_text("https://a.example"),
        )
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&kwargs).unwrap()["target_url"],
        "https://a.example"
    );
}

#[tokio::test]
async fn a_workflow_step_whose_input_lacks_a_user_field_pauses_and_the_answer_resumes_it() {
    use agent_contracts::Workflow;
    use agent_contracts::workflow::{Member, WorkflowOutcome};
    let workflow = Workflow::new("plans")
        .agent(Member::from(&PlanGeneratorAgent))
        .goal([("plan_generator_agent", "Write the plan")]);
    let model = Arc::new(
        ScriptedModel::default().script("plan_generator_agent", [Message::assistant(PLAN)]),
    );
    let runner = workflow.runner(model.clone());
    let asked = |outcome: WorkflowOutcome| match outcome {
        WorkflowOutcome::NeedsInput { request, state, .. } => {
            assert_eq!(request.field.as_deref(), Some("target_url"));
            (request.prompt, state)
        }
        other => panic!("expected the field asked, got {other:?}"),
    };
    let (question, state) = asked(
        runner
            .start_with_kwargs(&kwargs_without_url())
            .await
            .unwrap(),
    );
    assert_eq!(question, QUESTION);
    assert!(model.requests_of("plan_generator_agent").is_empty());

    // The paused state round-trips through the state checks, and a refused answer asks again.
    let state = workflow
        .parse_state(&serde_json::to_string(&state).unwrap())
        .unwrap();
    let (question, state) = asked(runner.resume(state, "").await.unwrap());
    assert!(
        question.starts_with("That answer was refused: "),
        "{question}"
    );
    assert!(model.requests_of("plan_generator_agent").is_empty());

    let done = runner
        .resume(state, "https://myapp.com/login")
        .await
        .unwrap();
    let WorkflowOutcome::Finished { state, .. } = done else {
        panic!("the answer completes the step: {done:?}");
    };
    assert_eq!(
        state.upstream.to_context_map()["plan_generator_agent_output"]["status"],
        "success"
    );
    let requests = model.requests_of("plan_generator_agent");
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .messages
            .iter()
            .any(|m| m.content.contains("https://myapp.com/login"))
    );

    // A stored question naming a field no person gives is refused.
    let (_, state) = asked(
        runner
            .start_with_kwargs(&kwargs_without_url())
            .await
            .unwrap(),
    );
    let mut tampered = serde_json::to_value(&state).unwrap();
    tampered["pending"]["field"] = json!("task_name");
    let refused = workflow.parse_state(&tampered.to_string()).unwrap_err();
    assert!(matches!(refused, Error::BadState { .. }), "{refused:?}");
}

/// Audits accessibility.
#[derive(Agent)]
#[agent(
    name = "accessibility_agent",
    input = "../schemas/accessibility_agent/input.schema.json",
    output = "../schemas/accessibility_agent/output.schema.json"
)]
struct AccessibilityAgent;

/// A workflow step's input refused as written gets the lossless repairs a sub-agent's kwargs
/// get (`"aa"` for the enum's `AA`), recorded in the transcript; the step runs on the fix.
#[tokio::test]
async fn a_workflow_steps_input_is_repaired_like_a_sub_agents_kwargs() {
    use agent_contracts::Workflow;
    use agent_contracts::transcript::Event;
    use agent_contracts::workflow::{Member, WorkflowOutcome};
    let audit = r#"{"overall_score": 78, "compliance_level": "AA", "issues": [], "passed_checks": {}, "audit_metadata": {"tool_version": "1.2.0", "rules_applied": 56, "elements_scanned": 124}}"#;
    let workflow = Workflow::new("audits")
        .agent(Member::from(&AccessibilityAgent))
        .goal([("accessibility_agent", "Audit the page")]);
    let model = Arc::new(
        ScriptedModel::default().script("accessibility_agent", [Message::assistant(audit)]),
    );
    let runner = workflow.runner(model.clone());
    let kwargs = json!({"task": "Audit", "target_url": "https://a.example", "wcag_level": "aa"});
    let outcome = runner.start_with_kwargs(&kwargs.to_string()).await.unwrap();
    assert!(
        matches!(outcome, WorkflowOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let repairs: Vec<_> = runner
        .transcript()
        .events()
        .into_iter()
        .filter_map(|event| match event {
            Event::InputRepaired { tool, repairs, .. } => Some((tool, repairs)),
            _ => None,
        })
        .collect();
    assert_eq!(repairs.len(), 1);
    assert_eq!(repairs[0].0, "run_accessibility_agent");
    assert_eq!(repairs[0].1[0].path, "/wcag_level");
    assert_eq!(repairs[0].1[0].after, r#""AA""#);
    // The step's context reaches the agent repaired.
    let requests = model.requests_of("accessibility_agent");
    let context = requests[0]
        .messages
        .iter()
        .find(|m| m.content.contains("wcag_level"))
        .unwrap();
    assert!(
        context.content.contains(r#""wcag_level": "AA""#),
        "{}",
        context.content
    );
}
