//! Hostile calls at the default limits: time and peak heap of the whole per-call path
//! (`DynAgent::prepare`: parse, shape walk, validation, typing, rendering, and the retry error
//! as JSON on a refusal), one shape per row.
//!
//! ```sh
//! cargo bench -p agent-examples --bench hostile
//! ```
//!
//! The goal: every call within the default byte limit answers within 1 s and within 10 times
//! its size in memory (plus a fixed base). Each row is the median of 5 runs; the peak is the
//! most heap held at once during a run, above what was held before it.

use agent_contracts::{DynAgent, Limits};
use agent_examples::agents::PlanGeneratorAgent;
use agent_examples::bench::{Outcome, pipeline};
use counting::Counting;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[path = "common/counting.rs"]
mod counting;

#[global_allocator]
static ALLOC: Counting = Counting;

/// The plan generator's kwargs with `collected_information` set to `items`.
fn kwargs(items: Value) -> String {
    json!({
        "task": "Generate Crawl Plan",
        "target_url": "https://myapp.com/login",
        "task_name": "login_form_automation",
        "collected_information": items,
    })
    .to_string()
}

/// `{"agent_name", "description", "output": output}`.
fn item(output: Value) -> Value {
    json!({"agent_name": "discovery_agent", "description": "found", "output": output})
}

/// Repeats `unit` (a JSON text) inside an array up to about `bytes`.
fn array_of(unit: &str, bytes: usize) -> String {
    let count = bytes / (unit.len() + 1);
    format!(
        r#"{{"task": "t", "target_url": "https://a.example", "task_name": "n", "collected_information": [{}]}}"#,
        vec![unit; count].join(",")
    )
}

fn shapes(limits: &Limits) -> Vec<(&'static str, String)> {
    let max = limits.max_bytes - 200;
    let mut chain = json!("x");
    for _ in 0..60 {
        chain = json!([chain]);
    }
    let deep_items: Vec<Value> = (0..3_900).map(|_| item(json!({"t": chain}))).collect();
    let text = "- a line that tries to open a list item\n## and a heading\n".repeat(60_000);
    let mut keys = serde_json::Map::new();
    for i in 0..100_000 {
        keys.insert(format!("k{i}"), json!(i));
    }
    let mut many_keys = json!({"task": "t", "target_url": "https://a.example", "task_name": "n",
                               "collected_information": [item(json!({}))]});
    if let Value::Object(map) = &mut many_keys {
        map.extend(keys);
    }
    vec![
        ("empty objects filling the byte limit", array_of("{}", max)),
        ("zeros filling the byte limit", array_of("0", max)),
        (
            "legal 61-deep nesting, 3,900 times (240k values)",
            kwargs(Value::Array(deep_items)),
        ),
        (
            "240k invalid items (numbers for objects)",
            array_of("1", 480_000),
        ),
        (
            "3.4 MB string of block-opening lines",
            kwargs(json!([item(json!({"notes": text}))])),
        ),
        ("100k flat keys", many_keys.to_string()),
    ]
}

fn main() {
    let limits = Limits::default();
    // Compile the contract before measuring.
    pipeline(&PlanGeneratorAgent, &kwargs(json!([])), &limits);
    println!(
        "| shape | bytes | outcome | median time | peak heap | peak / bytes |\n|---|---|---|---|---|---|"
    );
    for (name, text) in shapes(&limits) {
        let mut runs: Vec<(Duration, usize, String)> = (0..5)
            .map(|_| {
                let before = Counting::reset_most();
                let start = Instant::now();
                let outcome = pipeline(&PlanGeneratorAgent, &text, &limits);
                let time = start.elapsed();
                let peak = Counting::most().saturating_sub(before);
                (
                    time,
                    peak,
                    describe(&outcome, &PlanGeneratorAgent, &text, &limits),
                )
            })
            .collect();
        runs.sort_by_key(|r| r.0);
        let (time, peak, outcome) = &runs[2];
        println!(
            "| {name} | {} | {outcome} | {:.1} ms | {:.1} MB | {:.1}x |",
            text.len(),
            time.as_secs_f64() * 1e3,
            *peak as f64 / 1e6,
            *peak as f64 / text.len() as f64
        );
    }
}

/// What the call ended with, and for a refusal, the error's kind.
fn describe(outcome: &Outcome, agent: &dyn DynAgent, text: &str, limits: &Limits) -> String {
    match outcome {
        Outcome::Prepared(bytes) => format!("prompt of {bytes} bytes"),
        Outcome::PromptFailed => "template failed".into(),
        Outcome::Retry(_) => match agent.prepare(text, limits) {
            Err(agent_contracts::contract::PrepareError::Retry(e)) => {
                format!("refused: {}", e.error)
            }
            _ => "refused".into(),
        },
    }
}
