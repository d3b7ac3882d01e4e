use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/ref_cycle.schema.json")]
struct RefCycle;

fn main() {}
