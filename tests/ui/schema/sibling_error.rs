// A mistake in a contract that this one names through `$ref`: reported in that file, at its
// own line and column, not in the bundled text.

#[derive(agent_contracts::Agent)]
#[agent(input = "schemas/sibling/user/input.schema.json")]
struct User;

fn main() {}
