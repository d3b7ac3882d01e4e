//! What a lossless repair costs against the retry it saves (issue 52): one
//! `Runtime::call::<PlanGeneratorAgent>` on the fixture's kwargs whose answer is clean, slipped
//! and repaired, or slipped and retried (repairs off, a second answer asked for); the same with
//! slipped kwargs; and the repairs alone.
//!
//! ```sh
//! cargo bench -p agent-examples --bench repair -- [ROUNDS] [ITERATIONS]
//! ```
//!
//! Each round times `ITERATIONS` runs of each case back to back, the cases interleaved round by
//! round; the figure is the median round's nanoseconds per run. Every call builds its own
//! runtime and scripted model. It prints one JSON line per case, then the bytes the retried
//! call sent the model (a real provider bills the retry's prompt and waits for its answer:
//! what a repair saves on top of the local work timed here).

use agent_contracts::contract::{Repairs, repair_answer, repair_kwargs};
use agent_contracts::{Agent, ChatModel};
use agent_contracts::{AgentInput, Config, Limits, Message, Runtime, ScriptedModel};
use agent_examples::agents::PlanGeneratorAgent;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const FIXTURE: &str = include_str!("../../tests/fixtures/plan_generator/kwargs.json");
const GOOD: &str = r#"{"plan_file_path": "plans/login.md", "status": "success", "agent_response_content": "Fill both inputs, submit."}"#;
/// The answer with three syntax slips and an enum value in the wrong case.
const SLIPPED: &str = "```json\n{plan_file_path: 'plans/login.md', \"status\": \"Success\", \"agent_response_content\": \"Fill both inputs, submit.\",}\n```";

#[derive(Clone, Copy, Debug)]
enum Case {
    /// A clean call and a clean answer: the valid path.
    Clean,
    /// A slipped answer, repaired: one model call.
    Repaired,
    /// A slipped answer with repairs off: retried, two model calls.
    Retried,
    /// Slipped kwargs (a bare key, a trailing comma), repaired, and a clean answer.
    RepairedCall,
    /// `repair_answer` of the slipped answer alone.
    RepairAnswer,
    /// `repair_kwargs` of the slipped kwargs alone.
    RepairKwargs,
}

const CASES: [Case; 6] = [
    Case::Clean,
    Case::Repaired,
    Case::Retried,
    Case::RepairedCall,
    Case::RepairAnswer,
    Case::RepairKwargs,
];

fn slipped_kwargs() -> String {
    let text = FIXTURE.replacen("\"task_name\":", "task_name:", 1);
    let end = text.rfind('}').expect("an object");
    format!("{},{}", &text[..end], &text[end..])
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let rounds: usize = args.first().map_or(9, |a| a.parse().expect("ROUNDS"));
    let iterations: usize = args.get(1).map_or(200, |a| a.parse().expect("ITERATIONS"));
    let kwargs = slipped_kwargs();
    let executor = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut per_case = vec![Vec::with_capacity(rounds); CASES.len()];
    for _ in 0..rounds {
        for (i, case) in CASES.iter().enumerate() {
            let started = Instant::now();
            for _ in 0..iterations {
                executor.block_on(once(*case, &kwargs));
            }
            per_case[i].push(started.elapsed().as_nanos() / iterations as u128);
        }
    }
    for (case, mut times) in CASES.iter().zip(per_case) {
        times.sort_unstable();
        println!(
            "{{\"case\": \"{case:?}\", \"rounds\": {rounds}, \"iterations\": {iterations}, \"median_ns\": {}, \"min_ns\": {}}}",
            times[rounds / 2],
            times[0]
        );
    }
    // What the retry sent the model: every request's messages, in bytes.
    let model = Arc::new(ScriptedModel::default().script(
        "plan_generator_agent",
        [Message::assistant(SLIPPED), Message::assistant(GOOD)],
    ));
    let config = Config::default().with_repairs(Repairs::none());
    let runtime = Runtime::with_config(model.clone() as Arc<dyn ChatModel>, config);
    executor
        .block_on(runtime.call::<PlanGeneratorAgent>(FIXTURE))
        .unwrap();
    let sizes: Vec<usize> = model
        .requests_of(PlanGeneratorAgent::NAME)
        .iter()
        .map(|r| r.messages.iter().map(|m| m.content.len()).sum())
        .collect();
    println!("{{\"retried_call_request_bytes\": {sizes:?}}}");
}

/// One run of `case`, start to end.
#[inline(never)]
async fn once(case: Case, slipped: &str) {
    let answers = |first: &'static str| {
        Arc::new(ScriptedModel::default().script(
            "plan_generator_agent",
            [Message::assistant(first), Message::assistant(GOOD)],
        )) as Arc<dyn ChatModel>
    };
    let limits = Limits::default();
    match case {
        Case::Clean | Case::Repaired | Case::Retried | Case::RepairedCall => {
            let (first, repairs, kwargs) = match case {
                Case::Clean => (GOOD, Repairs::all(), FIXTURE),
                Case::Repaired => (SLIPPED, Repairs::all(), FIXTURE),
                Case::Retried => (SLIPPED, Repairs::none(), FIXTURE),
                _ => (GOOD, Repairs::all(), slipped),
            };
            let runtime =
                Runtime::with_config(answers(first), Config::default().with_repairs(repairs));
            let output = runtime.call::<PlanGeneratorAgent>(kwargs).await;
            assert!(output.is_ok(), "{case:?}: {:?}", output.err());
            black_box(output.ok());
        }
        Case::RepairAnswer => {
            let contract = PlanGeneratorAgent::output_contract();
            let repaired = repair_answer(SLIPPED, contract, Repairs::all(), &limits);
            assert!(repaired.is_some());
            black_box(repaired);
        }
        Case::RepairKwargs => {
            let contract = <PlanGeneratorAgent as Agent>::Input::input_contract();
            let repaired = repair_kwargs(slipped, contract, Repairs::all(), &limits);
            assert!(repaired.is_some());
            black_box(repaired);
        }
    }
}
