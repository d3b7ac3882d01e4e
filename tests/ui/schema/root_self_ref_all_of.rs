use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/root_self_ref_all_of.schema.json")]
struct RootSelfRefAllOf;

fn main() {}
