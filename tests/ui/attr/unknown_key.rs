use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/ok.schema.json", prompt = "ui/ok.md")]
struct Crawler;

fn main() {}
