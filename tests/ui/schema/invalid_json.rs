use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/invalid_json.schema.json")]
struct InvalidJson;

fn main() {}
