//! The main job, offline on the scripted model: prints the transcript and exits 0 when the
//! main agent finishes with a plan.

use agent_examples::pipeline;
use std::process::ExitCode;
use std::sync::Arc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let model = Arc::new(pipeline::scripted_model());
    let (runtime, outcome) = pipeline::run(model).await;
    print!("{}", runtime.transcript());
    match outcome {
        Ok(outcome) => {
            println!("=== done ===\n{}", outcome.content);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
