use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/misspelt_type.schema.json")]
struct MisspeltType;

fn main() {}
