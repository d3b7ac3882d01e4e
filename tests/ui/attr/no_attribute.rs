use agent_core::Agent;

#[derive(Agent)]
struct Crawler;

fn main() {}
