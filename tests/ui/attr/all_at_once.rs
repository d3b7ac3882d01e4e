//! Every problem of one derive is reported by one compile.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/does_not_exist.schema.json",
    output = "schemas/not_object.schema.json",
    name = "crawler",
    name = "crawler_again",
    prompt = "ui/ok.md"
)]
struct Crawler;

fn main() {}
