//! The plan generator through `#[derive(Agent)]`: kwargs in, golden prompt out; and the
//! derive's typed input, output and tool definition.

use agent_contracts::{Agent, DynAgent};
use agent_tests::{DiscoveryAgent, GOLDEN as EXPECTED, KWARGS, PlanGeneratorAgent};

#[test]
fn derive_renders_the_golden_prompt() {
    let prepared = PlanGeneratorAgent
        .prepare(KWARGS, &Default::default())
        .unwrap();
    assert_eq!(prepared.user_prompt, EXPECTED);
}

#[test]
fn typed_input_has_the_contract_fields() {
    let checked =
        agent_contracts::contract::check_call::<PlanGeneratorAgent>(KWARGS, &Default::default())
            .unwrap();
    assert_eq!(
        checked.input.target_url.to_string(),
        "https://myapp.com/login"
    );
    assert_eq!(checked.input.collected_information.len(), 3);
    let first = &checked.input.collected_information[0];
    assert_eq!(first.agent_name.to_string(), "discovery_agent");
}

#[test]
fn default_prompt_without_user_prompt() {
    let kwargs = r#"{"task": "Scan it", "target_url": "https://myapp.com/login"}"#;
    let prepared = DiscoveryAgent.prepare(kwargs, &Default::default()).unwrap();
    assert_eq!(
        prepared.user_prompt,
        "Scan it\n\n## Context\n```json\n{\n  \"target_url\": \"https://myapp.com/login\"\n}\n```"
    );
    assert_eq!(<DiscoveryAgent as Agent>::NAME, "discovery_agent");
    assert_eq!(
        <DiscoveryAgent as Agent>::DESCRIPTION,
        "Discovers the interactive elements and page structure of a target page"
    );
}

#[test]
fn the_tool_definition_has_task_and_the_contract_fields_flat() {
    let def = PlanGeneratorAgent.tool_definition();
    assert_eq!(def.name, "run_plan_generator_agent");
    let params = &def.parameters;
    // `target_url` only a person can give: a property, never required of the model.
    assert_eq!(
        params["required"],
        serde_json::json!(["task", "task_name", "collected_information"])
    );
    let keys: Vec<&String> = params["properties"].as_object().unwrap().keys().collect();
    // A `Value` holds the properties sorted.
    assert_eq!(
        keys,
        ["collected_information", "target_url", "task", "task_name",]
    );
    assert!(params["$defs"]["agentOutput"].is_object());
    assert_eq!(
        def.description,
        "Generates a crawl plan from the sub-agents' collected information\n\nRequired inputs (pass them as top-level arguments): task_name, collected_information\n\nOnly a person can give (pass them only as your user wrote them; left out, the user is asked): target_url"
    );
}

/// Echoes its input.
#[derive(Agent)]
#[agent(
    input = "fixtures/input_property.schema.json",
    user_prompt = "input_property.md"
)]
pub struct EchoAgent;

#[test]
fn a_contract_property_named_input_is_a_template_variable() {
    let prepared = EchoAgent
        .prepare(r#"{"task": "Echo", "input": "hello"}"#, &Default::default())
        .unwrap();
    assert_eq!(prepared.user_prompt, "Echo: hello");
}
