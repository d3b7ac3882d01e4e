//! What the eval runner adds to the agent call it runs: the plan generator's `login_form` case
//! (evals/plan_generator_agent.jsonl) replayed from evals/recorded.json through
//! `eval::run_case` (the case's model, the prompt's hash, the recorded answer looked up, the
//! assertions, the verdict), against the same call with the same answer and no runner
//! (`Runtime::call_sub_agent` on a model that returns that answer).
//!
//! ```sh
//! cargo bench -p agent-examples --bench evals -- [ROUNDS] [CASES]
//! ```
//!
//! Each round runs `CASES` cases through the runner, then `CASES` bare calls, back to back, so a
//! burst of load hits both; the figures are the median rounds' nanoseconds per case, and the
//! overhead is their difference.

use agent_contracts::eval::{Case, CaseModel, Recording, Verdict, case_runtime, run_case};
use agent_contracts::model::{BoxFuture, ChatRequest, ChatResponse, ModelError};
use agent_contracts::runtime::CallOptions;
use agent_contracts::{ChatModel, Runtime};
use agent_examples::agents::PlanGeneratorAgent;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const DATASET: &str = include_str!("../../evals/plan_generator_agent.jsonl");
const RECORDED: &str = include_str!("../../evals/recorded.json");
const CASE: &str = "login_form";
const KEY: &str = "plan_generator_agent/login_form";

/// The recorded answer, every time: the bare call's model.
struct Fixed(ChatResponse);

impl ChatModel for Fixed {
    fn complete<'a>(
        &'a self,
        _request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move { Ok(self.0.clone()) })
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let rounds: usize = args.first().map_or(15, |a| a.parse().expect("ROUNDS"));
    let cases: usize = args.get(1).map_or(1_000, |a| a.parse().expect("CASES"));

    let case = Case::parse_dataset(DATASET)
        .expect("the dataset parses")
        .into_iter()
        .find(|c| c.name == CASE)
        .expect("the case is in the dataset");
    let recording = Arc::new(Recording::from_json(RECORDED).expect("the recording parses"));
    let answer: serde_json::Value =
        serde_json::from_str::<serde_json::Value>(RECORDED).unwrap()["answers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["case"] == KEY)
            .expect("the case's answer is recorded")["response"]
            .clone();
    let fixed: Arc<dyn ChatModel> = Arc::new(Fixed(serde_json::from_value(answer).unwrap()));
    let kwargs = case.kwargs_text();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let (mut runner, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let started = Instant::now();
        for _ in 0..cases {
            let run = runtime.block_on(eval_case(&recording, &case));
            assert_eq!(run, Verdict::Pass);
        }
        runner.push(started.elapsed().as_nanos() / cases as u128);
        let started = Instant::now();
        for _ in 0..cases {
            runtime.block_on(bare_call(&fixed, &kwargs));
        }
        bare.push(started.elapsed().as_nanos() / cases as u128);
    }
    runner.sort_unstable();
    bare.sort_unstable();
    let (runner, bare) = (runner[rounds / 2], bare[rounds / 2]);
    println!(
        "{{\"rounds\": {rounds}, \"cases\": {cases}, \"runner_ns\": {runner}, \"call_ns\": {bare}, \"overhead_ns\": {}}}",
        runner as i128 - bare as i128
    );
}

/// One case through the runner, replayed.
#[inline(never)]
async fn eval_case(recording: &Arc<Recording>, case: &Case) -> Verdict {
    let runtime = case_runtime(CaseModel::replay(recording.clone(), KEY, 1));
    let run = run_case(&runtime, &PlanGeneratorAgent, case, None).await;
    black_box(run).verdict
}

/// The same call with the same answer, no runner.
#[inline(never)]
async fn bare_call(model: &Arc<dyn ChatModel>, kwargs: &str) {
    let runtime = Runtime::new(model.clone());
    let output = runtime
        .call_sub_agent(&PlanGeneratorAgent, kwargs, CallOptions::default())
        .await;
    assert!(output.is_ok(), "{:?}", output.err());
    black_box(output.ok());
}
