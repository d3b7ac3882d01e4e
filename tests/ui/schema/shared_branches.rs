use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/shared_branches.schema.json")]
struct SharedBranches;

fn main() {}
