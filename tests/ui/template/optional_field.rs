//! A field read through an optional value (an `Option`, which has no fields): reported at the
//! template's line and column, saying the value may be absent, with the `if let` that reads it.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/optional_order.schema.json",
    user_prompt = "ui/optional_field.md"
)]
struct Triage;

fn main() {}
