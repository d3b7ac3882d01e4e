//! Prompt contributors: order (priority, then name), filtering by agent, contributors that
//! decline or fail, the golden system prompt, and the runtime assembling sub-agent prompts.

use agent_contracts::__private::askama::Template;
use agent_contracts::prompt::UpstreamContext;
use agent_contracts::transcript::ContextId;
use agent_contracts::{DynAgent, Error, Message, Runtime, ScriptedModel};
use agent_contracts::{
    PromptContributor, prompt::AssemblyError, prompt::ContextIdContributor,
    prompt::ContributorError, prompt::ContributorRegistry, prompt::EpisodicMemoryContributor,
    prompt::PromptContext,
};
use agent_tests::{DiscoveryAgent, block_on};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;

/// The context of a call of the discovery agent, a contract agent.
fn discovery(id: &ContextId) -> PromptContext<'_> {
    {
        let mut value = PromptContext::new("discovery_agent", id);
        value.definition = Some(&DiscoveryAgent);
        value
    }
}

/// A template built per call by `build` (which may decline), as a user's contributor renders one.
struct Templated<F> {
    name: &'static str,
    priority: i32,
    build: F,
}

impl<T: Template, F: Fn(&PromptContext<'_>) -> Option<T> + Send + Sync> PromptContributor
    for Templated<F>
{
    fn name(&self) -> &str {
        self.name
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        match (self.build)(ctx) {
            Some(template) => Ok(Some(template.render()?)),
            None => Ok(None),
        }
    }
}

/// A contributor with fixed answers.
struct Fixed {
    name: &'static str,
    priority: i32,
    agents: Option<&'static [&'static str]>,
    text: Option<&'static str>,
}

fn fixed(name: &'static str, priority: i32) -> Fixed {
    Fixed {
        name,
        priority,
        agents: None,
        text: Some(name),
    }
}

impl PromptContributor for Fixed {
    fn name(&self) -> &str {
        self.name
    }
    fn applies_to(&self, agent: &str) -> bool {
        self.agents.is_none_or(|agents| agents.contains(&agent))
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn contribute(&self, _: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Ok(self.text.map(str::to_owned))
    }
}

/// A contributor that always fails.
struct Broken;

impl PromptContributor for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn priority(&self) -> i32 {
        1
    }
    fn contribute(&self, _: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Err(ContributorError::Other("the memory service is down".into()))
    }
}

const ID: &str = "run-1/discovery_agent/3/2026-01-19T10:15:00.123Z";

fn id() -> ContextId {
    ID.parse().unwrap()
}

fn assemble(registry: &ContributorRegistry, agent: &str) -> String {
    let id = id();
    registry.assemble(&PromptContext::new(agent, &id)).unwrap()
}

// ---- order and filtering ------------------------------------------------------------------

#[test]
fn parts_come_in_priority_order_then_by_name() {
    let registry = ContributorRegistry::empty()
        .with(fixed("b", 10))
        .with(fixed("late", 1000))
        .with(fixed("a", 10))
        .with(fixed("c", 5))
        .with(fixed("first", -1));
    assert_eq!(assemble(&registry, "x"), "first\n\nc\n\na\n\nb\n\nlate");
    // Registration order never matters.
    let reversed = ContributorRegistry::empty()
        .with(fixed("first", -1))
        .with(fixed("c", 5))
        .with(fixed("a", 10))
        .with(fixed("late", 1000))
        .with(fixed("b", 10));
    assert_eq!(assemble(&reversed, "x"), assemble(&registry, "x"));
}

#[test]
fn contributors_apply_only_to_their_agents() {
    let registry = ContributorRegistry::empty()
        .with(fixed("everyone", 0))
        .with(Fixed {
            agents: Some(&["planner", "reviewer"]),
            ..fixed("planning", 1)
        })
        .with(Fixed {
            agents: Some(&[]),
            ..fixed("nobody", 2)
        })
        .with(EpisodicMemoryContributor.only_for(["reviewer"]));
    assert_eq!(assemble(&registry, "planner"), "everyone\n\nplanning");
    assert_eq!(assemble(&registry, "writer"), "everyone");
    let reviewer = assemble(&registry, "reviewer");
    assert!(
        reviewer.starts_with("everyone\n\nplanning\n\n## Episodic Memory Tool\n"),
        "{reviewer}"
    );
    // A name must match whole: `a` is not `ab`.
    let only_a = ContributorRegistry::empty().with(ContextIdContributor.only_for(["a"]));
    assert_eq!(assemble(&only_a, "ab"), "");
    assert_ne!(assemble(&only_a, "a"), "");
}

#[test]
fn a_contributor_may_decline() {
    let registry = ContributorRegistry::empty()
        .with(fixed("a", 0))
        .with(Fixed {
            text: None,
            ..fixed("declines", 1)
        })
        .with(Fixed {
            text: Some("  \n\n"),
            ..fixed("blank", 2)
        })
        .with(Fixed {
            text: Some("trailing\n\n"),
            ..fixed("trailing", 3)
        })
        .with(fixed("z", 4));
    assert_eq!(assemble(&registry, "x"), "a\n\ntrailing\n\nz");
    assert_eq!(assemble(&ContributorRegistry::empty(), "x"), "");
}

#[test]
fn a_name_is_registered_once() {
    let mut registry = ContributorRegistry::empty()
        .with(fixed("a", 0))
        .with(fixed("b", 1))
        .with(Fixed {
            text: Some("new a"),
            ..fixed("a", 2)
        });
    // The new `a` replaced the old one: its priority (2) puts it after `b`.
    assert_eq!(assemble(&registry, "x"), "b\n\nnew a");
    assert!(registry.remove("b").is_some());
    assert!(registry.remove("b").is_none());
    assert_eq!(assemble(&registry, "x"), "new a");
}

// ---- failures -----------------------------------------------------------------------------

/// A value whose `Display` fails, so the template that shows it cannot render.
struct Unprintable;

impl fmt::Display for Unprintable {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Err(fmt::Error)
    }
}

#[derive(Template)]
#[template(source = "Status: {{ status }}", ext = "txt", askama = agent_contracts::__private::askama)]
struct StatusPrompt {
    status: Unprintable,
}

#[test]
fn a_template_that_fails_to_render_names_its_contributor() {
    let registry = ContributorRegistry::default().with(Templated {
        name: "status",
        priority: 300,
        build: |_: &PromptContext<'_>| {
            Some(StatusPrompt {
                status: Unprintable,
            })
        },
    });
    let id = id();
    let error: AssemblyError = registry.assemble(&discovery(&id)).unwrap_err();
    assert_eq!(error.contributor, "status");
    assert_eq!(error.agent, "discovery_agent");
    assert!(matches!(error.source, ContributorError::Template(_)));
    let message = error.to_string();
    assert!(
        message.starts_with("prompt contributor `status` failed for agent `discovery_agent`: its template failed to render: "),
        "{message}"
    );
}

#[test]
fn any_failing_contributor_stops_the_assembly_and_is_named() {
    let registry = ContributorRegistry::empty()
        .with(fixed("a", 0))
        .with(Broken)
        .with(fixed("z", 9));
    let id = id();
    let error = registry
        .assemble(&PromptContext::new("x", &id))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "prompt contributor `broken` failed for agent `x`: the memory service is down"
    );
}

#[test]
fn the_runtime_reports_a_failing_contributor_before_asking_the_model() {
    let model =
        Arc::new(ScriptedModel::default().script("discovery_agent", [Message::assistant("{}")]));
    let runtime =
        Runtime::new(model.clone()).with_contributors(ContributorRegistry::default().with(Broken));

    let error = block_on(runtime.call_sub_agent(
        &DiscoveryAgent,
        r#"{"task": "Scan", "target_url": "https://a.example"}"#,
        Default::default(),
    ))
    .unwrap_err();
    let Error::Contributor(error) = &error else {
        panic!("expected a contributor error, got {error}");
    };
    assert_eq!(error.contributor, "broken");
    assert!(model.requests_of("discovery_agent").is_empty());
}

// ---- the golden prompt --------------------------------------------------------------------

fn upstream() -> UpstreamContext {
    let mut upstream = UpstreamContext::default();
    upstream
        .push(
            "delegation",
            "run-1/delegation/1/2026-01-19T10:14:58.001Z"
                .parse()
                .unwrap(),
            json!({"goal": "Scan the login page"}),
        )
        .push(
            "selector_agent",
            "run-1/selector_agent/2/2026-01-19T10:14:59.500Z"
                .parse()
                .unwrap(),
            json!({"strategy": "id-first"}),
        );
    upstream
}

#[test]
fn the_golden_system_prompt() {
    let registry = ContributorRegistry::default()
        .with(EpisodicMemoryContributor)
        .with(ContextIdContributor.only_for(["discovery_agent"]));
    let id = id();
    let upstream = upstream();
    let ctx = {
        let mut value = discovery(&id);
        value.upstream = Some(&upstream);
        value
    };
    assert_eq!(
        registry.assemble(&ctx).unwrap(),
        include_str!("../../fixtures/contributors/discovery_system_prompt.md")
    );
    // The registry's debug form lists each contributor's name and priority, as the module
    // documents them.
    assert_eq!(
        format!("{registry:?}"),
        r#"[("identity", 0), ("upstream", 200), ("output_contract", 1000), ("episodic_memory", 500), ("context_id", 100)]"#
    );
}

#[test]
fn the_episodic_memory_text_is_the_reference_text() {
    let text = EpisodicMemoryContributor
        .contribute(&PromptContext::new("x", &id()))
        .unwrap()
        .unwrap();
    assert!(text.starts_with(
        "## Episodic Memory Tool\n\nYou have access to episodic memory with three operations:\n\n### RETAIN - Store New Episodes\n"
    ));
    for line in [
        "### REFLECT - Build Connections (CRITICAL)\nREFLECT is essential for building lasting knowledge. Simply retaining is not enough.\n",
        "The reflect operation builds connections in the knowledge graph. \nWithout reflection, memories remain isolated and less useful.\n",
        "### RECALL - Retrieve Prior Knowledge\nUse RECALL at the start of new tasks to:\n",
    ] {
        assert!(text.contains(line), "{line}");
    }
    assert!(text.ends_with(
        "**Recommended Flow**: RECALL → Work → RETAIN key learnings → REFLECT on connections"
    ));
}

#[test]
fn the_standard_prompt_of_a_call_without_upstream_is_identity_then_output_contract() {
    let id = id();
    let ctx = discovery(&id);
    let standard = ContributorRegistry::default().assemble(&ctx).unwrap();
    let only = |name: &str| {
        let mut registry = ContributorRegistry::default();
        for other in ["identity", "upstream", "output_contract"] {
            if other != name {
                registry.remove(other);
            }
        }
        registry.assemble(&ctx).unwrap()
    };
    assert_eq!(
        standard,
        format!("{}\n\n{}", only("identity"), only("output_contract"))
    );
    assert!(only("output_contract").contains("\"page_title\""));
    assert!(standard.starts_with("You are the `discovery_agent` agent. Discovers the interactive"));
    // A plain loop agent gets nothing from the standard contributors.
    assert_eq!(assemble(&ContributorRegistry::default(), "main_agent"), "");
}

// ---- templates built per call -------------------------------------------------------------

#[derive(Template)]
#[template(source = "The user's locale is {{ locale }}.", ext = "txt", askama = agent_contracts::__private::askama)]
struct Locale {
    locale: String,
}

#[test]
fn a_template_can_be_built_from_the_call() {
    let contributor = Templated {
        name: "locale",
        priority: 50,
        build: |ctx: &PromptContext<'_>| {
            let locale = ctx.metadata.get("locale")?.as_str()?;
            Some(Locale {
                locale: locale.to_owned(),
            })
        },
    }
    .only_for(["writer"]);
    let registry = ContributorRegistry::empty().with(contributor);
    let id = id();
    let mut metadata = Map::new();
    metadata.insert("locale".into(), Value::from("fr-FR"));
    let mut ctx = PromptContext::new("writer", &id);
    ctx.metadata = metadata;
    assert_eq!(
        registry.assemble(&ctx).unwrap(),
        "The user's locale is fr-FR."
    );
    assert_eq!(
        registry
            .assemble(&PromptContext::new("writer", &id))
            .unwrap(),
        ""
    );
    assert_eq!(
        registry
            .assemble(&{
                let mut value = ctx;
                value.metadata = Map::new();
                value
            })
            .unwrap(),
        ""
    );
}

// ---- the runtime assembles prompts --------------------------------------------------------

#[test]
fn the_runtime_assembles_sub_agent_and_loop_prompts() {
    let page = r#"{"page_title": "A", "discovered_elements": []}"#;
    let model = Arc::new(
        ScriptedModel::default()
            .script(
                "main_agent",
                [
                    agent_contracts::model::tool_calls([(
                        "run_discovery_agent",
                        r#"{"task": "Scan", "target_url": "https://a.example"}"#,
                    )]),
                    Message::assistant("done"),
                ],
            )
            .script(
                "discovery_agent",
                [Message::assistant(page), Message::assistant(page)],
            ),
    );
    let registry = ContributorRegistry::default()
        .with(EpisodicMemoryContributor.only_for(["discovery_agent", "main_agent"]));
    let runtime = Runtime::new(model.clone()).with_contributors(registry);
    let tools: [&dyn DynAgent; 1] = [&DiscoveryAgent];
    block_on(runtime.run_loop("main_agent", "You are the main agent.", "Go", &tools)).unwrap();

    let main = &model.requests_of("main_agent")[0].messages[0].content;
    assert!(
        main.starts_with("You are the main agent.\n\n## Episodic Memory Tool\n"),
        "{main}"
    );
    let sub = &model.requests_of("discovery_agent")[0].messages[0].content;
    let identity = "You are the `discovery_agent` agent. Discovers the interactive elements and page structure of a target page";
    assert!(
        sub.starts_with(&format!("{identity}\n\n## Episodic Memory Tool\n")),
        "{sub}"
    );
    assert!(sub.contains("REFLECT on connections\n\nAnswer with one JSON object that matches this output contract:\n```json\n"));

    // Upstream parts passed with the call are listed with their context ids.
    let upstream = upstream();

    let options = agent_contracts::runtime::CallOptions::default().with_upstream(&upstream);
    block_on(runtime.call_sub_agent(
        &DiscoveryAgent,
        r#"{"task": "Scan", "target_url": "https://a.example"}"#,
        options,
    ))
    .unwrap();
    let sub = &model.requests_of("discovery_agent")[1].messages[0].content;
    assert!(
        sub.contains(
            "Your context was produced by these agent calls (`<agent>_output` in the context):\n\
         - `delegation`: context id `run-1/delegation/1/2026-01-19T10:14:58.001Z`\n\
         - `selector_agent`: context id `run-1/selector_agent/2/2026-01-19T10:14:59.500Z`"
        ),
        "{sub}"
    );
}

#[test]
fn the_standard_runtime_keeps_the_main_job_prompts() {
    let model = Arc::new(
        ScriptedModel::default().script("main_agent", [Message::assistant("nothing to do")]),
    );
    let runtime = Runtime::new(model.clone());
    block_on(runtime.run_loop("main_agent", "system text", "user text", &[])).unwrap();
    let request = &model.requests_of("main_agent")[0];
    assert_eq!(request.messages[0].content, "system text");
    assert_eq!(request.messages[1].content, "user text");
}
