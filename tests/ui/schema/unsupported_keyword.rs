use agent_core::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/if_then.schema.json")]
struct IfThen;

fn main() {}
