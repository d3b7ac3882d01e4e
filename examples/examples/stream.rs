//! The guide's "Streaming" example as a whole program: the plan generator's answer streamed as
//! typed partial values, its first answer (a status the contract does not know) closed after
//! its first chunks and asked again. `cargo run -p agent-examples --example stream` runs it
//! offline; `guide/streaming.md` shows this file below its doc lines, and
//! `examples/tests/all/readme.rs` checks that it does.

use agent_contracts::{Error, Runtime, ScriptedModel, Streamed};
use agent_examples::agents::PlanGeneratorAgent;
use futures_util::StreamExt as _;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    // A scripted model that streams its answers 16 characters at a time; any `ChatModel`
    // streams (the OpenAI and Anthropic models by server-sent events).
    let model = ScriptedModel::default().chunk_size(16).script(
        "plan_generator_agent",
        [
            r#"{"status": "done", "plan_file_path": "plans/login.md", "agent_response_content": "Fill the form."}"#,
            r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill the email and password inputs by id, then submit."}"#,
        ],
    );
    let runtime = Runtime::new(model);
    let kwargs = agent_examples::pipeline::full_plan_kwargs();
    let mut stream = runtime.stream::<PlanGeneratorAgent>(&kwargs);
    while let Some(item) = stream.next().await {
        match item? {
            // Every field optional: a string grows, an enum appears once complete.
            Streamed::Partial(plan) => println!(
                "so far: {:?}",
                plan.agent_response_content.as_deref().unwrap_or("")
            ),
            // The answer broke the contract (here: as it streamed) and is asked again.
            Streamed::Retry => println!("refused; asked again"),
            Streamed::Output(plan) => println!("plan: {}", plan.plan_file_path.as_str()),
        }
    }
    let counts = runtime.transcript().counts();
    println!(
        "{} answer stopped early, after {} bytes",
        counts.stopped_answers, counts.stopped_bytes
    );
    Ok(())
}
