use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/required_typo.schema.json")]
struct RequiredTypo;

fn main() {}
