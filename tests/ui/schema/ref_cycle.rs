use agent_core::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/ref_cycle.schema.json")]
struct RefCycle;

fn main() {}
