use agent_contracts::Agent;

#[derive(Agent)]
#[agent(input = "schemas/quoted_minimum.schema.json")]
struct QuotedMinimum;

fn main() {}
