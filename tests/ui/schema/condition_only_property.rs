// A property only a `then` declares would be dropped by the Rust type: refused at the property.
use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/if_then.schema.json")]
struct IfThen;

fn main() {}
