use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/ok.schema.json", name = "crawler")]
#[agent(name = "crawler_again")]
struct Crawler;

fn main() {}
