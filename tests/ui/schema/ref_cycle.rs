use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/ref_cycle.schema.json")]
struct RefCycle;

fn main() {}
