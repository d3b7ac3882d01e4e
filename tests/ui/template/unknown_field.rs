use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/ok.schema.json",
    user_prompt = "ui/unknown_field.md"
)]
struct Crawler;

fn main() {}
