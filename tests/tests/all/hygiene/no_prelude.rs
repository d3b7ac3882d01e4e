//! Derives in a module without the implicit prelude (its own file, because
//! `#![no_implicit_prelude]` is an inner attribute of the module it applies to).

#![no_implicit_prelude]

/// Generates a crawl plan from the sub-agents' collected information
#[derive(::agent_contracts::Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json",
    user_prompt = "agents/plan_generator_user.md"
)]
pub struct PlanGeneratorAgent;

/// A code-first contract. Its schema is written by hand: schemars' derive expands serde_json's
/// `json!`, which calls `.into()` and so needs the prelude (not this crate's concern).
#[derive(::serde::Deserialize, ::agent_contracts::AgentInput)]
pub struct Search {
    pub query: ::std::string::String,
}

impl ::schemars::JsonSchema for Search {
    fn schema_name() -> ::std::borrow::Cow<'static, str> {
        ::std::borrow::Cow::Borrowed("Search")
    }

    fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
        let schema = r#"{
            "type": "object",
            "required": ["query"],
            "properties": {"query": {"type": "string"}}
        }"#;
        ::serde_json::from_str(schema).expect("the schema is valid JSON")
    }
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
