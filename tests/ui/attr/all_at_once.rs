//! Every problem of one derive is reported by one compile.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "ui/schemas/does_not_exist.schema.json",
    output = "ui/schemas/not_object.schema.json",
    name = "crawler",
    name = "crawler_again",
    prompt = "ui/ok.md"
)]
struct Crawler;

fn main() {}
