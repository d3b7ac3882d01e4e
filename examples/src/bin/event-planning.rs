//! The event-planning workflow, offline on the scripted model: the catering specialist asks a
//! question, the scripted human answers (through a JSON round trip of the paused state, as a
//! new process would), and the synthesis prints the plan. `--model openai:<model>` or
//! `--model anthropic:<model>` runs it on a real model configured from the environment. The
//! output opens with the model it runs on and closes with a summary (calls, retries, tokens).

use agent_core::workflow::WorkflowOutcome;
use agent_examples::{event_planning, report};
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(about = "Runs the event-planning workflow and prints its transcript")]
struct Args {
    /// `openai:<model>` or `anthropic:<model>`; the scripted model when left out.
    #[arg(long)]
    model: Option<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    let (model, line) = match report::model(args.model.as_deref(), || {
        Arc::new(event_planning::scripted_model())
    }) {
        Ok(model) => model,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{line}");
    let workflow = event_planning::workflow();
    let runner = workflow.runner(model);
    let mut outcome = runner.start(event_planning::REQUEST).await;
    let mut printed = 0;
    let mut print_new = || {
        let events = runner.transcript().events();
        for event in &events[printed..] {
            print!("{event}");
        }
        printed = events.len();
    };
    loop {
        match outcome {
            Ok(WorkflowOutcome::NeedsInput { request, state }) => {
                print_new();
                println!(
                    "=== [{}] asks the user ===\n{}\n",
                    request.requesting_agent, request.prompt
                );
                println!("=== [user] answers ===\n{}\n", event_planning::HUMAN_ANSWER);
                let saved = serde_json::to_string(&state).unwrap_or_default();
                let state = match workflow.parse_state(&saved) {
                    Ok(state) => state,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                };
                outcome = runner.resume(state, event_planning::HUMAN_ANSWER).await;
            }
            Ok(WorkflowOutcome::Finished { output, .. }) => {
                print_new();
                print!("{}", report::summary(runner.transcript()));
                println!("=== plan ===\n{output}");
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                print_new();
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
}
