use agent_contracts::Agent;

#[derive(Agent)]
#[agent(name = "crawler", user_prompt = "ui/ok.md")]
struct Crawler;

fn main() {}
