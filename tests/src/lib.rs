//! Fixtures shared by the integration tests in `tests/`: the derived agents, the plan
//! generator's fixture texts, the retry error's keys, and a tiny executor.

use agent_contracts::Agent;
use std::future::Future;
use std::task::{Context, Poll, Waker};

/// Generates a crawl plan from the sub-agents' collected information
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json",
    user_prompt = "agents/plan_generator_user.md"
)]
pub struct PlanGeneratorAgent;

/// Discovers the interactive elements and page structure of a target page
#[derive(Agent)]
#[agent(
    name = "discovery_agent",
    input = "../schemas/discovery_agent/input.schema.json",
    output = "../schemas/discovery_agent/output.schema.json"
)]
pub struct DiscoveryAgent;

/// The plan generator's kwargs fixture (three sub-agents' collected information, passed flat).
pub const KWARGS: &str = include_str!("../fixtures/plan_generator/kwargs.json");

/// The user prompt those kwargs must render, byte for byte.
pub const GOLDEN: &str = include_str!("../fixtures/plan_generator/expected_user_prompt.md");

/// The keys of a retry error as a `serde_json::Value` (which sorts its keys): the eight a
/// caller acts on, and `errors`.
pub const RETRY_KEYS: [&str; 9] = [
    "error",
    "errors",
    "hint",
    "missing_fields",
    "path",
    "provided_fields",
    "required_fields",
    "success",
    "validation_message",
];

/// Runs a future that never waits on anything real (the scripted model answers at once).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::yield_now();
    }
}

/// The README's code, compiled and run as doc tests: paths in it are relative to this crate
/// (`../schemas/...`), whose `askama.toml` reads the top-level `templates/`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The guide's chapters (`guide/`), one item each so a failure names its chapter: their code
/// is compiled and run as doc tests on the same terms as the README's, and may use the
/// examples crate (a dev-dependency) for its generated agents and scripted models.
#[cfg(doctest)]
pub mod guide {
    #[doc = include_str!("../../guide/contracts.md")]
    pub struct Contracts;
    #[doc = include_str!("../../guide/build-script.md")]
    pub struct BuildScript;
    #[doc = include_str!("../../guide/runtime.md")]
    pub struct Runtime;
    #[doc = include_str!("../../guide/streaming.md")]
    pub struct Streaming;
    #[doc = include_str!("../../guide/workflows.md")]
    pub struct Workflows;
    #[doc = include_str!("../../guide/durable-runs.md")]
    pub struct DurableRuns;
    #[doc = include_str!("../../guide/providers.md")]
    pub struct Providers;
    #[doc = include_str!("../../guide/mcp.md")]
    pub struct Mcp;
    #[doc = include_str!("../../guide/observability.md")]
    pub struct Observability;
    #[doc = include_str!("../../guide/cli.md")]
    pub struct Cli;
    #[doc = include_str!("../../guide/untrusted-input.md")]
    pub struct UntrustedInput;
    #[doc = include_str!("../../guide/evals.md")]
    pub struct Evals;
    #[doc = include_str!("../../guide/inspector.md")]
    pub struct Inspector;
}
