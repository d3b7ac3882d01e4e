//! What `cargo bench -p agent-examples` and `agent-demo bench` share: the deterministic
//! payloads, the per-call path and its two floors, and the interleaved timing loop.
//!
//! The per-call path is [`DynAgent::prepare`](agent_contracts::DynAgent::prepare) on kwargs
//! text: parse within the limits, split and merge, check the contract, deserialize the typed
//! input, render the user prompt. A call that breaks the contract ends in the retry error
//! serialized to JSON (what a runtime sends back to the caller), so the invalid path is measured
//! to the same point a caller sees.
//!
//! The floors are what no implementation can avoid: `serde_json::from_str::<Value>` of the same
//! text (the parse every call needs), and `serde_json::from_str::<IgnoredAny>` (lexing alone).
//! Each result is dropped inside the timed call, so freeing is part of every figure.

use crate::agents::PlanGeneratorAgent;
use crate::agents::plan_generator_agent::PlanGeneratorAgentInput;
use serde_json::{Value, json};

// The per-call path, its floors and the timing loop are the CLI's (`agent-contract bench`):
// one text, included here so that the benches and `agent-demo bench` time the same loop.
#[path = "../../agent-cli/src/timing.rs"]
mod timing;
pub use timing::{Options, Outcome, Report, floor, lex, measure, pipeline, without_key};

/// The agent names the synthetic payload cycles through (the plan generator's enum).
const AGENT_NAMES: [&str; 4] = [
    "discovery_agent",
    "selector_agent",
    "accessibility_agent",
    "data_prep_agent",
];

/// Kwargs for `plan_generator_agent` with `items` collected outputs, as compact JSON.
///
/// A fixed pattern, no randomness: the same `items` always gives the same bytes. Each item's
/// `output` nests objects and arrays four levels deep and holds strings (some multi-line, some
/// that look like markdown structure), integers, decimals, booleans, nulls and empty
/// containers; 50 items make about 200 KB.
pub fn synthetic_kwargs(items: usize) -> String {
    let collected: Vec<Value> = (0..items).map(synthetic_item).collect();
    let kwargs = json!({
        "task": "Generate Crawl Plan",
        "run_identifier": format!("synthetic-{items}"),
        "target_url": "https://shop.example.com/catalogue",
        "task_name": "catalogue_crawl",
        "collected_information": collected,
    });
    kwargs.to_string()
}

fn synthetic_item(i: usize) -> Value {
    let agent = AGENT_NAMES[i % AGENT_NAMES.len()];
    let kinds = ["input", "button", "link", "select"];
    let elements: Vec<Value> = (0..7)
        .map(|j| {
            json!({
                "element_id": format!("el-{i}-{j}"),
                "type": kinds[j % kinds.len()],
                "label": format!("Field {j} of section {i}"),
                "attributes": {
                    "name": format!("field_{j}"),
                    "placeholder": format!("Enter value {j}"),
                    "required": j % 2 == 0,
                    "max_length": 64 + j,
                    "aria-describedby": if j % 3 == 0 { Value::Null } else { json!(format!("hint-{i}-{j}")) },
                },
                "validation_rules": ["not_empty", format!("max_length_{}", 64 + j)],
                "bounding_box": {"x": 12.5 * j as f64, "y": 40 + 36 * j, "width": 320, "height": 32},
                "selectors": {
                    "css": format!("#el-{i}-{j}"),
                    "xpath": format!("//form[@id='section-{i}']//*[@id='el-{i}-{j}']"),
                    "confidence": 0.95 - 0.05 * (j % 4) as f64,
                    "fallback": [format!("[name='field_{j}']"), format!("form > :nth-child({})", j + 1)],
                },
            })
        })
        .collect();
    let mut output = json!({
            "page_title": format!("Catalogue page {i} - Shop"),
            "url": format!("https://shop.example.com/catalogue?page={i}&sort=price"),
            "discovered_elements": elements,
            "pagination": {"current": i + 1, "next": format!("/catalogue?page={}", i + 2), "has_more": true},
            "notes": format!("Section {i} loads lazily.\n# Not a heading\n- not a list item\nWait for the spinner to go."),
            "warnings": [],
            "metadata": {"scan_duration_ms": 200 + i, "framework_detected": "React", "retries": null, "extra": {}},
    });
    // What the producer's own output contract requires beside the common part, so that every
    // item passes the plan generator's contract (which checks each output against it).
    let required = match agent {
        "selector_agent" => json!({
            "strategy": "id-first-with-attribute-fallback",
            "selectors": {format!("el-{i}-0"): {"css": format!("#el-{i}-0"), "confidence": 0.90}},
        }),
        "accessibility_agent" => json!({
            "overall_score": 70 + i % 30,
            "compliance_level": "AA",
            "issues": [{"severity": "warning", "wcag_criterion": "2.4.6", "affected_elements": [format!("el-{i}-1")]}],
        }),
        _ => json!({}),
    };
    if let (Value::Object(output), Value::Object(required)) = (&mut output, required) {
        output.extend(required);
    }
    json!({
        "agent_name": agent,
        "description": format!("Run {i} of {agent}: found 7 elements in section {i}, with selectors and checks"),
        "output": output,
    })
}

/// The plan generator with its compiled contract checks replaced by "pass": its input says
/// `Some(true)` from
/// [`AgentInput::satisfies_contract`](agent_contracts::AgentInput::satisfies_contract) without
/// running them. Beside the real agent (whose generated checks run), it shows what the checks
/// themselves cost; figures from it are labelled "with checks assumed passed". Everything else
/// (contract, prompt) is the plan generator's.
#[derive(Debug, Clone, Copy, Default)]
pub struct AssumedChecksPlanGenerator;

/// The plan generator's typed input, with its compiled checks assumed to pass.
#[derive(Debug, serde::Deserialize)]
#[serde(transparent)]
pub struct AssumedChecksInput(pub PlanGeneratorAgentInput);

impl agent_contracts::AgentInput for AssumedChecksInput {
    fn input_contract() -> &'static agent_contracts::Contract {
        <PlanGeneratorAgentInput as agent_contracts::AgentInput>::input_contract()
    }

    const COMPILED_CHECKS: bool = true;
    fn satisfies_contract(&self) -> Option<bool> {
        Some(true)
    }
}

impl agent_contracts::Agent for AssumedChecksPlanGenerator {
    const NAME: &'static str = "plan_generator_agent_assumed_checks";
    const DESCRIPTION: &'static str = <PlanGeneratorAgent as agent_contracts::Agent>::DESCRIPTION;
    type Input = AssumedChecksInput;
    type Output = <PlanGeneratorAgent as agent_contracts::Agent>::Output;

    fn output_contract() -> Option<&'static agent_contracts::Contract> {
        <PlanGeneratorAgent as agent_contracts::Agent>::output_contract()
    }

    fn render_user_prompt(
        call: &agent_contracts::contract::ToolCall,
        input: &Self::Input,
    ) -> Result<String, agent_contracts::prompt::PromptError> {
        <PlanGeneratorAgent as agent_contracts::Agent>::render_user_prompt(call, &input.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_contracts::{DynAgent, Limits, contract::PrepareError};

    #[test]
    fn the_synthetic_payload_is_fixed_valid_and_about_200_kb() {
        let text = synthetic_kwargs(50);
        assert_eq!(text, synthetic_kwargs(50));
        assert!(
            (180_000..240_000).contains(&text.len()),
            "{} bytes",
            text.len()
        );
        let outcome = pipeline(&PlanGeneratorAgent, &text, &Limits::default());
        assert!(
            matches!(outcome, Outcome::Prepared(n) if n > 100_000),
            "{outcome:?}"
        );
    }

    #[test]
    fn without_a_required_field_the_path_ends_in_the_retry_error() {
        let text = without_key(&synthetic_kwargs(2), "target_url").unwrap();
        let outcome = pipeline(&PlanGeneratorAgent, &text, &Limits::default());
        assert!(matches!(outcome, Outcome::Retry(n) if n > 0), "{outcome:?}");
        assert!(without_key("{}", "target_url").is_err());
    }

    #[test]
    fn with_checks_assumed_the_path_renders_the_same_prompt() {
        let limits = Limits::default();
        let text = synthetic_kwargs(3);
        let assumed = AssumedChecksPlanGenerator.prepare(&text, &limits).unwrap();
        let real = PlanGeneratorAgent.prepare(&text, &limits).unwrap();
        assert_eq!(assumed.user_prompt, real.user_prompt);
        assert!(!assumed.call.context_built());
        // The plan generator's compiled checks decide this call (each item's `output` read
        // as its agent's output type, the required agents counted): no `Value`, no validator.
        assert!(!real.call.context_built());
        // A call the type refuses still gets the validator's retry error.
        let broken = without_key(&text, "target_url").unwrap();
        let Err(PrepareError::Retry(error)) = AssumedChecksPlanGenerator.prepare(&broken, &limits)
        else {
            panic!("a call without target_url is refused");
        };
        assert_eq!(error.missing_fields, ["target_url"]);
    }

    #[test]
    fn measure_reports_medians() {
        let text = synthetic_kwargs(1);
        let options = Options {
            iterations: Some(2),
            rounds: 3,
        };
        let report = measure(&PlanGeneratorAgent, &text, options).unwrap();
        assert_eq!(report.iterations, 2);
        assert!(report.floor_ns > 0.0 && report.pipeline_ns > 0.0 && report.ratio > 0.0);
    }
}
