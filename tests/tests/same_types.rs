//! The derive and the build script generate the same types from the same schema: the plan
//! generator through `#[derive(Agent)]` here, and through `agent_codegen::Builder` in
//! agent-examples' build script, type the same data the same way, and the two front ends
//! emit the same code.

use agent_core::AgentInput;
use std::path::Path;

/// Generates a crawl plan from the sub-agents' collected information
#[derive(agent_core::Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json",
    user_prompt = "agents/plan_generator_user.md"
)]
pub struct PlanGeneratorAgent;

use agent_examples::agents::{PlanGeneratorAgent as BuiltAgent, plan_generator_agent as built};

const KWARGS: &str = include_str!("../fixtures/plan_generator/kwargs.json");

#[test]
fn both_front_ends_type_the_fixture_alike() {
    let call = agent_core::kwargs::ToolCall::from_json_str(KWARGS).unwrap();
    let derived = plan_generator_agent::PlanGeneratorAgentInput::from_call(&call).unwrap();
    let generated = built::PlanGeneratorAgentInput::from_call(&call).unwrap();
    assert_eq!(format!("{derived:#?}"), format!("{generated:#?}"));
    let derived = serde_json::to_value(&derived).unwrap();
    assert_eq!(derived, serde_json::to_value(&generated).unwrap());
    assert_eq!(derived, *call.context());
}

#[test]
fn both_front_ends_type_an_answer_alike() {
    let answer = serde_json::json!({
        "plan_file_path": "plans/login_form_automation.md",
        "status": "success",
        "agent_response_content": "Four steps, all selectors verified",
    });
    let derived = agent_core::agent::check_output::<PlanGeneratorAgent>(&answer).unwrap();
    let generated = agent_core::agent::check_output::<BuiltAgent>(&answer).unwrap();
    assert_eq!(format!("{derived:#?}"), format!("{generated:#?}"));
    assert_eq!(
        serde_json::to_value(&derived).unwrap(),
        serde_json::to_value(&generated).unwrap()
    );
}

#[test]
fn both_front_ends_reject_alike() {
    let kwargs = r#"{"task": "Generate plan", "target_url": "", "task_name": "x"}"#;
    let derived = agent_core::agent::check_call::<PlanGeneratorAgent>(kwargs, &Default::default());
    let generated = agent_core::agent::check_call::<BuiltAgent>(kwargs, &Default::default());
    assert_eq!(
        derived.unwrap_err().to_json(),
        generated.unwrap_err().to_json()
    );
}

/// The front ends' output, item by item: the contract module and the `Agent` impl. Only the
/// schema constants differ (the derive embeds the file with `include_str!`, so editing it
/// rebuilds; the build script embeds the text and tracks the file with `rerun-if-changed`),
/// and the module's doc comment, which names the schema as each front end was given it.
#[test]
fn both_front_ends_emit_the_same_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let derive: syn::DeriveInput = syn::parse_quote! {
        /// Generates a crawl plan from the sub-agents' collected information
        #[agent(
            name = "plan_generator_agent",
            input = "../schemas/plan_generator_agent/input.schema.json",
            output = "../schemas/plan_generator_agent/output.schema.json",
            user_prompt = "agents/plan_generator_user.md"
        )]
        pub struct PlanGeneratorAgent;
    };
    let derived: syn::File = syn::parse2(agent_codegen::derive::derive_agent(&derive)).unwrap();
    let built = agent_codegen::Builder::new(root.join("../schemas"))
        .generate()
        .unwrap();
    let built: syn::File = syn::parse_str(&built).unwrap();

    let module = |file: &syn::File| {
        let module = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Mod(m) if m.ident == "plan_generator_agent" => Some(m.clone()),
                _ => None,
            })
            .expect("a `plan_generator_agent` module");
        normalized(module)
    };
    let derived_module = module(&derived);
    assert!(derived_module.contains("pub struct PlanGeneratorAgentInput {"));
    assert!(derived_module.contains("pub struct PlanGeneratorAgentOutput {"));
    assert_eq!(derived_module, module(&built));

    let agent_impl = |file: &syn::File| {
        file.items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Const(c) => Some(quote::quote!(#c)),
                _ => None,
            })
            .map(|tokens| agent_codegen::pretty(&tokens))
            .find(|text| text.contains("Agent for PlanGeneratorAgent"))
            .expect("the `Agent` impl")
    };
    let derived_impl = agent_impl(&derived);
    assert!(derived_impl.contains("struct UserPrompt<'a>"));
    assert_eq!(derived_impl, agent_impl(&built));
}

/// The module, pretty-printed, with its doc comment and schema constants' values blanked.
fn normalized(mut module: syn::ItemMod) -> String {
    module.attrs.retain(|a| !a.path().is_ident("doc"));
    for item in &mut module.content.as_mut().expect("an inline module").1 {
        if let syn::Item::Const(c) = item
            && c.ident.to_string().ends_with("_SCHEMA")
        {
            *c.expr = syn::parse_quote!("<schema>");
        }
    }
    agent_codegen::pretty(&quote::quote!(#module))
}
