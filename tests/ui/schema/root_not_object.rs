use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/not_object.schema.json")]
struct RootNotObject;

fn main() {}
