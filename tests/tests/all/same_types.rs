//! The derive and the build script generate the same types from the same schema: the plan
//! generator through `#[derive(Agent)]` here, and through `agent_contracts_codegen::Builder` in
//! agent-examples' build script, type the same data the same way, and the two front ends
//! emit the same code.

use agent_contracts::AgentInput;
use std::path::Path;

/// Generates a crawl plan from the sub-agents' collected information
#[derive(agent_contracts::Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json",
    user_prompt = "agents/plan_generator_user.md"
)]
pub struct PlanGeneratorAgent;

use agent_examples::agents::{PlanGeneratorAgent as BuiltAgent, plan_generator_agent as built};

const KWARGS: &str = include_str!("../../fixtures/plan_generator/kwargs.json");

#[test]
fn both_front_ends_type_the_fixture_alike() {
    let call = agent_contracts::contract::ToolCall::from_json_str(
        KWARGS,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let derived = plan_generator_agent::PlanGeneratorAgentInput::from_call(
        &call,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let generated =
        built::PlanGeneratorAgentInput::from_call(&call, &agent_contracts::Limits::default())
            .unwrap();
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
    let derived = agent_contracts::contract::check_output::<PlanGeneratorAgent>(
        &answer,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    let generated = agent_contracts::contract::check_output::<BuiltAgent>(
        &answer,
        &agent_contracts::Limits::default(),
    )
    .unwrap();
    assert_eq!(format!("{derived:#?}"), format!("{generated:#?}"));
    assert_eq!(
        serde_json::to_value(&derived).unwrap(),
        serde_json::to_value(&generated).unwrap()
    );
}

#[test]
fn both_front_ends_reject_alike() {
    let kwargs = r#"{"task": "Generate plan", "target_url": "", "task_name": "x"}"#;
    let derived =
        agent_contracts::contract::check_call::<PlanGeneratorAgent>(kwargs, &Default::default());
    let generated =
        agent_contracts::contract::check_call::<BuiltAgent>(kwargs, &Default::default());
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
    let derived: syn::File =
        syn::parse2(agent_contracts_codegen::derive::derive_agent(&derive)).unwrap();
    let built = agent_contracts_codegen::Builder::new(root.join("../schemas"))
        .generate()
        .unwrap();
    let built: syn::File = syn::parse_str(&built).unwrap();

    let module = |file: &syn::File| {
        file.items
            .iter()
            .find_map(|item| match item {
                syn::Item::Mod(m) if m.ident == "plan_generator_agent" => Some(m.clone()),
                _ => None,
            })
            .expect("a `plan_generator_agent` module")
    };
    let derived_module = module(&derived);
    let shown = normalized(derived_module.clone());
    assert!(shown.contains("pub struct PlanGeneratorAgentInput {"));
    assert!(shown.contains("pub struct PlanGeneratorAgentOutput {"));
    // The build script generates each agent once and shares the producers' output types the
    // plan generator's contract refers to (`pub use` of the sibling module's type); the derive
    // keeps its own copies. Apart from those, the modules are the same.
    let built_module = module(&built);
    let shared = shared_types(&built_module);
    assert_eq!(
        shared,
        [
            "AccessibilityAgentOutput",
            "AccessibilityAgentOutputComplianceLevel",
            "DiscoveryAgentOutput",
            "SelectorAgentOutput"
        ]
    );
    assert_eq!(
        without_types(&derived_module, &shared),
        without_types(&built_module, &shared)
    );

    let agent_impl = |file: &syn::File| {
        file.items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Const(c) => Some(quote::quote!(#c)),
                _ => None,
            })
            .map(|tokens| agent_contracts_codegen::pretty(&tokens))
            .find(|text| text.contains("Agent for PlanGeneratorAgent"))
            .expect("the `Agent` impl")
    };
    let derived_impl = agent_impl(&derived);
    assert!(derived_impl.contains("struct UserPrompt<'a>"));
    assert_eq!(derived_impl, agent_impl(&built));
}

/// The names a module re-exports from a sibling agent's module (`pub use super::super::...`).
fn shared_types(module: &syn::ItemMod) -> Vec<String> {
    let mut names = Vec::new();
    for item in &module.content.as_ref().expect("an inline module").1 {
        match item {
            syn::Item::Mod(m) => names.extend(shared_types(m)),
            syn::Item::Use(u) => {
                let text = quote::quote!(#u).to_string();
                if text.contains("super :: super") {
                    names.extend(use_names(&u.tree));
                }
            }
            _ => {}
        }
    }
    names.sort();
    names
}

fn use_names(tree: &syn::UseTree) -> Vec<String> {
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree),
        syn::UseTree::Name(n) => vec![n.ident.to_string()],
        syn::UseTree::Rename(r) => vec![r.rename.to_string()],
        syn::UseTree::Group(g) => g.items.iter().flat_map(use_names).collect(),
        syn::UseTree::Glob(_) => Vec::new(),
    }
}

/// [`normalized`] without the types named `names` (their items, impls and re-exports).
fn without_types(module: &syn::ItemMod, names: &[String]) -> String {
    fn strip(module: &mut syn::ItemMod, names: &[String]) {
        let items = &mut module.content.as_mut().expect("an inline module").1;
        items.retain(|item| {
            let named = |ident: &syn::Ident| names.iter().any(|n| ident == n);
            match item {
                syn::Item::Struct(s) => !named(&s.ident),
                syn::Item::Enum(e) => !named(&e.ident),
                syn::Item::Impl(i) => match &*i.self_ty {
                    syn::Type::Path(p) => !p.path.segments.last().is_some_and(|s| named(&s.ident)),
                    _ => true,
                },
                syn::Item::Use(u) => !quote::quote!(#u).to_string().contains("super :: super"),
                _ => true,
            }
        });
        for item in items.iter_mut() {
            if let syn::Item::Mod(m) = item {
                strip(m, names);
            }
        }
    }
    let mut module = module.clone();
    strip(&mut module, names);
    normalized(module)
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
    agent_contracts_codegen::pretty(&quote::quote!(#module))
}
