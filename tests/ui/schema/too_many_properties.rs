use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/too_many_properties.schema.json")]
struct TooManyProperties;

fn main() {}
