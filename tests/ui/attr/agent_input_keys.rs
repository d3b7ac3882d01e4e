//! `AgentInput` parses its keys like `Agent`: a near miss gets a did-you-mean, a repeated key
//! is an error, and the fallback impl keeps code that uses the type free of other errors.

use agent_contracts::AgentInput;

#[derive(serde::Deserialize, schemars::JsonSchema, AgentInput)]
#[agent(nam = "search", crate = "agent_contracts", crate = "agent_contracts")]
struct Search {
    query: String,
}

fn main() {
    let _ = Search::input_contract();
    let _ = Search { query: String::new() }.query;
}
