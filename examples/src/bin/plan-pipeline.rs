//! The main job: prints the transcript and exits 0 when the main agent finishes with a plan.
//! Offline on the scripted model by default; `--model openai:<model>` or
//! `--model anthropic:<model>` runs it on a real model configured from the environment
//! (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`) and ends
//! with the run's token usage.

use agent_core::model::BoxFuture;
use agent_core::{ChatModel, ChatRequest, ChatResponse, ModelError, Runtime, Usage};
use agent_examples::pipeline;
use clap::Parser;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

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
    let (runtime, outcome, usage) = match args.model {
        None => {
            let (runtime, outcome) = pipeline::run(Arc::new(pipeline::scripted_model())).await;
            (runtime, outcome, None)
        }
        Some(spec) => {
            let model = match agent_llm::from_spec(&spec) {
                Ok(model) => Arc::new(Metered::new(model)),
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
            (runtime, outcome, Some(model.total()))
        }
    };
    print!("{}", runtime.transcript());
    if let Some((calls, usage)) = usage {
        println!(
            "=== usage ===\n{calls} model calls, {} input tokens ({} cached), {} output tokens\n",
            usage.input_tokens, usage.cached_tokens, usage.output_tokens
        );
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

/// Adds up the usage of every call.
struct Metered {
    inner: Arc<dyn ChatModel>,
    total: Mutex<(usize, Usage)>,
}

impl Metered {
    fn new(inner: Arc<dyn ChatModel>) -> Self {
        Self {
            inner,
            total: Mutex::new((0, Usage::default())),
        }
    }

    fn total(&self) -> (usize, Usage) {
        *self
            .total
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ChatModel for Metered {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let response = self.inner.complete(request).await?;
            let mut total = self
                .total
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            total.0 += 1;
            total.1 += response.usage.unwrap_or_default();
            Ok(response)
        })
    }
}
