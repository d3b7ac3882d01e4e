//! The event-planning workflow, offline on the scripted model: the catering specialist asks a
//! question, the scripted human answers (through a JSON round trip of the paused state, as a
//! new process would), and the synthesis prints the plan. `--model openai:<model>` or
//! `--model anthropic:<model>` runs it on a real model configured from the environment and
//! ends with the run's token usage.

use agent_core::ChatModel;
use agent_core::workflow::WorkflowOutcome;
use agent_examples::event_planning;
use agent_examples::metered::Metered;
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
    let metered = match args.model.as_deref().map(Metered::from_spec).transpose() {
        Ok(metered) => metered,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let model: Arc<dyn ChatModel> = match &metered {
        Some(metered) => metered.clone(),
        None => Arc::new(event_planning::scripted_model()),
    };
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
                if let Some(metered) = &metered {
                    print!("{metered}");
                }
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
