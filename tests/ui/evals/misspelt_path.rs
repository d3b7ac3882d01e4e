use agent_contracts::Agent;

/// Writes crawl plans.
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "schemas/evals/plan.input.schema.json",
    output = "schemas/evals/plan.output.schema.json",
    evals = "schemas/evals/misspelt_path.jsonl"
)]
struct PlanGeneratorAgent;

fn main() {}
