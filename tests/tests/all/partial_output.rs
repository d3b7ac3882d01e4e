//! Typed partial outputs: `PartialJson` fed an answer as it streams, read through the partial
//! types the codegen writes (`PartialOutput`), for the plan generator and the consolidation
//! template (nested objects, arrays of objects, `$ref`s).

use agent_contracts::{stream::PartialJson, stream::PartialOutput};
use agent_examples::agents::consolidation::ConsolidationOutput;
use agent_examples::agents::plan_generator_agent::PlanGeneratorAgentOutput;
use agent_examples::agents::plan_generator_agent::output::PlanGeneratorAgentOutputStatus;
use serde_json::json;

/// The partial value after each 16-byte chunk of `answer`.
fn partials<P: PartialOutput>(answer: &str) -> Vec<P::Partial> {
    let mut json = PartialJson::default();
    answer
        .as_bytes()
        .chunks(16)
        .map(|chunk| {
            json.feed(std::str::from_utf8(chunk).unwrap());
            P::partial(&json)
        })
        .collect()
}

#[test]
fn the_plan_arrives_field_by_field() {
    let answer = crate::prefix_check::PLAN_ANSWER;
    let seen = partials::<PlanGeneratorAgentOutput>(answer);
    // Nothing before the first key's value starts; the path grows as it is written.
    assert_eq!(seen[0].plan_file_path, None);
    let paths: Vec<Option<&str>> = seen.iter().map(|p| p.plan_file_path.as_deref()).collect();
    assert_eq!(
        &paths[1..5],
        [
            Some("plans/log"),
            Some("plans/login_form_automati"),
            Some("plans/login_form_automation.md"),
            Some("plans/login_form_automation.md")
        ]
    );
    // The enum appears once its value is complete, never as a prefix of one.
    let first_status = seen.iter().position(|p| p.status.is_some()).unwrap();
    // The chunk with the closing quote (`seen[i]` is after chunk `i`, 0-based).
    let closing_quote = answer.find("\"success\"").unwrap() + "\"success".len();
    assert_eq!(first_status, closing_quote / 16);
    assert_eq!(
        seen[first_status].status,
        Some(PlanGeneratorAgentOutputStatus::Success)
    );
    assert!(seen[first_status - 1].status.is_none());
    let last = seen.last().unwrap();
    assert!(
        last.agent_response_content
            .as_deref()
            .unwrap()
            .ends_with("(WCAG 2.4.6).")
    );
}

#[test]
fn nested_objects_fill_in_and_arrays_grow_by_complete_items() {
    let mut json = PartialJson::default();
    json.feed("```json\n{\"schemaVersion\": \"1.0.0\", \"decision\": {\"decisionType\": \"stop\", \"rationale\": \"do");
    let partial = ConsolidationOutput::partial(&json);
    let decision = partial.decision.as_ref().unwrap();
    assert_eq!(decision.rationale.as_deref(), Some("do"));
    assert_eq!(
        decision.decision_type.map(|d| d.to_string()).as_deref(),
        Some("stop")
    );
    assert_eq!(decision.requested_phase, None);
    json.feed("ne\"}, \"inputs\": [{\"inputContextId\": \"run-1/discovery_agent/1/2026-01-19T10:15:00.000Z\", \"inputType\": \"discovery_agent\", \"inputSummary\": \"pages\"}, {\"inputContextId\": \"run-1/sel");
    let partial = ConsolidationOutput::partial(&json);
    let inputs = partial.inputs.as_ref().unwrap();
    assert_eq!(inputs.len(), 1, "the item being written is not shown");
    assert_eq!(inputs[0].input_summary.as_str(), "pages");
    assert_eq!(
        json.value(),
        Some(json!({
            "schemaVersion": "1.0.0",
            "decision": {"decisionType": "stop", "rationale": "done"},
            "inputs": [{"inputContextId": "run-1/discovery_agent/1/2026-01-19T10:15:00.000Z",
                        "inputType": "discovery_agent", "inputSummary": "pages"}]
        }))
    );
    assert!(!json.is_complete());
}

#[test]
fn numbers_show_once_complete_and_text_that_stops_being_json_stays_as_it_was() {
    let mut json = PartialJson::default();
    json.feed("{\"a\": 12");
    assert_eq!(json.value(), Some(json!({})));
    json.feed(", \"b\": [true, nu");
    assert_eq!(json.value(), Some(json!({"a": 12, "b": [true]})));
    json.feed("ll], \"c\": oops");
    assert_eq!(json.value(), Some(json!({"a": 12, "b": [true, null]})));
    json.feed("}");
    assert!(!json.is_complete());
    // Prose before any fence: no object is committed to while it streams.
    let mut json = PartialJson::default();
    json.feed("I think {\"a\": 1} is it");
    assert_eq!(json.value(), None);
}
