use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/unevaluated.schema.json")]
struct Unevaluated;

fn main() {}
