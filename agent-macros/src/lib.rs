//! Derive macros of agent-contracts. Use them through `agent_core`, which re-exports them;
//! all the work happens in `agent-codegen`, shared with build scripts.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Typed input and output, a compile-time-checked prompt template and the `Agent` impl from
/// JSON Schema contracts. See the `agent_core` docs.
#[proc_macro_derive(Agent, attributes(agent))]
pub fn derive_agent(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_codegen::derive::derive_agent(&input).into()
}

/// The `AgentInput` impl of a struct that derives `serde::Deserialize` and
/// `schemars::JsonSchema`: its contract is the schema schemars derives.
#[proc_macro_derive(AgentInput, attributes(agent))]
pub fn derive_agent_input(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_codegen::derive::derive_agent_input(&input).into()
}

/// A prompt contributor whose part is an askama template:
/// `#[contributor(template = "...", name = "...", priority = N, agents = ["..."])]`.
/// The template sees the struct's fields and `ctx` (the call's `PromptContext`).
#[proc_macro_derive(PromptContributor, attributes(contributor))]
pub fn derive_prompt_contributor(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_codegen::contributor::derive_prompt_contributor(&input).into()
}
