use agent_contracts::Agent;

#[derive(Agent)]
struct Crawler;

fn main() {}
