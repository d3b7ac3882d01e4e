use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/does_not_exist.schema.json")]
struct MissingSchema;

fn main() {}
