//! Lossless repair in the runtime: a malformed answer or call that a repair makes pass is
//! taken with no model call and no retry, its repairs recorded in the transcript, on the
//! output, and (for a call) beside the result the parent reads; a repair switched off, or a
//! malformation only a meaning-changing fix would mend, is retried as before.

use agent_contracts::contract::{RepairKind, Repairs};
use agent_contracts::transcript::Event;
use agent_contracts::{Config, DynAgent, Message, Runtime, ScriptedModel, model::tool_calls};
use agent_tests::{DiscoveryAgent, KWARGS, PlanGeneratorAgent};
use std::sync::Arc;

/// A plan answer with three syntax slips and an enum value in the wrong case.
const SLIPPED: &str = "```json\n{plan_file_path: 'plans/login.md', \"status\": \"Success\", \"agent_response_content\": \"Fill both inputs, submit.\",}\n```";
const GOOD_PLAN: &str = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill both inputs, submit."}"#;

fn output_repairs(runtime: &Runtime) -> Vec<(RepairKind, String)> {
    runtime
        .transcript()
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::OutputRepaired { repairs, .. } => Some(repairs),
            _ => None,
        })
        .flatten()
        .map(|r| (r.kind, r.path))
        .collect()
}

#[tokio::test]
async fn a_slipped_answer_is_taken_without_a_second_model_call() {
    let model = Arc::new(
        ScriptedModel::default().script("plan_generator_agent", [Message::assistant(SLIPPED)]),
    );
    let runtime = Runtime::new(model.clone());
    let plan = runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    assert_eq!(plan.plan_file_path.as_str(), "plans/login.md");
    assert_eq!(
        serde_json::to_value(&plan).unwrap()["status"],
        serde_json::json!("success")
    );
    assert_eq!(model.requests_of("plan_generator_agent").len(), 1);
    let counts = runtime.transcript().counts();
    assert_eq!(
        (
            counts.model_calls,
            counts.output_retries,
            counts.repaired_answers
        ),
        (1, 0, 1)
    );
    assert_eq!(
        output_repairs(&runtime),
        [
            (RepairKind::UnquotedKey, String::new()),
            (RepairKind::SingleQuotes, String::new()),
            (RepairKind::TrailingComma, String::new()),
            (RepairKind::EnumCase, "/status".into()),
        ]
    );
    let shown = runtime.transcript().to_string();
    assert!(
        shown.contains("answer repaired (output contract)")
            && shown.contains("/status: enum_case \"Success\" -> \"success\""),
        "{shown}"
    );
}

#[tokio::test]
async fn repairs_switched_off_or_meaning_changing_fixes_are_retries() {
    // Switched off: the same answer is asked again.
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(SLIPPED), Message::assistant(GOOD_PLAN)],
    ));
    let config = Config::default().with_repairs(Repairs::none());
    let runtime = Runtime::with_config(model.clone(), config);
    runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    assert_eq!(model.requests_of("plan_generator_agent").len(), 2);
    assert_eq!(runtime.transcript().counts().output_retries, 1);
    assert!(output_repairs(&runtime).is_empty());
    // One kind off is enough for an answer that needs it.
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(SLIPPED), Message::assistant(GOOD_PLAN)],
    ));
    let config = Config::default().with_repairs(Repairs::all().without(RepairKind::EnumCase));
    let runtime = Runtime::with_config(model.clone(), config);
    runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    assert_eq!(model.requests_of("plan_generator_agent").len(), 2);
    // No unique enum value: a fix would guess.
    let guess = r#"{"plan_file_path": "plans/login.md", "status": "succeeded", "agent_response_content": "x"}"#;
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(guess), Message::assistant(GOOD_PLAN)],
    ));
    let runtime = Runtime::new(model.clone());
    runtime.call::<PlanGeneratorAgent>(KWARGS).await.unwrap();
    assert_eq!(model.requests_of("plan_generator_agent").len(), 2);
    assert_eq!(runtime.transcript().counts().repaired_answers, 0);
}

#[tokio::test]
async fn a_parents_slipped_call_runs_and_the_parent_reads_its_repairs() {
    let call = "{task: 'Scan', target_url: 'https://a.example',}";
    let answer = r#"{"page_title": "Login", "discovered_elements": [], "forms_detected": "1"}"#;
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "main",
                [
                    tool_calls([("run_discovery_agent", call)]),
                    Message::assistant("done"),
                ],
            )
            .script("discovery_agent", [Message::assistant(answer)]),
    );
    let runtime = Runtime::new(model.clone());
    let tools: [&dyn DynAgent; 1] = [&DiscoveryAgent];
    let outcome = runtime.run_loop("main", "", "go", &tools).await.unwrap();
    assert_eq!(model.requests_of("discovery_agent").len(), 1);
    let output = &outcome.outputs[0];
    let kinds: Vec<RepairKind> = output.repairs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RepairKind::UnquotedKey,
            RepairKind::SingleQuotes,
            RepairKind::UnquotedKey,
            RepairKind::SingleQuotes,
            RepairKind::TrailingComma,
        ]
    );
    let answer_repairs: Vec<(RepairKind, &str)> = output
        .output
        .repairs()
        .iter()
        .map(|r| (r.kind, r.path.as_str()))
        .collect();
    assert_eq!(
        answer_repairs,
        [(RepairKind::NumberString, "/forms_detected")]
    );
    assert_eq!(output.output.value()["forms_detected"], 1);
    // The parent reads the call's repairs beside the output, to learn the form.
    let result = outcome
        .messages
        .iter()
        .find(|m| m.tool_call_id.is_some())
        .unwrap();
    let result: serde_json::Value = serde_json::from_str(&result.content).unwrap();
    assert_eq!(result["success"], true);
    assert_eq!(result["repairs"][0]["kind"], "unquoted_key");
    assert_eq!(result["repairs"][4]["kind"], "trailing_comma");
    let counts = runtime.transcript().counts();
    assert_eq!(
        (
            counts.input_retries,
            counts.repaired_calls,
            counts.repaired_answers
        ),
        (0, 1, 1)
    );
    // A call taken as written carries no `repairs` key.
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "main",
                [
                    tool_calls([(
                        "run_discovery_agent",
                        r#"{"task": "Scan", "target_url": "u"}"#,
                    )]),
                    Message::assistant("done"),
                ],
            )
            .script(
                "discovery_agent",
                [Message::assistant(
                    r#"{"page_title": "L", "discovered_elements": []}"#,
                )],
            ),
    );
    let runtime = Runtime::new(model);
    let outcome = runtime.run_loop("main", "", "go", &tools).await.unwrap();
    let result = outcome
        .messages
        .iter()
        .find(|m| m.tool_call_id.is_some())
        .unwrap();
    assert!(
        !result.content.contains("\"repairs\""),
        "{}",
        result.content
    );
}
