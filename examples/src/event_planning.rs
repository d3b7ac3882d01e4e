//! The event-planning workflow: venue, budget, catering and logistics specialists
//! share one conversation; the catering specialist asks the user a question; a synthesis step
//! writes the plan.

use crate::agents::budget_agent::output::BudgetAgentOutput;
use crate::agents::{BudgetAgent, CateringAgent};
use agent_contracts::ScriptedModel;
use agent_contracts::Workflow;
use agent_contracts::{ChatRequest, Message, Role};

/// The user's request: the budget is only here, in the first message.
pub const REQUEST: &str =
    "Plan a holiday party for 40 colleagues in Seattle on December 12. Our total budget is $5000.";

/// The answer the scripted human gives to the catering specialist's question.
pub const HUMAN_ANSWER: &str = "Three guests are vegetarian and one is gluten-free.";

/// The synthesis instruction.
pub const SYNTHESIS: &str = "Please synthesize a comprehensive event plan that integrates all specialist recommendations: venue, budget, catering and logistics, with the total cost.";

/// The event-planning steps, declared so that the crate compiles only if each specialist
/// gets what its input contract requires from the specialists before it (the catering
/// specialist needs the budget specialist's output, typed by its output contract).
#[derive(agent_contracts::Workflow)]
#[workflow(
    name = "event_planning",
    schemas = "../schemas",
    agents = "crate::agents",
    steps = ["venue_agent", "budget_agent", "catering_agent", "logistics_agent"]
)]
pub struct EventPlanning;

/// The workflow: four specialists in order, a budget check between budget and catering, and
/// a synthesis.
pub fn workflow() -> Workflow {
    let steps = EventPlanning::workflow([
        "Find a venue for the event",
        "Allocate the budget across the event's areas",
        "Plan the catering within its allocation",
        "Schedule the event day",
    ]);
    EventPlanning::handoff::<BudgetAgent, CateringAgent>(steps, |budget: &BudgetAgentOutput| {
        match budget.allocations.get("catering") {
            Some(&amount) if amount > 0.0 => Ok(()),
            _ => Err("`allocations.catering` must be a positive amount".into()),
        }
    })
    .synthesis(SYNTHESIS)
}

const VENUE: &str = r#"{"venue_name": "The Lakeview Loft", "capacity": 60, "cost_usd": 1500, "notes": "Available December 12, 6pm to 11pm; includes tables and AV."}"#;
const BUDGET: &str = r#"{"total_budget_usd": 5000, "allocations": {"venue": 1500, "catering": 2000, "logistics": 1000, "contingency": 500}}"#;
const QUESTION: &str =
    r#"{"user_input_needed": true, "user_prompt": "Do any guests have dietary restrictions?"}"#;
const CATERING: &str = r#"{"menu": ["Roasted squash soup", "Herb chicken or mushroom risotto", "Flourless chocolate cake"], "cost_usd": 1900, "dietary_accommodations": ["Mushroom risotto for the 3 vegetarians", "Gluten-free cake for everyone"]}"#;
const LOGISTICS: &str = r#"{"timeline": ["4:00pm setup", "6:00pm doors open", "7:00pm dinner", "10:30pm wrap-up"], "cost_usd": 900}"#;

/// The plan the synthesis step writes.
pub const PLAN: &str = "Holiday party plan: The Lakeview Loft ($1500) on December 12 for 40 guests; catering ($1900) with squash soup, herb chicken or mushroom risotto for the 3 vegetarians, and a gluten-free chocolate cake; logistics ($900) from 4pm setup to 10:30pm wrap-up. Total $4300 of the $5000 budget, $700 left for contingency.";

/// Scripted replies up to the human question.
pub fn script_before_question(model: ScriptedModel) -> ScriptedModel {
    model
        .script("venue_agent", [Message::assistant(VENUE)])
        .script("budget_agent", [Message::assistant(BUDGET)])
        .script("catering_agent", [Message::assistant(QUESTION)])
}

/// Scripted replies after the human answered.
pub fn script_after_question(model: ScriptedModel) -> ScriptedModel {
    model
        .script("catering_agent", [Message::assistant(CATERING)])
        .script("logistics_agent", [Message::assistant(LOGISTICS)])
        .script("synthesis", [Message::assistant(PLAN)])
}

/// The whole script.
pub fn scripted_model() -> ScriptedModel {
    script_after_question(script_before_question(ScriptedModel::default()))
}

/// The canned answer of an event-planning step, for a model that serves any number of runs
/// (`agent-demo mcp`): the catering specialist asks its question until the conversation
/// ends with the user's answer. `None` for an agent of another workflow.
pub fn canned_answer(request: &ChatRequest) -> Option<&'static str> {
    let answered = request.messages.last().is_some_and(|m| {
        m.role == Role::User && m.content.starts_with("User provided the following input:")
    });
    match request.agent.as_str() {
        "venue_agent" => Some(VENUE),
        "budget_agent" => Some(BUDGET),
        "catering_agent" if answered => Some(CATERING),
        "catering_agent" => Some(QUESTION),
        "logistics_agent" => Some(LOGISTICS),
        "synthesis" => Some(PLAN),
        _ => None,
    }
}
