//! A typo below the top level is rustc's to find: the error still points at the template.

use agent_core::Agent;

#[derive(Agent)]
#[agent(
    input = "ui/schemas/items.schema.json",
    user_prompt = "ui/nested_field.md"
)]
struct Lister;

fn main() {}
