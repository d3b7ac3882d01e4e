//! The codegen goldens (`agent-codegen/tests/golden/*.rs`, typify's pretty-printed output for
//! the schemas beside them) compile in a crate that depends on `agent_contracts` alone, and the
//! types they declare read real data the way the schemas mean it.

use serde_json::json;

/// Includes one golden into a module, as the derive places generated types.
macro_rules! golden {
    ($module:ident, $file:literal) => {
        mod $module {
            #![allow(dead_code, reason = "only some of each golden's items are exercised")]
            #![allow(
                clippy::all,
                reason = "typify's output, allowed as the derive allows it"
            )]
            // typify's code calls `String::deserialize` and the like.
            #[allow(unused_imports, reason = "not every golden needs both traits")]
            use ::agent_contracts::__private::serde::{Deserialize as _, Serialize as _};
            include!(concat!("../../../agent-codegen/tests/golden/", $file));
        }
    };
}

golden!(plan_input, "plan_generator_agent_input.rs");
golden!(plan_output, "plan_generator_agent_output.rs");
golden!(kitchen_sink, "kitchen_sink.rs");

const KWARGS: &str = include_str!("../../fixtures/plan_generator/kwargs.json");

#[test]
fn plan_generator_input_reads_the_fixture_context() {
    use plan_input::{AgentOutputAgentName, PlanGeneratorAgentInput};
    let call = agent_contracts::contract::ToolCall::from_json_str(
        KWARGS,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let input: PlanGeneratorAgentInput = call.deserialize_context().unwrap();
    assert_eq!(input.target_url.as_str(), "https://myapp.com/login");
    assert_eq!(input.task_name.as_str(), "login_form_automation");
    let agents: Vec<AgentOutputAgentName> = input
        .collected_information
        .iter()
        .map(|item| item.agent_name)
        .collect();
    assert_eq!(
        agents,
        [
            AgentOutputAgentName::DiscoveryAgent,
            AgentOutputAgentName::SelectorAgent,
            AgentOutputAgentName::AccessibilityAgent,
        ]
    );
    let discovery = &input.collected_information[0];
    assert_eq!(
        discovery.description,
        "Discovered interactive elements and page structure for login form"
    );
    // An untyped output is kept as written: its keys in order, its numbers' own text.
    let keys: Vec<String> = discovery
        .output
        .entries()
        .unwrap()
        .into_iter()
        .map(|(k, _)| k.into_owned())
        .collect();
    assert_eq!(
        keys,
        [
            "page_title",
            "discovered_elements",
            "forms_detected",
            "metadata"
        ]
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(discovery.output.get()).unwrap()["page_title"],
        "Login - MyApp"
    );
    // Serializing gives back the context: the types lose nothing.
    assert_eq!(serde_json::to_value(&input).unwrap(), *call.context());
}

#[test]
fn plan_generator_input_enforces_min_length_and_enum() {
    use plan_input::PlanGeneratorAgentInput;
    let mut context = agent_contracts::contract::ToolCall::from_json_str(
        KWARGS,
        &agent_contracts::Limits::default(),
    )
    .unwrap()
    .into_context();
    context["target_url"] = json!("");
    let error =
        serde_json::from_value::<PlanGeneratorAgentInput>(context.clone().into()).unwrap_err();
    assert_eq!(error.to_string(), "shorter than 1 characters");
    context["target_url"] = json!("https://myapp.com/login");
    context["collected_information"][0]["agent_name"] = json!("unknown_agent");
    let error = serde_json::from_value::<PlanGeneratorAgentInput>(context.into()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("unknown variant `unknown_agent`"),
        "{error}"
    );
}

#[test]
fn plan_generator_output_types_an_answer() {
    use plan_output::{PlanGeneratorAgentOutput, PlanGeneratorAgentOutputStatus};
    let answer = json!({
        "plan_file_path": "plans/login_form_automation.md",
        "status": "partial",
        "agent_response_content": "Two steps lack selectors",
    });
    let output: PlanGeneratorAgentOutput = serde_json::from_value(answer.clone()).unwrap();
    assert_eq!(output.status, PlanGeneratorAgentOutputStatus::Partial);
    assert_eq!(output.status.to_string(), "partial");
    assert_eq!(
        output.plan_file_path.as_str(),
        "plans/login_form_automation.md"
    );
    assert_eq!(serde_json::to_value(&output).unwrap(), answer);
    // `additionalProperties: false`
    let mut extra = answer;
    extra["confidence"] = json!(0.9);
    let error = serde_json::from_value::<PlanGeneratorAgentOutput>(extra).unwrap_err();
    assert!(
        error.to_string().starts_with("unknown field `confidence`"),
        "{error}"
    );
}

#[test]
fn kitchen_sink_reads_tagged_unions_defaults_and_renames() {
    use kitchen_sink::{KitchenSink, KitchenSinkType, Mode, Step};
    let value = json!({
        "type": "quick",
        "mode": "fast",
        "steps": [{"kind": "visit", "url": "https://a.example"}, {"kind": "click", "selector": "#go"}],
        "run-id": "run-7",
        "labels": {"team": "crawl"},
        "note": null,
    });
    let sink: KitchenSink = serde_json::from_value(value).unwrap();
    assert_eq!(sink.type_, KitchenSinkType::Quick);
    assert_eq!(sink.mode, Mode::Fast);
    assert_eq!(sink.retries, 3, "the schema's default");
    assert_eq!(sink.run_id.as_deref().map(String::as_str), Some("run-7"));
    assert_eq!(sink.labels["team"], "crawl");
    assert_eq!(sink.note, None);
    assert!(sink.metadata.is_empty());
    match &sink.steps[..] {
        [Step::Visit { url }, Step::Click { selector }] => {
            assert_eq!(url, "https://a.example");
            assert_eq!(selector.as_str(), "#go");
        }
        other => panic!("unexpected steps: {other:?}"),
    }
}

#[test]
fn kitchen_sink_rejects_what_the_schema_rejects() {
    use kitchen_sink::KitchenSink;
    let with = |key: &str, value: serde_json::Value| {
        let mut sink =
            json!({"type": "full", "mode": "careful", "steps": [{"kind": "visit", "url": "u"}]});
        sink[key] = value;
        serde_json::from_value::<KitchenSink>(sink)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(with("run-id", json!("run-8")), Ok(()));
    let cases = [
        (
            "run-id",
            json!("Not Kebab"),
            "doesn't match pattern \"^[a-z0-9-]+$\"",
        ),
        (
            "steps",
            json!([{"kind": "click", "selector": ""}]),
            "shorter than 1 characters",
        ),
        ("steps", json!([{"kind": "jump"}]), "unknown variant `jump`"),
        ("mode", json!("reckless"), "unknown variant `reckless`"),
        ("extra", json!(1), "unknown field `extra`"),
    ];
    for (key, bad, expected) in cases {
        let error = with(key, bad).unwrap_err();
        assert!(error.starts_with(expected), "{key}: {error}");
    }
}
