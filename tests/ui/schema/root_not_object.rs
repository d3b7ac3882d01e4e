use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/not_object.schema.json")]
struct RootNotObject;

fn main() {}
