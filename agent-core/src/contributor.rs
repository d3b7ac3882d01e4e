//! Prompt contributors: an agent's system prompt, assembled from the parts that apply to it.
//!
//! A [`ContributorRegistry`] asks each contributor that applies to the agent for its part, in
//! ascending priority (ties broken by name, so the order never depends on registration), and
//! joins the parts with blank lines. A contributor may decline (`Ok(None)`); one that fails
//! makes the assembly fail with an error that names it.
//!
//! The standard registry is the agent's identity ("You are the `<name>` agent."), the calls
//! that produced its context, and the output contract its answer must meet; add
//! [`ContextIdContributor`], [`EpisodicMemoryContributor`], your own contributors (a
//! `#[derive(PromptContributor)]` over an Askama template, or the trait by hand) and narrow any
//! of them to some agents with [`PromptContributor::only_for`].
//!
//! The built-in parts come in this order (lower priority first): identity 0, context ID 100,
//! upstream 200, episodic memory 500, output contract 1000 (last, so the answer format is what
//! the model reads just before the task).
//!
//! ```
//! use agent_contracts::{prompt::ContributorError, prompt::ContributorRegistry, prompt::EpisodicMemoryContributor};
//! use agent_contracts::{transcript::ContextIdGenerator, prompt::PromptContext, PromptContributor};
//!
//! struct Brief;
//!
//! impl PromptContributor for Brief {
//!     fn name(&self) -> &str { "brief" }
//!     fn priority(&self) -> i32 { 10 }
//!     fn contribute(&self, _: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
//!         Ok(Some("Be brief.".into()))
//!     }
//! }
//!
//! let registry = ContributorRegistry::empty()
//!     .with(Brief)
//!     .with(EpisodicMemoryContributor.only_for(["planner"]));
//! let id = ContextIdGenerator::new("run-1").unwrap().next("writer").unwrap();
//! // The writer gets `brief` only: episodic memory is for the planner.
//! assert_eq!(registry.assemble(&PromptContext::new("writer", &id)).unwrap(), "Be brief.");
//! ```

use crate::ids::ContextId;
use crate::rerun::PreviousAttempt;
use crate::upstream::UpstreamContext;
use agent_contracts_contract::DynAgent;
use askama::Template;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// The priorities of the built-in contributors; lower comes first. The module's doc lists them
/// for users placing their own parts between them.
mod priority {
    pub(super) const IDENTITY: i32 = 0;
    pub(super) const CONTEXT_ID: i32 = 100;
    pub(super) const UPSTREAM: i32 = 200;
    pub(super) const EPISODIC_MEMORY: i32 = 500;
    pub(super) const OUTPUT_CONTRACT: i32 = 1000;
}

/// What a contributor sees of the call whose system prompt is assembled.
#[non_exhaustive]
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
    pub(crate) fn for_agent(agent: &'a dyn DynAgent, context_id: &'a ContextId) -> Self {
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
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// Whether it applies to the agent named `agent` (by default, it applies to every agent).
    fn applies_to(&self, agent: &str) -> bool {
        let _ = agent;
        true
    }
    /// Where its part goes: lower comes first.
    fn priority(&self) -> i32;
    /// Its part for this call, or `None` to add nothing.
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError>;

    /// This contributor for the agents named in `agents` only (instead of
    /// [`applies_to`](Self::applies_to)).
    fn only_for(self, agents: impl IntoIterator<Item = &'static str>) -> impl PromptContributor
    where
        Self: Sized + 'static,
    {
        OnlyFor {
            agents: agents.into_iter().collect(),
            contributor: self,
        }
    }
}

/// A contributor narrowed to some agents: see [`PromptContributor::only_for`].
#[derive(Debug, Clone)]
struct OnlyFor<C> {
    agents: Vec<&'static str>,
    contributor: C,
}

impl<C: PromptContributor> PromptContributor for OnlyFor<C> {
    fn name(&self) -> &str {
        self.contributor.name()
    }
    fn applies_to(&self, agent: &str) -> bool {
        self.agents.contains(&agent)
    }
    fn priority(&self) -> i32 {
        self.contributor.priority()
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        self.contributor.contribute(ctx)
    }
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
    fn applicable(&self, agent: &str) -> Vec<&dyn PromptContributor> {
        let mut applicable: Vec<&dyn PromptContributor> = self
            .contributors
            .iter()
            .map(|c| &**c)
            .filter(|c| c.applies_to(agent))
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
    /// The standard registry, the runtime's default: identity, upstream provenance and output
    /// contract.
    fn default() -> Self {
        Self::empty()
            .with(IdentityContributor)
            .with(UpstreamContributor)
            .with(OutputContractContributor)
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
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextIdContributor;

impl PromptContributor for ContextIdContributor {
    fn name(&self) -> &str {
        "context_id"
    }
    fn priority(&self) -> i32 {
        priority::CONTEXT_ID
    }
    fn contribute(&self, ctx: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Ok(Some(crate::texts::context_id(ctx.context_id)))
    }
}

/// The episodic memory guidance (RETAIN, REFLECT, RECALL), for agents that have the memory
/// tool: `templates/contributors/episodic_memory.md`. Named `episodic_memory`; it applies to
/// every agent unless narrowed with [`PromptContributor::only_for`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EpisodicMemoryContributor;

/// The template of [`EpisodicMemoryContributor`].
#[derive(Template)]
#[template(path = "contributors/episodic_memory.md", escape = "none")]
struct EpisodicMemoryPrompt;

impl PromptContributor for EpisodicMemoryContributor {
    fn name(&self) -> &str {
        "episodic_memory"
    }
    fn priority(&self) -> i32 {
        priority::EPISODIC_MEMORY
    }
    fn contribute(&self, _: &PromptContext<'_>) -> Result<Option<String>, ContributorError> {
        Ok(Some(EpisodicMemoryPrompt.render()?))
    }
}
