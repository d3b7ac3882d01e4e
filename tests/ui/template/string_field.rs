//! A field read on a string: reported with the template line, not as a rustc error about a
//! generated type.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/ok.schema.json",
    user_prompt = "ui/string_field.md"
)]
struct Crawler;

fn main() {}
