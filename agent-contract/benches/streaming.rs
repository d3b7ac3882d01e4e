//! Streaming: the output contract checked on an answer as it arrives, and the typed partial
//! value of what arrived.
//!
//! ```sh
//! cargo bench -p agent-contract --bench streaming
//! ```
//!
//! The answer is the plan generator's in the main job (299 bytes), fed in 16-byte chunks as
//! a provider's deltas arrive:
//! - `prefix_check_per_chunk`: every chunk through `PrefixCheck::feed` (the whole answer,
//!   counted per chunk); `full_check_once` is the check the runtime runs at the end anyway
//!   (`extract_json` and `Contract::check` on the whole answer), for scale;
//! - `broken_answer_verdict`: the story's first answer (`"status": "done"`) until the verdict,
//!   in its fifth chunk;
//! - `first_partial_value`: from the first chunk to the first typed partial with a field set
//!   (`PartialJson::feed`, then `PartialOutput::partial`);
//! - `partial_per_chunk`: a typed partial after every chunk of the whole answer.

use agent_contracts_contract::{Agent, Limits, PartialJson, PartialOutput, extract_json};
use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use plan_generator_agent::PlanGeneratorAgentOutput;

/// The plan generator, generated as `agent-core` users generate it (this crate alone).
#[derive(agent_contracts_macros::Agent)]
#[agent(
    crate = "::agent_contracts_contract",
    name = "plan_generator_agent",
    input = "../schemas/plan_generator_agent/input.schema.json",
    output = "../schemas/plan_generator_agent/output.schema.json"
)]
/// Writes crawl plans.
struct PlanGeneratorAgent;

const PLAN_ANSWER: &str = r##"{
  "plan_file_path": "plans/login_form_automation.md",
  "status": "success",
  "agent_response_content": "Plan: open the login page, fill #email-input and #password-input (fallbacks: input[name='email'], form input:first-child), submit. Risk: the submit button label is vague (WCAG 2.4.6)."
}"##;

fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + 16).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        out.push(&text[from..to]);
        from = to;
    }
    out
}

fn contract() -> &'static agent_contracts_contract::Contract {
    PlanGeneratorAgent::output_contract().expect("the plan generator has an output contract")
}

fn main() {
    // The contract and its prefix form are compiled once, before any sample.
    let limits = Limits::default();
    let mut check = contract().prefix_check(&limits);
    assert!(chunks(PLAN_ANSWER).iter().all(|c| check.feed(c).is_ok()));
    divan::main();
}

#[divan::bench]
fn prefix_check_per_chunk(bencher: Bencher) {
    let limits = Limits::default();
    let chunks = chunks(PLAN_ANSWER);
    bencher.counter(ItemsCount::new(chunks.len())).bench(|| {
        let mut check = contract().prefix_check(&limits);
        for chunk in &chunks {
            black_box(check.feed(black_box(chunk))).expect("the answer is valid");
        }
    });
}

#[divan::bench]
fn full_check_once(bencher: Bencher) {
    let limits = Limits::default();
    bencher.bench(|| {
        let value = extract_json(black_box(PLAN_ANSWER), &limits).expect("JSON");
        contract().check(&value, &limits).expect("valid");
    });
}

#[divan::bench]
fn broken_answer_verdict(bencher: Bencher) {
    let limits = Limits::default();
    let broken = PLAN_ANSWER.replace("\"success\"", "\"done\"");
    let chunks = chunks(&broken);
    bencher.bench(|| {
        let mut check = contract().prefix_check(&limits);
        let sent = chunks
            .iter()
            .position(|chunk| check.feed(black_box(chunk)).is_err());
        assert_eq!(sent, Some(4));
    });
}

#[divan::bench]
fn first_partial_value(bencher: Bencher) {
    let chunks = chunks(PLAN_ANSWER);
    bencher.bench(|| {
        let mut answer = PartialJson::default();
        for (n, chunk) in chunks.iter().enumerate() {
            answer.feed(black_box(chunk));
            let partial = PlanGeneratorAgentOutput::partial(&answer);
            if partial.plan_file_path.is_some() {
                return n;
            }
        }
        unreachable!("the answer has a plan path")
    });
}

#[divan::bench]
fn partial_per_chunk(bencher: Bencher) {
    let chunks = chunks(PLAN_ANSWER);
    bencher.counter(ItemsCount::new(chunks.len())).bench(|| {
        let mut answer = PartialJson::default();
        for chunk in &chunks {
            answer.feed(black_box(chunk));
            black_box(PlanGeneratorAgentOutput::partial(&answer));
        }
    });
}
