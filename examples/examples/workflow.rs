//! The guide's "Workflows" example as a whole program: four specialists share one conversation,
//! a typed check runs between two of them, one asks the user a question, and a synthesis
//! writes the plan. `cargo run -p agent-examples --example workflow` runs it offline;
//! `guide/workflows.md` shows this file below its doc lines, and `examples/tests/all/readme.rs`
//! checks that it does.

use agent_contracts::{Error, Workflow, WorkflowOutcome};
use agent_examples::agents::budget_agent::output::BudgetAgentOutput;
use agent_examples::agents::{BudgetAgent, CateringAgent, LogisticsAgent, VenueAgent};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let workflow = Workflow::new("event_planning")
        .agent(&VenueAgent)
        .agent(&BudgetAgent)
        .agent(&CateringAgent)
        .agent(&LogisticsAgent)
        .goal([
            ("venue_agent", "Find a venue"),
            ("budget_agent", "Allocate the budget"),
            ("catering_agent", "Plan the catering"),
            ("logistics_agent", "Schedule the day"),
        ])
        // Typed by the producer's generated output type.
        .handoff::<BudgetAgent, CateringAgent>(|budget: &BudgetAgentOutput| {
            match budget.allocations.get("catering") {
                Some(&amount) if amount > 0.0 => Ok(()),
                _ => Err("`allocations.catering` must be a positive amount".into()),
            }
        })
        .synthesis("Please synthesize a comprehensive event plan.");
    // The demo's scripted specialists, offline; any `ChatModel` works.
    let runner = workflow.runner(agent_examples::event_planning::scripted_model());
    let request = "Plan a party for 40. Our total budget is $5000.";
    let mut outcome = runner.start(request).await?;
    loop {
        match outcome {
            WorkflowOutcome::NeedsInput { request, state, .. } => {
                // Ask the user; the state is JSON, to keep while they think.
                println!("{} asks: {}", request.requesting_agent, request.prompt);
                outcome = runner.resume(state, "Three guests are vegetarian.").await?;
            }
            WorkflowOutcome::Finished { output, .. } => {
                println!("{output}");
                return Ok(());
            }
        }
    }
}
