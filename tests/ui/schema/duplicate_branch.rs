use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/duplicate_branch.schema.json")]
struct DuplicateBranch;

fn main() {}
