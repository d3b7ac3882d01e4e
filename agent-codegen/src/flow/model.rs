//! What the data-flow check reads and reports: the flow (steps, their contracts, the collects)
//! and the problems found. Below both the check (`flow.rs`) and the collect check
//! (`collect.rs`), which share it.

use serde_json::Value;

/// A contract of the flow: its bundled schema and where it came from.
#[derive(Debug, Clone)]
pub struct FlowContract {
    /// The schema, with sibling `$ref`s bundled.
    pub schema: Value,
    /// Display path (`catering_agent/input.schema.json`).
    pub origin: String,
}

/// One step: an agent folder of the schemas folder, and its contracts.
#[derive(Debug, Clone)]
pub struct FlowStep {
    /// The agent's name (its folder's name).
    pub agent: String,
    /// Its input contract.
    pub input: FlowContract,
    /// Its output contract; without one, the output is any JSON value.
    pub output: Option<FlowContract>,
}

/// A declared workflow: the run's input contract (if any) and the steps in order.
#[derive(Debug, Clone)]
pub struct Flow {
    /// The workflow's name, for messages.
    pub name: String,
    /// The run's input contract: its properties are in every step's context.
    pub input: Option<FlowContract>,
    /// The steps, in the order they run.
    pub steps: Vec<FlowStep>,
    /// Every agent folder of the schemas folder, for "add the step" hints.
    pub agents: Vec<String>,
    /// Fields collected from earlier steps' outputs, in the order declared.
    pub collects: Vec<FlowCollect>,
}

/// A field that a step gets as an array of `{agent_name, description, output}` items, one
/// per named earlier step, each holding that step's output as the model wrote it. Its
/// consumer is the first step whose input contract declares the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowCollect {
    /// The consumer's input field (`collected_information`).
    pub field: String,
    /// The steps whose outputs it collects, in item order.
    pub from: Vec<String>,
}

/// Where in a declaration a problem is, when it is about a collect rather than a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectAt {
    /// Index of the collect in [`Flow::collects`].
    pub collect: usize,
    /// Index of the collected step among its `from`, when the problem is about one item.
    pub item: Option<usize>,
}

/// A problem of one step, or a comparison the check could not decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowProblem {
    /// Index of the step in the declaration.
    pub step: usize,
    /// The field of the step's input it is about (`budget_agent_output`).
    pub field: String,
    /// The whole message, naming the step and the field.
    pub message: String,
    /// The collect it is about, if any (for its span in the declaration).
    pub collect: Option<CollectAt>,
}

/// What [`check`](super::check) found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowReport {
    /// What makes the declaration wrong: a field nobody provides, one provided only later,
    /// a cycle, a provided schema the step's contract refuses.
    pub errors: Vec<FlowProblem>,
    /// Comparisons the check cannot decide; the run-time contract check still applies.
    pub undecided: Vec<FlowProblem>,
}

/// A schema's declared properties, in order.
pub(super) fn properties(schema: &Value) -> Vec<(String, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default()
}
