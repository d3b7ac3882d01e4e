use agent_contracts::Agent;

/// Writes crawl plans.
#[derive(Agent)]
#[agent(
    name = "plan_generator_agent",
    input = "ui/schemas/evals/plan.input.schema.json",
    output = "ui/schemas/evals/plan.output.schema.json",
    evals = "ui/schemas/evals/enum_typo.jsonl"
)]
struct PlanGeneratorAgent;

fn main() {}
