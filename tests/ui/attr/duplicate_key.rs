use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/ok.schema.json", name = "crawler")]
#[agent(name = "crawler_again")]
struct Crawler;

fn main() {}
