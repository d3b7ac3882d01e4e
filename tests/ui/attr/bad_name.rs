use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/ok.schema.json", name = "plan generator")]
struct Crawler;

#[derive(Agent)]
#[agent(input = "schemas/ok.schema.json", name = "type")]
struct Typed;

fn main() {}
