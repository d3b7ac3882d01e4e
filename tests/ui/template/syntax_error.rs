use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/ok.schema.json",
    user_prompt = "ui/syntax_error.md"
)]
struct Crawler;

fn main() {}
