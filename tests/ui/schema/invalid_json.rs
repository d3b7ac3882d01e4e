use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/invalid_json.schema.json")]
struct InvalidJson;

fn main() {}
