//! Generated code names std items by absolute paths: a module that shadows the prelude's
//! `Result`, `Ok`, `Err`, `Option`, `Some` and `None` still derives, and so does a module
//! without the implicit prelude.

mod shadowing {
    #![allow(
        dead_code,
        non_snake_case,
        reason = "the point is to shadow prelude names"
    )]

    struct Result;
    struct Option;
    struct String;
    struct Vec;
    struct Box;
    fn Ok() {}
    fn Err() {}
    fn Some() {}
    fn None() {}
    trait Clone {}
    trait Default {}
    trait Deserialize {}
    trait Serialize {}

    /// Generates a crawl plan from the sub-agents' collected information
    #[derive(::agent_contracts::Agent)]
    #[agent(
        name = "plan_generator_agent",
        input = "../schemas/plan_generator_agent/input.schema.json",
        output = "../schemas/plan_generator_agent/output.schema.json",
        user_prompt = "agents/plan_generator_user.md"
    )]
    pub struct PlanGeneratorAgent;

    /// A code-first contract.
    #[derive(::serde::Deserialize, ::schemars::JsonSchema, ::agent_contracts::AgentInput)]
    pub struct Search {
        pub query: ::std::string::String,
    }

    /// A prompt contributor.
    #[derive(::agent_contracts::PromptContributor)]
    #[contributor(template = "contributors/style.md", name = "style")]
    pub struct Style {
        pub tone: &'static str,
    }

    /// A contract that refers to two sibling contracts, bundled by the derive.
    #[derive(::agent_contracts::Agent)]
    #[agent(
        name = "catering_agent",
        input = "../schemas/catering_agent/input.schema.json",
        output = "../schemas/catering_agent/output.schema.json"
    )]
    pub struct CateringAgent;

    /// A declared workflow over the build script's agents.
    #[derive(::agent_contracts::Workflow)]
    #[workflow(
        schemas = "../schemas",
        agents = "::agent_examples::agents",
        steps = ["venue_agent", "budget_agent", "catering_agent"]
    )]
    pub struct Planning;
}

#[path = "hygiene/no_prelude.rs"]
mod no_prelude;

const KWARGS: &str = include_str!("../../fixtures/plan_generator/kwargs.json");
const EXPECTED: &str = include_str!("../../fixtures/plan_generator/expected_user_prompt.md");

#[test]
fn shadowed_prelude_names_still_derive() {
    use agent_contracts::DynAgent;
    let prepared = shadowing::PlanGeneratorAgent
        .prepare(KWARGS, &Default::default())
        .unwrap();
    assert_eq!(prepared.user_prompt, EXPECTED);
    let call = agent_contracts::contract::ToolCall::from_json_str(
        r#"{"task": "x", "query": "rust"}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let search = <shadowing::Search as agent_contracts::AgentInput>::from_call(
        &call,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    assert_eq!(search.query, "rust");
}

#[test]
fn no_implicit_prelude_still_derives() {
    use agent_contracts::DynAgent;
    let prepared = no_prelude::PlanGeneratorAgent
        .prepare(KWARGS, &Default::default())
        .unwrap();
    assert_eq!(prepared.user_prompt, EXPECTED);
    let call = agent_contracts::contract::ToolCall::from_json_str(
        r#"{"task": "x", "query": "rust"}"#,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let search = <no_prelude::Search as agent_contracts::AgentInput>::from_call(
        &call,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    assert_eq!(search.query, "rust");
}

/// The `Style` contributor of each hygiene module renders the same text.
fn style_renders(style: &dyn agent_contracts::PromptContributor) {
    let id: agent_contracts::transcript::ContextId =
        "run-1/selector_agent/1/2026-01-19T10:15:00.123Z"
            .parse()
            .unwrap();
    let ctx = agent_contracts::prompt::PromptContext::new("selector_agent", &id);
    assert_eq!(style.name(), "style");
    assert_eq!(
        style.contribute(&ctx).unwrap().as_deref(),
        Some("Write in a plain tone, `selector_agent`.")
    );
}

#[test]
fn prompt_contributors_derive_without_the_prelude() {
    style_renders(&shadowing::Style { tone: "plain" });
    style_renders(&no_prelude::Style { tone: "plain" });
}

const CATERING: &str = r#"{"task": "Plan the catering",
    "venue_agent_output": {"venue_name": "Loft", "capacity": 60, "cost_usd": 1500},
    "budget_agent_output": {"total_budget_usd": 5000, "allocations": {"catering": 2000}}}"#;

/// The derive bundles the sibling contracts the catering contract names, as the build script
/// does: both check a call alike.
fn catering_checks<A: agent_contracts::Agent>() {
    use agent_contracts::DynAgent as _;
    let built = agent_examples::agents::CateringAgent;
    let ok = agent_contracts::contract::check_call::<A>(CATERING, &Default::default());
    assert!(ok.is_ok());
    let broken = CATERING.replace(
        r#""allocations": {"catering": 2000}"#,
        r#""allocations": []"#,
    );
    let Err(derived) = agent_contracts::contract::check_call::<A>(&broken, &Default::default())
    else {
        panic!("an array of allocations passed");
    };
    let generated = built.validate(&broken, &Default::default()).unwrap_err();
    assert_eq!(derived.to_json(), generated.to_json());
}

#[test]
fn bundled_contracts_and_workflows_derive_without_the_prelude() {
    catering_checks::<shadowing::CateringAgent>();
    catering_checks::<no_prelude::CateringAgent>();
    for workflow in [
        shadowing::Planning::workflow(["a", "b", "c"]),
        no_prelude::Planning::workflow(["a", "b", "c"]),
    ] {
        workflow.check().unwrap();
    }
}

/// A contract whose definitions include one named `default`: its type is `Default`, which the
/// generated code must not take for the prelude's trait.
mod definition_named_default {
    /// Reads a config whose mode is a definition named `default`.
    #[derive(::agent_contracts::Agent)]
    #[agent(input = "ui/schemas/default_definition.schema.json")]
    pub struct ConfigReader;

    #[test]
    fn its_defaults_are_filled() {
        let agent: &dyn ::agent_contracts::DynAgent = &ConfigReader;
        assert_eq!(agent.name(), "config_reader");
        let input: config_reader::ConfigReaderInput =
            ::serde_json::from_str(r#"{"mode": {}}"#).expect("a config");
        assert_eq!(input.count, 3);
        assert_eq!(input.mode.unwrap().level, 1);
        assert!(input.tags.is_empty());
    }
}

/// Integers written as integral floats (`2.0`), which the validator takes as integers, fill
/// every integer the typed input holds: a field, a definition's newtype, a union, an item, a
/// map value.
mod integral_floats {
    /// Reads integers.
    #[derive(::agent_contracts::Agent)]
    #[agent(input = "ui/schemas/integral_floats.schema.json")]
    pub struct Counter;

    #[test]
    fn integral_floats_fill_every_integer() {
        let agent: &dyn ::agent_contracts::DynAgent = &Counter;
        assert_eq!(agent.name(), "counter");
        let text = r#"{"service_id": 2.0, "plain": 3.0, "bounded": 4.0, "either": 5.0, "nullable": 6.0,
            "items": [{"n": 7.0}], "map": {"a": 8.0}, "ids": [9.0, 1e1]}"#;
        let input: counter::CounterInput = ::serde_json::from_str(text).expect("integers");
        let value = ::serde_json::to_value(&input).unwrap();
        assert_eq!(
            value,
            ::serde_json::json!({"service_id": 2, "plain": 3, "bounded": 4, "either": 5, "nullable": 6,
                "items": [{"n": 7}], "map": {"a": 8}, "ids": [9, 10]})
        );
    }
}
