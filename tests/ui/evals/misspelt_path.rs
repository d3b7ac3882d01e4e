use agent_contracts::Agent;

/// Writes crawl plans.
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "ui/schemas/evals/plan.input.schema.json",
    output = "ui/schemas/evals/plan.output.schema.json",
    evals = "ui/schemas/evals/misspelt_path.jsonl"
)]
struct PlanGeneratorAgent;

fn main() {}
