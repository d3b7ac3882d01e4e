//! A template path with a typo: the file in the template folders it most likely meant is
//! suggested.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/items.schema.json",
    user_prompt = "ui/nested_feild.md"
)]
struct Lister;

fn main() {}
