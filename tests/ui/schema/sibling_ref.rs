// A sibling `$ref` may not leave the schemas folder, and must name a file that exists.

/// Reads a file outside the schemas folder.
#[derive(agent_contracts::Agent)]
#[agent(input = "schemas/flow/escape/input.schema.json")]
struct Escape;

/// Reads a contract no agent folder has.
#[derive(agent_contracts::Agent)]
#[agent(input = "schemas/flow/dangling/input.schema.json")]
struct Dangling;

fn main() {}
