//! Prompt contributors: an agent's system prompt, assembled from the parts that apply to it.
//!
//! A [`ContributorRegistry`] asks each contributor that applies to the agent for its part, in
//! ascending priority (ties broken by name, so the order never depends on registration), and
//! joins the parts with blank lines. A contributor may decline (`Ok(None)`); one that fails
//! makes the assembly fail with an error that names it.
//!
//! The standard registry is [`IdentityContributor`] (who the agent is), [`UpstreamContributor`]
//! (which calls produced its context) and [`OutputContractContributor`] (the contract its
//! answer must meet). An Askama template is a contributor through [`TemplateContributor`];
//! [`episodic_memory`] is one.
//!
//! ```
//! use agent_core::{ContributorRegistry, PromptContext, TemplateContributor};
//! use agent_core::ContextIdGenerator;
//! use askama::Template;
//!
//! #[derive(Template)]
//! #[template(source = "Be brief.", ext = "txt")]
//! struct Brief;
//!
//! let registry = ContributorRegistry::empty()
//!     .with(TemplateContributor::new("brief", 10, Brief))
//!     .with(agent_core::episodic_memory().only_for(["planner"]));
//! let id = ContextIdGenerator::new("run-1").unwrap().next("writer").unwrap();
//! // The writer gets `brief` only: episodic memory is for the planner.
//! assert_eq!(registry.assemble(&PromptContext::new("writer", &id)).unwrap(), "Be brief.");
//! ```

use crate::ids::ContextId;
use crate::rerun::PreviousAttempt;
use crate::upstream::UpstreamContext;
use agent_contract::DynAgent;
use askama::Template;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// The priorities of the built-in contributors; lower comes first.
pub mod priority {
    /// The agent's identity ("You are the `<name>` agent.").
    pub const IDENTITY: i32 = 0;
    /// The call's context ID ([`ContextIdContributor`](super::ContextIdContributor)).
    pub const CONTEXT_ID: i32 = 100;
    /// Which agent calls produced the call's context.
    pub const UPSTREAM: i32 = 200;
    /// [`episodic_memory`](super::episodic_memory).
    pub const EPISODIC_MEMORY: i32 = 500;
    /// The output contract's JSON Schema: last, so the answer
    /// format is what the model reads just before the task.
    pub const OUTPUT_CONTRACT: i32 = 1000;
}

/// Which agents a contributor applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppliesTo<'a> {
    /// Every agent.
    All,
    /// The agents with these names.
    Agents(&'a [&'a str]),
}

impl AppliesTo<'_> {
    /// Whether the agent `agent` is included.
    pub(crate) fn includes(&self, agent: &str) -> bool {
        match self {
            Self::All => true,
            Self::Agents(names) => names.contains(&agent),
        }
    }
}

/// What a contributor sees of the call whose system prompt is assembled.
pub struct PromptContext<'a> {
    /// The agent's name (its agent type).
    pub agent: &'a str,
    /// The agent itself, when it is a contract agent (a plain loop agent has none).
    pub definition: Option<&'a dyn DynAgent>,
    /// The call's ID.
    pub context_id: &'a ContextId,
    /// What upstream agents produced for this call, if the caller tracked it.
    pub upstream: Option<&'a UpstreamContext>,
    /// The attempt this call redoes, if any.
    pub previous: Option<&'a PreviousAttempt>,
    /// Anything else the caller wants contributors to see.
    pub metadata: Map<String, Value>,
}

impl<'a> PromptContext<'a> {
    /// The context of a call of the agent named `agent`.
    pub fn new(agent: &'a str, context_id: &'a ContextId) -> Self {
        Self {
            agent,
            definition: None,
            context_id,
            upstream: None,
            previous: None,
            metadata: Map::new(),
        }
    }

    /// The context of a call of a contract agent.
    pub fn for_agent(agent: &'a dyn DynAgent, context_id: &'a ContextId) -> Self {
        Self {
            definition: Some(agent),
            ..Self::new(agent.name(), context_id)
        }
    }
}

impl fmt::Debug for PromptContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptContext")
            .field("agent", &self.agent)
            .field("definition", &self.definition.map(|d| d.name()))
            .field("context_id", self.context_id)
            .field("upstream", &self.upstream)
            .field("previous", &self.previous)
            .field("metadata", &self.metadata)
            .finish()
    }
}

/// Why a contributor could not give its part.
#[derive(Debug, thiserror::Error)]
pub enum ContributorError {
    /// Its template failed to render.
    #[error("its template failed to render: {0}")]
    Template(#[from] askama::Error),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// A system prompt that could not be assembled: it names the contributor that failed.
#[derive(Debug, thiserror::Error)]
#[error("prompt contributor `{contributor}` failed for agent `{agent}`: {source}")]
pub struct AssemblyError {
    /// The contributor.
    pub contributor: String,
    /// The agent whose prompt was assembled.
    pub agent: String,
    /// What went wrong.
    #[source]
    pub source: ContributorError,
}

/// One part of system prompts.
pub trait PromptContributor: Send + Sync {
    /// A unique name: it breaks priority ties and names the contributor in errors.
    fn name(&self) -> &str;
    /// The agents it applies to.
    fn applies_to(&self) -> AppliesTo<'_>;
    /// Where its part goes: lower comes first.
    fn priority(&self) -> i32;
    /// Its part for this call, or `None` to add nothing.
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError>;
}

/// The contributors of a runtime: assembles system prompts.
#[derive(Clone)]
pub struct ContributorRegistry {
    contributors: Vec<Arc<dyn PromptContributor>>,
}

impl ContributorRegistry {
    /// No contributors: every prompt is empty.
    pub fn empty() -> Self {
        Self {
            contributors: Vec::new(),
        }
    }

    /// Identity, upstream provenance and output contract: the runtime's default.
    pub fn standard() -> Self {
        Self::empty()
            .with(IdentityContributor)
            .with(UpstreamContributor)
            .with(OutputContractContributor)
    }

    /// Adds `contributor`, replacing one of the same name.
    pub fn with(mut self, contributor: impl PromptContributor + 'static) -> Self {
        self.register(Arc::new(contributor));
        self
    }

    /// Adds `contributor`, replacing (and returning) one of the same name.
    fn register(
        &mut self,
        contributor: Arc<dyn PromptContributor>,
    ) -> Option<Arc<dyn PromptContributor>> {
        let same = self
            .contributors
            .iter()
            .position(|c| c.name() == contributor.name());
        match same {
            Some(i) => Some(std::mem::replace(&mut self.contributors[i], contributor)),
            None => {
                self.contributors.push(contributor);
                None
            }
        }
    }

    /// Removes the contributor `name`, if there is one.
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn PromptContributor>> {
        let i = self.contributors.iter().position(|c| c.name() == name)?;
        Some(self.contributors.remove(i))
    }

    /// The contributors that apply to `agent`, in assembly order.
    pub fn applicable(&self, agent: &str) -> Vec<&dyn PromptContributor> {
        let mut applicable: Vec<&dyn PromptContributor> = self
            .contributors
            .iter()
            .map(|c| &**c)
            .filter(|c| c.applies_to().includes(agent))
            .collect();
        applicable.sort_by(|a, b| (a.priority(), a.name()).cmp(&(b.priority(), b.name())));
        applicable
    }

    /// The system prompt of the call `ctx`: the parts of the contributors that apply, in
    /// order, each without trailing whitespace, joined by blank lines. Empty parts are left
    /// out.
    pub fn assemble(&self, ctx: &PromptContext<'_>) -> Result<String, AssemblyError> {
        let mut parts = Vec::new();
        for contributor in self.applicable(ctx.agent) {
            let part = contributor
                .contribute(ctx)
                .map_err(|source| AssemblyError {
                    contributor: contributor.name().to_owned(),
                    agent: ctx.agent.to_owned(),
                    source,
                })?;
            if let Some(part) = part {
                let part = part.trim_end();
                if !part.is_empty() {
                    parts.push(part.to_owned());
                }
            }
        }
        Ok(parts.join("\n\n"))
    }
}

impl Default for ContributorRegistry {
    /// Same as [`ContributorRegistry::standard`].
    fn default() -> Self {
        Self::standard()
    }
}

impl fmt::Debug for ContributorRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.contributors.iter().map(|c| (c.name(), c.priority())))
            .finish()
    }
}

/// "You are the `<name>` agent. `<description>`", for contract agents.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct IdentityContributor;

impl PromptContributor for IdentityContributor {
    fn name(&self) -> &str {
        "identity"
    }
    fn applies_to(&self) -> AppliesTo<'_> {
        AppliesTo::All
    }
    fn priority(&self) -> i32 {
        priority::IDENTITY
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Ok(ctx.definition.map(identity))
    }
}

/// The identity part of a contract agent's system prompt.
pub(crate) fn identity(agent: &dyn DynAgent) -> String {
    crate::texts::identity(agent.name(), agent.description())
}

/// The output contract a contract agent's answer must meet, as its JSON Schema.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OutputContractContributor;

impl PromptContributor for OutputContractContributor {
    fn name(&self) -> &str {
        "output_contract"
    }
    fn applies_to(&self) -> AppliesTo<'_> {
        AppliesTo::All
    }
    fn priority(&self) -> i32 {
        priority::OUTPUT_CONTRACT
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Ok(ctx.definition.map(output_contract))
    }
}

/// The output contract part of a contract agent's system prompt.
pub(crate) fn output_contract(agent: &dyn DynAgent) -> String {
    let schema = agent
        .output_contract()
        .map(|contract| contract.schema_pretty());
    crate::texts::output_contract(schema.as_deref())
}

/// Which agent calls produced the call's context, with their context IDs, when the caller
/// passed an upstream context.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct UpstreamContributor;

impl PromptContributor for UpstreamContributor {
    fn name(&self) -> &str {
        "upstream"
    }
    fn applies_to(&self) -> AppliesTo<'_> {
        AppliesTo::All
    }
    fn priority(&self) -> i32 {
        priority::UPSTREAM
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        let Some(upstream) = ctx.upstream.filter(|u| !u.is_empty()) else {
            return Ok(None);
        };
        let parts: Vec<crate::texts::UpstreamLine<'_>> = upstream
            .into_iter()
            .map(|part| crate::texts::UpstreamLine {
                producer: &part.producer,
                context_id: &part.context_id,
            })
            .collect();
        Ok(Some(crate::texts::upstream(&parts)))
    }
}

/// Tells the agent its own context ID, for outputs that record it (`resultId` of the
/// delegation and consolidation templates). Not in the standard registry: it makes every
/// system prompt unique.
#[derive(Debug, Clone, Default)]
pub struct ContextIdContributor {
    agents: Option<Vec<&'static str>>,
}

impl ContextIdContributor {
    /// For every agent.
    pub fn new() -> Self {
        Self::default()
    }

    /// For these agents only.
    pub fn only_for(mut self, agents: impl IntoIterator<Item = &'static str>) -> Self {
        self.agents = Some(agents.into_iter().collect());
        self
    }
}

impl PromptContributor for ContextIdContributor {
    fn name(&self) -> &str {
        "context_id"
    }
    fn applies_to(&self) -> AppliesTo<'_> {
        self.agents
            .as_deref()
            .map_or(AppliesTo::All, AppliesTo::Agents)
    }
    fn priority(&self) -> i32 {
        priority::CONTEXT_ID
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Ok(Some(crate::texts::context_id(ctx.context_id)))
    }
}

type Build<T> = Box<dyn Fn(&PromptContext<'_>) -> Option<T> + Send + Sync>;

enum Source<T> {
    Fixed(T),
    Build(Build<T>),
}

/// An Askama template as a contributor: a fixed template value, or one built per call.
pub struct TemplateContributor<T> {
    name: String,
    priority: i32,
    agents: Option<Vec<&'static str>>,
    source: Source<T>,
}

impl<T: Template + Send + Sync> TemplateContributor<T> {
    /// Renders `template` for every call.
    pub fn new(name: impl Into<String>, priority: i32, template: T) -> Self {
        Self {
            name: name.into(),
            priority,
            agents: None,
            source: Source::Fixed(template),
        }
    }

    /// Renders the template `build` makes for the call; `None` contributes nothing.
    pub fn from_fn(
        name: impl Into<String>,
        priority: i32,
        build: impl Fn(&PromptContext<'_>) -> Option<T> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            priority,
            agents: None,
            source: Source::Build(Box::new(build)),
        }
    }

    /// Applies to these agents only (by default, to all).
    pub fn only_for(mut self, agents: impl IntoIterator<Item = &'static str>) -> Self {
        self.agents = Some(agents.into_iter().collect());
        self
    }
}

impl<T: Template + Send + Sync> PromptContributor for TemplateContributor<T> {
    fn name(&self) -> &str {
        &self.name
    }
    fn applies_to(&self) -> AppliesTo<'_> {
        self.agents
            .as_deref()
            .map_or(AppliesTo::All, AppliesTo::Agents)
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        let rendered = match &self.source {
            Source::Fixed(template) => template.render()?,
            Source::Build(build) => match build(ctx) {
                Some(template) => template.render()?,
                None => return Ok(None),
            },
        };
        Ok(Some(rendered))
    }
}

impl<T> fmt::Debug for TemplateContributor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TemplateContributor")
            .field("name", &self.name)
            .field("priority", &self.priority)
            .field("agents", &self.agents)
            .finish_non_exhaustive()
    }
}

/// The episodic memory guidance (RETAIN, REFLECT, RECALL), for agents that have the memory
/// tool: `templates/contributors/episodic_memory.md`.
#[derive(Debug, Clone, Copy, Default, Template)]
#[template(path = "contributors/episodic_memory.md", escape = "none")]
pub(crate) struct EpisodicMemoryPrompt;

/// The episodic memory contributor (`episodic_memory`, priority
/// [`priority::EPISODIC_MEMORY`]), for every agent; narrow it with
/// [`TemplateContributor::only_for`].
pub fn episodic_memory() -> TemplateContributor<impl Template + Send + Sync> {
    TemplateContributor::new(
        "episodic_memory",
        priority::EPISODIC_MEMORY,
        EpisodicMemoryPrompt,
    )
}
