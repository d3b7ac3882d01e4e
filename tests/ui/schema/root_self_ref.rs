use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/root_self_ref.schema.json")]
struct RootSelfRef;

fn main() {}
