use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/misspelt_type.schema.json")]
struct MisspeltType;

fn main() {}
