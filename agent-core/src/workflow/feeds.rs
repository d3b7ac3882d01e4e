//! Typed handoffs of a declared workflow.

/// `Self`'s output reaches `Consumer` in the declared workflow `Flow`: `Consumer`'s input
/// contract reads `<self>_output` and `Self` runs before it. `#[derive(Workflow)]`
/// implements it for every such pair of its steps, so a handoff validator between two
/// steps that do not hand anything to each other does not compile.
///
/// ```ignore
/// let workflow = EventPlanning::handoff::<BudgetAgent, CateringAgent>(
///     EventPlanning::workflow(TASKS),
///     |budget| budget.allocations.contains_key("catering").then_some(()).ok_or("no catering".into()),
/// );
/// ```
#[doc(hidden)]
pub trait Feeds<Consumer, Flow> {}
