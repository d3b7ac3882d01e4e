//! Derive macros of agent-contracts. Use them through `agent_contracts_runtime`, which re-exports them;
//! all the work happens in `agent-codegen`, shared with build scripts.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Typed input and output, a compile-time-checked prompt template and the `Agent` impl from
/// JSON Schema contracts.
///
/// ```ignore
/// /// Generates a crawl plan from the sub-agents' collected information
/// #[derive(agent_contracts_runtime::Agent)]
/// #[agent(
///     name = "plan_generator_agent",
///     input = "../schemas/plan_generator_agent/input.schema.json",
///     output = "../schemas/plan_generator_agent/output.schema.json",
///     user_prompt = "agents/plan_generator_user.md",
/// )]
/// pub struct PlanGeneratorAgent;
/// ```
///
/// Keys of `#[agent(...)]`, each a string literal, each at most once:
///
/// | key | default | meaning |
/// |---|---|---|
/// | `input` | required | the input contract's JSON Schema file, relative to the crate's `Cargo.toml` |
/// | `output` | none: the output is any JSON (`serde_json::Value`) | the output contract's schema file, relative to `Cargo.toml` |
/// | `name` | the struct's name in snake case (`PlanGeneratorAgent` is `plan_generator_agent`) | the agent's name; its tool is `run_<name>` and its generated module is `mod <name>` |
/// | `description` | the struct's doc comment | what the agent does, for the tool description and the system prompt |
/// | `user_prompt` | the default prompt: the task, then `## Context` with the context as fenced JSON | an askama template, found the askama way (`templates/`, or the folders an `askama.toml` names) |
/// | `crate` | `"::agent_contracts_runtime"` | the path generated code names the runtime by, for crates that re-export it |
///
/// The template sees `task` (the call's task, with block-opening lines escaped) and every
/// top-level field of the input contract by name; a name that is neither is a compile error
/// with the template's `path:line:col`. Schema files are tracked, so editing one rebuilds.
#[proc_macro_derive(Agent, attributes(agent))]
pub fn derive_agent(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_contracts_codegen::derive::derive_agent(&input).into()
}

/// The `AgentInput` impl of a struct that derives `serde::Deserialize` and
/// `schemars::JsonSchema`: its contract is the schema schemars derives (code first).
///
/// ```ignore
/// #[derive(serde::Deserialize, schemars::JsonSchema, agent_contracts_runtime::AgentInput)]
/// #[agent(name = "search_agent")]
/// struct SearchInput {
///     query: String,
/// }
/// ```
///
/// Keys of `#[agent(...)]`, each a string literal, each at most once:
///
/// | key | default | meaning |
/// |---|---|---|
/// | `name` | the struct's name in snake case | the contract's name, in its errors |
/// | `crate` | `"::agent_contracts_runtime"` | the path generated code names the runtime by |
///
/// A field named like a reserved tool-call key (`task`, `context`, `run_identifier`) is a
/// compile error: no call could provide it.
#[proc_macro_derive(AgentInput, attributes(agent))]
pub fn derive_agent_input(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_contracts_codegen::derive::derive_agent_input(&input).into()
}

/// A prompt contributor whose part of the system prompt is an askama template.
///
/// ```ignore
/// #[derive(agent_contracts_runtime::PromptContributor)]
/// #[contributor(template = "contributors/style.md", name = "style", priority = 5,
///               agents = ["discovery_agent"])]
/// struct Style {
///     tone: &'static str,
/// }
/// ```
///
/// Keys of `#[contributor(...)]`, each at most once:
///
/// | key | default | meaning |
/// |---|---|---|
/// | `template` | required | the askama template, found the askama way (`templates/`, or an `askama.toml`'s folders) |
/// | `name` | the struct's name in snake case | the contributor's unique name: it breaks priority ties and names it in errors |
/// | `priority` | `0` | an integer; lower parts come first in the system prompt |
/// | `agents` | every agent | a list of agent names the part is for |
/// | `crate` | `"::agent_contracts_runtime"` | the path generated code names the runtime by |
///
/// The template sees the struct's fields and `ctx`, the call's
/// `agent_contracts_runtime::prompt::PromptContext` (agent, context ID, upstream parts, previous
/// attempt, metadata).
#[proc_macro_derive(PromptContributor, attributes(contributor))]
pub fn derive_prompt_contributor(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_contracts_codegen::contributor::derive_prompt_contributor(&input).into()
}

/// A workflow declared at compile time: its steps are agent folders of a schemas folder,
/// and the crate does not compile unless every step gets the input its contract requires,
/// from the workflow's input contract or an earlier step's output (`<agent>_output`), in a
/// shape its contract accepts.
///
/// ```ignore
/// #[derive(agent_contracts_runtime::Workflow)]
/// #[workflow(
///     name = "event_planning",
///     schemas = "../schemas",
///     agents = "crate::agents",
///     steps = ["venue_agent", "budget_agent", "catering_agent", "logistics_agent"],
/// )]
/// pub struct EventPlanning;
///
/// let workflow = EventPlanning::workflow(["Find a venue", "Split the budget", "Plan the food", "Plan the day"]);
/// ```
///
/// Keys of `#[workflow(...)]`:
///
/// | key | default | meaning |
/// |---|---|---|
/// | `schemas` | required | the schemas folder (one folder per agent), relative to `Cargo.toml` |
/// | `steps` | required | the agent folders, in the order the steps run |
/// | `agents` | required | the module holding the agents' types (`VenueAgent` for `venue_agent`), as `agent_contracts_codegen::Builder` generates them |
/// | `input` | none: the run has no input | the run's input contract, relative to `Cargo.toml`; its properties are in every step's context |
/// | `name` | the struct's name in snake case | the workflow's name |
/// | `crate` | `"::agent_contracts_runtime"` | the path generated code names the runtime by |
/// | `approve` | none | steps whose every output a person approves, rejects (the run ends) or edits (checked against the step's output contract, which it must have) before the run goes on: `Workflow::approve` |
///
/// A field no earlier step provides, one only a later step provides, steps that need each
/// other's output, or a provided schema the step's contract refuses (types, required
/// properties, enums) is a compile error at the step's name. What the check cannot decide
/// is listed in `UNDECIDED`. The struct gets `NAME`, `STEPS`, `workflow(tasks)` and
/// `handoff::<Producer, Consumer>(workflow, validate)`, which compiles only for a pair whose
/// consumer reads the producer's output.
#[proc_macro_derive(Workflow, attributes(workflow))]
pub fn derive_workflow(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    agent_contracts_codegen::workflow::derive_workflow(&input).into()
}

/// `eval_tests!(Agent, "evals/agent.jsonl", model)`: one `#[test]` per case of the dataset, in
/// the module it is written in. `model` is a `Fn(&str, u32) -> CaseModel` (the case's name and
/// run); see `agent_contracts::eval`.
#[proc_macro]
pub fn eval_tests(input: TokenStream) -> TokenStream {
    agent_contracts_codegen::eval_tests::eval_tests(input.into()).into()
}
