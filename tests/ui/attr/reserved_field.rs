use agent_core::AgentInput;

#[derive(serde::Deserialize, schemars::JsonSchema, AgentInput)]
struct Search {
    task: String,
    query: String,
}

fn main() {}
