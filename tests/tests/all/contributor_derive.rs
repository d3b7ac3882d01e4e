//! `#[derive(PromptContributor)]`: a contributor whose part is an askama template over the
//! struct's fields and the call's `PromptContext`.

use agent_contracts::PromptContributor;
use agent_contracts::prompt::PreviousAttempt;
use agent_contracts::transcript::ContextId;
use agent_contracts::{prompt::ContributorRegistry, prompt::PromptContext};

#[derive(PromptContributor)]
#[contributor(
    template = "contributors/style.md",
    name = "style",
    priority = 5,
    agents = ["discovery_agent", "selector_agent"]
)]
struct Style {
    tone: &'static str,
}

/// Says which attempt this is; adds nothing on a first attempt.
#[derive(PromptContributor)]
#[contributor(template = "contributors/attempt.md", priority = 1)]
struct Attempt;

/// The shipped episodic-memory text, through the derive.
#[derive(PromptContributor)]
#[contributor(
    template = "contributors/episodic_memory.md",
    name = "episodic_memory",
    priority = 50
)]
struct EpisodicMemory;

fn id(agent: &str) -> ContextId {
    format!("run-1/{agent}/1/2026-01-19T10:15:00.123Z")
        .parse()
        .unwrap()
}

#[test]
fn the_template_sees_fields_and_context_and_the_attribute_sets_the_rest() {
    let style = Style { tone: "dry" };
    assert_eq!(style.name(), "style");
    assert_eq!(style.priority(), 5);
    let id = id("discovery_agent");
    let registry = ContributorRegistry::empty().with(style).with(Attempt);
    assert_eq!(
        registry
            .assemble(&PromptContext::new("discovery_agent", &id))
            .unwrap(),
        "Write in a dry tone, `discovery_agent`."
    );
    // Not listed: the style part does not apply, and a first attempt adds nothing.
    let other = self::id("plan_generator_agent");
    assert_eq!(
        registry
            .assemble(&PromptContext::new("plan_generator_agent", &other))
            .unwrap(),
        ""
    );
}

#[test]
fn a_rerun_changes_the_rendered_part() {
    let id = id("selector_agent");
    let previous = PreviousAttempt::new(id.clone(), "{}", 1);
    let registry = ContributorRegistry::empty()
        .with(Style { tone: "plain" })
        .with(Attempt);
    let ctx = {
        let mut value = PromptContext::new("selector_agent", &id);
        value.previous = Some(&previous);
        value
    };
    assert_eq!(
        registry.assemble(&ctx).unwrap(),
        "This is attempt 2.\n\nWrite in a plain tone, `selector_agent`."
    );
}

#[test]
fn the_derived_episodic_memory_matches_the_shipped_one() {
    let id = id("discovery_agent");
    let ctx = PromptContext::new("discovery_agent", &id);
    let derived = EpisodicMemory.contribute(&ctx).unwrap().unwrap();
    let shipped = agent_contracts::prompt::EpisodicMemoryContributor
        .contribute(&ctx)
        .unwrap()
        .unwrap();
    assert_eq!(derived, shipped);
    assert!(derived.starts_with("## Episodic Memory Tool\n"));
}
