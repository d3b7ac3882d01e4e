//! A typo below the top level, in a loop variable: reported with the template line and a
//! did-you-mean, like a top-level one.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/items.schema.json",
    user_prompt = "ui/nested_field.md"
)]
struct Lister;

fn main() {}
