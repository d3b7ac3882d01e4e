use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "ui/schemas/required_typo.schema.json")]
struct RequiredTypo;

fn main() {}
