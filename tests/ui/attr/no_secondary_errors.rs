//! A failed derive still implements `Agent`, so code using the agent adds no errors of its own.

use agent_contracts::{Agent, DynAgent};

#[derive(Agent)]
#[agent(input = "schemas/not_object.schema.json")]
struct Crawler;

fn main() {
    let _ = Crawler.prepare(r#"{"task": "crawl"}"#, &Default::default());
    let _: &str = <Crawler as Agent>::NAME;
}
