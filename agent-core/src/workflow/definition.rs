//! A workflow as declared: its members, steps, handoff validators, collects and settings.
//! The bottom of `workflow/`: the state, the seal and the runner read it; it reads none of
//! them.

use crate::call::Answer;
use crate::config::Config;
use crate::contributor::ContributorRegistry;
use crate::error::Error;
use crate::tool::Tool;
use agent_contracts_contract::DynAgent;
use agent_contracts_contract::{Agent, CheckedOutput};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Checks a producer's output before its consumer starts; `Err` says what is wrong, and is
/// sent back to the producer.
pub(super) type HandoffValidator = Box<dyn Fn(&CheckedOutput) -> Result<(), String> + Send + Sync>;

/// An agent of a workflow, with its tools.
pub struct Member {
    pub(super) agent: &'static dyn DynAgent,
    pub(super) tools: Vec<Arc<dyn Tool>>,
    pub(super) answer: Answer,
}

impl Member {
    /// Gives the agent a tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// The first tool result is the agent's output as is: no model turn rewraps it, so the
    /// next agent gets clean JSON.
    pub fn return_tool_output(mut self) -> Self {
        self.answer = Answer::FirstToolResult;
        self
    }
}

/// An agent without tools: give it some with [`Member::tool`].
impl<A: DynAgent + 'static> From<&'static A> for Member {
    fn from(agent: &'static A) -> Self {
        Member::from(agent as &'static dyn DynAgent)
    }
}

/// An agent without tools: give it some with [`Member::tool`].
impl From<&'static dyn DynAgent> for Member {
    fn from(agent: &'static dyn DynAgent) -> Self {
        Self {
            agent,
            tools: Vec::new(),
            answer: Answer::Written,
        }
    }
}

pub(super) struct Handoff {
    pub(super) producer: String,
    pub(super) consumer: String,
    pub(super) validate: HandoffValidator,
}

/// A field a step gets collected from earlier steps' outputs.
pub(super) struct Collect {
    pub(super) consumer: String,
    pub(super) field: String,
    /// `(producer, description)`, in item order.
    pub(super) items: Vec<(String, String)>,
}

/// One collected item, as the consumer's contract reads it.
#[derive(serde::Serialize)]
pub(super) struct CollectedItem<'a> {
    pub(super) agent_name: &'a str,
    pub(super) description: &'a str,
    pub(super) output: agent_contracts_contract::__private::Shown<'a>,
}

/// What a rejection at an approval step does to the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnReject {
    /// The run ends, failed with [`Error::Rejected`] naming the reason.
    End,
    /// The run goes on at this agent, the reason in the conversation: it may be the producer
    /// itself (a redraft, approved again) or any other agent of the workflow.
    Reroute(String),
}

/// A step whose output a person approves, rejects or edits before the run goes on.
pub(crate) struct Approval {
    pub(crate) agent: String,
    pub(crate) on_reject: OnReject,
}

/// A workflow definition: agents, declared steps, handoffs, an optional synthesis.
///
/// ```
/// use agent_contracts::{Workflow, workflow::WorkflowOutcome};
/// use agent_contracts::{Agent, Message, ScriptedModel};
/// use std::sync::Arc;
///
/// /// Finds venues.
/// #[derive(Agent)]
/// #[agent(name = "venue_agent", input = "../schemas/venue_agent/input.schema.json",
///         output = "../schemas/venue_agent/output.schema.json")]
/// struct VenueAgent;
///
/// let workflow = Workflow::new("venues")
///     .agent(&VenueAgent)
///     .goal([("venue_agent", "Find a venue")])
///     .handoff_to_user::<VenueAgent>(|venue| match venue.venue_name.is_empty() {
///         false => Ok(()),
///         true => Err("`venue_name` must name the venue".into()),
///     });
/// let model = ScriptedModel::default().script("venue_agent", [Message::assistant(
///     r#"{"venue_name": "Loft", "capacity": 60, "cost_usd": 1500, "notes": "ok"}"#,
/// )]);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let runner = workflow.runner(Arc::new(model));
/// let WorkflowOutcome::Finished { state, .. } = runner.start("A party for 40").await? else {
///     panic!("no question was scripted");
/// };
/// assert_eq!(state.upstream.entries().len(), 1);
/// # Ok::<(), agent_contracts::Error>(()) }).unwrap();
/// ```
pub struct Workflow {
    pub(super) name: String,
    pub(super) members: BTreeMap<String, Member>,
    pub(super) steps: Vec<Step>,
    pub(super) handoffs: Vec<Handoff>,
    pub(super) collects: Vec<Collect>,
    pub(crate) approvals: Vec<Approval>,
    pub(super) synthesis: Option<String>,
    pub(super) config: Config,
    pub(super) contributors: ContributorRegistry,
}

impl Workflow {
    /// An empty workflow.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            members: BTreeMap::new(),
            steps: Vec::new(),
            handoffs: Vec::new(),
            collects: Vec::new(),
            approvals: Vec::new(),
            synthesis: None,
            config: Config::default(),
            contributors: ContributorRegistry::default(),
        }
    }

    /// The workflow's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent of the first declared step: its input contract checks a run's input
    /// ([`Runner::start_with_kwargs`](super::Runner::start_with_kwargs)), so its tool definition is the workflow's as a tool.
    #[doc(hidden)]
    pub fn first_agent(&self) -> Option<&'static dyn DynAgent> {
        let first = self.steps.first()?;
        self.members.get(&first.agent).map(|member| member.agent)
    }

    /// Replaces the contributors that assemble each agent's system prompt.
    pub fn contributors(mut self, contributors: ContributorRegistry) -> Self {
        self.contributors = contributors;
        self
    }

    /// Adds an agent: the agent itself (`&MyAgent`, without tools), or a [`Member`] that
    /// gives it tools.
    pub fn agent(mut self, member: impl Into<Member>) -> Self {
        let member = member.into();
        self.members.insert(member.agent.name().to_owned(), member);
        self
    }

    /// Declares a goal: ordered `(agent, task)` steps.
    pub fn goal<'a>(mut self, steps: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        self.steps
            .extend(steps.into_iter().map(|(agent, task)| Step {
                agent: agent.to_owned(),
                task: task.to_owned(),
            }));
        self
    }

    /// Checks `Producer`'s typed output before `Consumer` starts.
    pub fn handoff<Producer: Agent, Consumer: Agent>(
        self,
        validate: impl Fn(&Producer::Output) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.handoff_value(Producer::NAME, Consumer::NAME, move |output| {
            match output.typed::<Producer>() {
                Some(typed) => validate(typed),
                None => Err(format!("the output is not `{}`'s output", Producer::NAME)),
            }
        })
    }

    /// Checks `Producer`'s typed output when the run ends after it (no agent consumes it but
    /// the user).
    pub fn handoff_to_user<Producer: Agent>(
        self,
        validate: impl Fn(&Producer::Output) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.handoff_value(Producer::NAME, USER, move |output| {
            match output.typed::<Producer>() {
                Some(typed) => validate(typed),
                None => Err(format!("the output is not `{}`'s output", Producer::NAME)),
            }
        })
    }

    /// Checks `producer`'s output before `consumer` starts (`"user"` is the end of the run).
    fn handoff_value(
        mut self,
        producer: &str,
        consumer: &str,
        validate: impl Fn(&CheckedOutput) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.handoffs.push(Handoff {
            producer: producer.to_owned(),
            consumer: consumer.to_owned(),
            validate: Box::new(validate),
        });
        self
    }

    /// Gives `consumer` the field `field`: an array of `{agent_name, description, output}`
    /// items, one per `(producer, description)` whose producer has an output by then, each
    /// holding the producer's latest output as the model wrote it (its key order, its
    /// numbers' text). The field goes through the consumer's input contract like the rest
    /// of its context; `#[derive(Workflow)]`'s `collect` declares it and checks each item
    /// against that contract when the crate compiles.
    pub fn collect<'a>(
        mut self,
        consumer: &str,
        field: &str,
        items: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        self.collects.push(Collect {
            consumer: consumer.to_owned(),
            field: field.to_owned(),
            items: items
                .into_iter()
                .map(|(producer, description)| (producer.to_owned(), description.to_owned()))
                .collect(),
        });
        self
    }

    /// Pauses the run after every output of `agent`, for a person to approve it, reject it
    /// (with a reason; `on_reject` says what follows) or edit it (the edit replaces the output,
    /// checked against `agent`'s output contract). The pause is a [`WorkflowOutcome::NeedsInput`](super::WorkflowOutcome::NeedsInput)
    /// whose request carries the output ([`HumanFeedbackRequest::approval`](super::HumanFeedbackRequest::approval)),
    /// saved and answered like any pause, with a [`Decision`](super::Decision)
    /// ([`Runner::decide`](crate::Runner::decide)). Naming an agent again replaces its approval.
    pub fn approve(mut self, agent: &str, on_reject: OnReject) -> Self {
        self.approvals.retain(|a| a.agent != agent);
        self.approvals.push(Approval {
            agent: agent.to_owned(),
            on_reject,
        });
        self
    }

    /// The agents whose every output a person approves, rejects or edits
    /// ([`approve`](Self::approve)), in the order they were named.
    pub fn approvals(&self) -> impl Iterator<Item = &str> {
        self.approvals.iter().map(|a| a.agent.as_str())
    }

    /// The approval of `agent`'s outputs, if it has one.
    pub(crate) fn approval_of(&self, agent: &str) -> Option<&Approval> {
        self.approvals.iter().find(|a| a.agent == agent)
    }

    /// Ends with a synthesis: a final model call (agent name `synthesis`) that sees the whole
    /// conversation plus this instruction.
    pub fn synthesis(mut self, instruction: impl Into<String>) -> Self {
        self.synthesis = Some(instruction.into());
        self
    }

    /// Replaces the bounds and limits.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Checks that every step and handoff names a known agent.
    pub fn check(&self) -> Result<(), Error> {
        for (i, step) in self.steps.iter().enumerate() {
            self.known(&step.agent, &format!("step {}", i + 1))?;
        }
        for c in &self.collects {
            let place = format!("the collect of `{}`", c.field);
            self.known(&c.consumer, &place)?;
            for (producer, _) in &c.items {
                self.known(producer, &place)?;
            }
        }
        for a in &self.approvals {
            self.known(&a.agent, "an approval")?;
            if let OnReject::Reroute(to) = &a.on_reject {
                self.known(to, "an approval's reroute")?;
            }
        }
        for h in &self.handoffs {
            self.known(&h.producer, "a handoff")?;
            if h.consumer != USER {
                self.known(&h.consumer, "a handoff")?;
            }
        }
        Ok(())
    }

    pub(super) fn known(&self, agent: &str, place: &str) -> Result<&Member, Error> {
        self.members.get(agent).ok_or_else(|| Error::UnknownAgent {
            workflow: self.name.clone(),
            place: place.to_owned(),
            agent: agent_contracts_contract::__private::truncate(agent, 100).into_owned(),
            known: self.members.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }

    /// The validator's refusal of `output` from `producer` for `consumer`, if any.
    pub(super) fn refusal(
        &self,
        producer: &str,
        consumer: &str,
        output: &CheckedOutput,
    ) -> Option<String> {
        self.handoffs
            .iter()
            .filter(|h| h.producer == producer && h.consumer == consumer)
            .find_map(|h| (h.validate)(output).err())
    }
}

/// One declared step: which agent does what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Step {
    /// The agent's name.
    pub(crate) agent: String,
    /// Its task.
    pub(crate) task: String,
}

/// The consumer of the last agent's output: the user.
pub(super) const USER: &str = "user";
