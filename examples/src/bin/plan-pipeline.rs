//! The main job: prints the transcript and exits 0 when the main agent finishes with a plan.
//! Offline on the scripted model by default; `--model openai:<model>` or
//! `--model anthropic:<model>` runs it on a real model configured from the environment
//! (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`) and ends
//! with the run's token usage.

use agent_core::Runtime;
use agent_examples::metered::Metered;
use agent_examples::pipeline;
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(about = "Runs the plan pipeline and prints its transcript")]
struct Args {
    /// `openai:<model>` or `anthropic:<model>`; the scripted model when left out.
    #[arg(long)]
    model: Option<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    let (runtime, outcome, metered) = match args.model {
        None => {
            let (runtime, outcome) = pipeline::run(Arc::new(pipeline::scripted_model())).await;
            (runtime, outcome, None)
        }
        Some(spec) => {
            let model = match Metered::from_spec(&spec) {
                Ok(model) => model,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let runtime = Runtime::new(model.clone());
            let outcome = runtime
                .run_loop(
                    pipeline::MAIN_AGENT,
                    pipeline::MAIN_SYSTEM,
                    pipeline::USER_REQUEST,
                    &pipeline::tools(),
                )
                .await;
            (runtime, outcome, Some(model))
        }
    };
    print!("{}", runtime.transcript());
    if let Some(metered) = metered {
        print!("{metered}");
    }
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
