// A `default` that does not match its own schema is dropped with a warning at the schema's
// literal; `deny` turns the warning into this error, the only way a compile-fail case shows it.
#![deny(deprecated)]

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/bad_default.schema.json")]
struct Settings;

fn main() {}
