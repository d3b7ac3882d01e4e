use agent_core::Agent;

#[derive(Agent)]
#[agent(name = "crawler", user_prompt = "ui/ok.md")]
struct Crawler;

fn main() {}
