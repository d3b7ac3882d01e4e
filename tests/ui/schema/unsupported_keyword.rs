use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/unevaluated.schema.json")]
struct Unevaluated;

fn main() {}
