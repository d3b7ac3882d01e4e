//! `agent-contract bench`: the per-call path timed against parsing the same text.
//!
//! The per-call path is [`DynAgent::prepare`] on kwargs text: parse within the limits, check
//! the contract, render the user prompt. A call that breaks the contract ends in the retry
//! error serialized to JSON (what a runtime sends back to the caller), so the invalid path is
//! measured to the same point a caller sees.
//!
//! The floors are what no implementation can avoid: `serde_json::from_str::<Value>` of the same
//! text (the parse every call needs), and `serde_json::from_str::<IgnoredAny>` (lexing alone).
//! Each result is dropped inside the timed call, so freeing is part of every figure. (The
//! examples' `agent-demo bench` and `cargo bench -p agent-examples` time this same loop on the
//! compiled-in agents: their `bench` module includes this file beside their synthetic payloads.)

use agent_contracts::{DynAgent, Limits, contract::PrepareError};
use agent_contracts::{RawJson, RawObject};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// `text` (a JSON object) without its top-level `key`: the invalid path's input. Pretty-printed
/// when `text` spans several lines (as the fixture does), compact otherwise.
pub fn without_key(text: &str, key: &str) -> Result<String, String> {
    let object: RawObject =
        serde_json::from_str(text).map_err(|e| format!("not a JSON object: {e}"))?;
    let entries = object.entries().map_err(|e| e.to_string())?;
    let kept: Vec<(String, RawJson)> = entries
        .iter()
        .filter(|(k, _)| k != key)
        .map(|(k, v)| (k.to_string(), RawJson::from((*v).to_owned())))
        .collect();
    if kept.len() == entries.len() {
        return Err(format!("has no top-level key `{key}`"));
    }
    // The remaining keys in their order, each value as written.
    struct Ordered(Vec<(String, RawJson)>);
    impl serde::Serialize for Ordered {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
        }
    }
    let written = if text.trim().contains('\n') {
        serde_json::to_string_pretty(&Ordered(kept))
    } else {
        serde_json::to_string(&Ordered(kept))
    };
    written.map_err(|e| e.to_string())
}

/// The floor: parse `text` into a `Value`, then drop it. Returns whether it parsed.
#[inline(never)]
pub fn floor(text: &str) -> bool {
    serde_json::from_str::<Value>(black_box(text)).is_ok()
}

/// The lex-only floor: check `text` is JSON without building anything.
#[inline(never)]
pub fn lex(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(black_box(text)).is_ok()
}

/// How a call through the per-call path ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The call passed its contract; the rendered user prompt had this many bytes.
    Prepared(usize),
    /// The call broke its contract; the retry error JSON had this many bytes.
    Retry(usize),
    /// The prompt template failed on valid input.
    PromptFailed,
}

/// The per-call path: [`DynAgent::prepare`], and for a bad call the retry error as JSON text.
#[inline(never)]
pub fn pipeline(agent: &dyn DynAgent, text: &str, limits: &Limits) -> Outcome {
    match agent.prepare(black_box(text), limits) {
        Ok(prepared) => Outcome::Prepared(prepared.user_prompt.len()),
        Err(PrepareError::Retry(error)) => {
            Outcome::Retry(serde_json::to_string(&error).map_or(0, |json| json.len()))
        }
        Err(PrepareError::Prompt(_)) => Outcome::PromptFailed,
    }
}

/// How to measure.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Calls per function per round; `None` picks enough for about 50 ms of pipeline a round.
    pub iterations: Option<usize>,
    /// Rounds; each reports one per-call time per function, and the figures are the medians.
    pub rounds: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            iterations: None,
            rounds: 15,
        }
    }
}

/// Median per-call times of the floors and the pipeline on one text.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The agent measured.
    pub agent: String,
    /// Size of the kwargs text.
    pub bytes: usize,
    /// Calls per function per round.
    pub iterations: usize,
    /// Median nanoseconds per `from_str::<Value>`.
    pub floor_ns: f64,
    /// Median nanoseconds per `from_str::<IgnoredAny>`.
    pub lex_ns: f64,
    /// Median nanoseconds per call of the pipeline.
    pub pipeline_ns: f64,
    /// Median over rounds of pipeline / floor, each round's pair measured back to back.
    pub ratio: f64,
    /// How the pipeline ended on this text.
    pub outcome: Outcome,
}

impl Report {
    /// The one-line JSON the CLI prints.
    pub fn to_json(&self) -> Value {
        json!({
            "agent": self.agent,
            "bytes": self.bytes,
            "iterations": self.iterations,
            "floor_ns": self.floor_ns.round() as u64,
            "lex_ns": self.lex_ns.round() as u64,
            "pipeline_ns": self.pipeline_ns.round() as u64,
            "ratio": (self.ratio * 1000.0).round() / 1000.0,
        })
    }
}

/// Measures `agent` on `text`: after one warm-up call of each function (which also compiles the
/// contract, once per process), `rounds` rounds each time `iterations` calls of the value floor,
/// the lex floor and the pipeline back to back, in an order that rotates from round to round,
/// so that a burst of machine noise hits all three alike. A prompt template failure is an
/// error; a call that breaks the contract measures the retry path.
pub fn measure(agent: &dyn DynAgent, text: &str, options: Options) -> Result<Report, String> {
    let limits = Limits::default();
    // Compiles the contract (once per process) outside every timed or profiled function.
    let _ = agent.input_contract();
    let outcome = pipeline(agent, text, &limits);
    if outcome == Outcome::PromptFailed {
        return Err(format!(
            "the user prompt of `{}` failed to render",
            agent.name()
        ));
    }
    black_box((floor(text), lex(text)));
    let iterations = options
        .iterations
        .unwrap_or_else(|| calibrate(|| pipeline(agent, text, &limits)))
        .max(1);
    let rounds = options.rounds.max(1);
    let (mut floors, mut lexes, mut pipelines, mut ratios) = (
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
    );
    for round in 0..rounds {
        let (mut f, mut l, mut p) = (0.0, 0.0, 0.0);
        for slot in 0..3 {
            match (round + slot) % 3 {
                0 => f = per_call(iterations, || floor(text)),
                1 => l = per_call(iterations, || lex(text)),
                _ => p = per_call(iterations, || pipeline(agent, text, &limits)),
            }
        }
        floors.push(f);
        lexes.push(l);
        pipelines.push(p);
        ratios.push(p / f.max(f64::MIN_POSITIVE));
    }
    Ok(Report {
        agent: agent.name().to_owned(),
        bytes: text.len(),
        iterations,
        floor_ns: median(&mut floors),
        lex_ns: median(&mut lexes),
        pipeline_ns: median(&mut pipelines),
        ratio: median(&mut ratios),
        outcome,
    })
}

/// Nanoseconds per call of `f` over `n` calls, each result dropped inside the timing.
fn per_call<T>(n: usize, mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// Enough calls of `f` for about 50 ms.
fn calibrate<T>(mut f: impl FnMut() -> T) -> usize {
    const TARGET: Duration = Duration::from_millis(50);
    let mut n = 1usize;
    loop {
        let start = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        let took = start.elapsed();
        if took >= TARGET / 4 || n >= 1 << 20 {
            let per = took.as_nanos().max(1) as f64 / n as f64;
            return ((TARGET.as_nanos() as f64 / per).ceil() as usize).clamp(1, 1 << 20);
        }
        n *= 2;
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_key_the_rest_stays_in_order_and_as_written() {
        let text = "{\"b\": 1.50, \"a\": [1], \"c\": null}";
        assert_eq!(without_key(text, "a").unwrap(), "{\"b\":1.50,\"c\":null}");
        assert_eq!(
            without_key("{\n \"a\": 1,\n \"b\": 2\n}", "a").unwrap(),
            "{\n  \"b\": 2\n}"
        );
        assert!(without_key("{}", "a").is_err());
        assert!(without_key("[1]", "a").is_err());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
