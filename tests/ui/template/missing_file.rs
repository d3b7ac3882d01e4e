use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/ok.schema.json",
    user_prompt = "ui/does_not_exist.md"
)]
struct Crawler;

fn main() {}
