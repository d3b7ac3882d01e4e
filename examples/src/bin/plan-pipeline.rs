//! The main job: prints which model it runs on, the transcript, and a summary (model calls,
//! retries, tokens); exits 0 when the main agent finishes with a plan. Offline on the
//! scripted model by default; `--model openai:<model>` or `--model anthropic:<model>` runs it
//! on a real model configured from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//! `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).

use agent_examples::{pipeline, report};
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
    let (model, line) = match report::model(args.model.as_deref(), || {
        Arc::new(pipeline::scripted_model())
    }) {
        Ok(model) => model,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{line}");
    let (runtime, outcome) = pipeline::run(model).await;
    print!("{}", runtime.transcript());
    print!("{}", report::summary(runtime.transcript()));
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
