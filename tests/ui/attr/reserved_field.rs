use agent_contracts::AgentInput;

#[derive(serde::Deserialize, schemars::JsonSchema, AgentInput)]
struct Search {
    task: String,
    query: String,
}

fn main() {}
