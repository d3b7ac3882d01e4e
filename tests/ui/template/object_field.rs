//! The issue's `{{ source.ulr }}`: a typo in an object's field, and one below an `if let`
//! binding of an optional object, each reported at its template line with a did-you-mean, not
//! as rustc's "no field" error on a generated type.

use agent_contracts::Agent;

#[derive(Agent)]
#[agent(
    input = "schemas/article.schema.json",
    user_prompt = "ui/article_fields.md"
)]
struct Summarizer;

fn main() {}
