//! What `cargo bench -p agent-examples` and `agent-demo bench` share: the deterministic
//! payloads, the per-call path and its two floors, and the interleaved timing loop.
//!
//! The per-call path is [`DynAgent::prepare`] on kwargs text: parse within the limits, split
//! and merge, check the contract, deserialize the typed input, render the user prompt. A call
//! that breaks the contract ends in the retry error serialized to JSON (what a runtime sends back
//! to the caller), so the invalid path is measured to the same point a caller sees.
//!
//! The floors are what no implementation can avoid: `serde_json::from_str::<Value>` of the same
//! text (the parse every call needs), and `serde_json::from_str::<IgnoredAny>` (lexing alone).
//! Each result is dropped inside the timed call, so freeing is part of every figure.

use crate::agents::PlanGeneratorAgent;
use crate::agents::plan_generator_agent::PlanGeneratorAgentInput;
use agent_contracts::{DynAgent, Limits, PrepareError};
use agent_contracts::{RawJson, RawObject};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The agent names the synthetic payload cycles through (the plan generator's enum).
const AGENT_NAMES: [&str; 4] = [
    "discovery_agent",
    "selector_agent",
    "accessibility_agent",
    "data_prep_agent",
];

/// Kwargs for `plan_generator_agent` with `items` collected outputs, as compact JSON.
///
/// A fixed pattern, no randomness: the same `items` always gives the same bytes. Each item's
/// `output` nests objects and arrays four levels deep and holds strings (some multi-line, some
/// that look like markdown structure), integers, decimals, booleans, nulls and empty
/// containers; 50 items make about 200 KB.
pub fn synthetic_kwargs(items: usize) -> String {
    let collected: Vec<Value> = (0..items).map(synthetic_item).collect();
    let kwargs = json!({
        "task": "Generate Crawl Plan",
        "run_identifier": format!("synthetic-{items}"),
        "target_url": "https://shop.example.com/catalogue",
        "task_name": "catalogue_crawl",
        "collected_information": collected,
    });
    kwargs.to_string()
}

fn synthetic_item(i: usize) -> Value {
    let agent = AGENT_NAMES[i % AGENT_NAMES.len()];
    let kinds = ["input", "button", "link", "select"];
    let elements: Vec<Value> = (0..7)
        .map(|j| {
            json!({
                "element_id": format!("el-{i}-{j}"),
                "type": kinds[j % kinds.len()],
                "label": format!("Field {j} of section {i}"),
                "attributes": {
                    "name": format!("field_{j}"),
                    "placeholder": format!("Enter value {j}"),
                    "required": j % 2 == 0,
                    "max_length": 64 + j,
                    "aria-describedby": if j % 3 == 0 { Value::Null } else { json!(format!("hint-{i}-{j}")) },
                },
                "validation_rules": ["not_empty", format!("max_length_{}", 64 + j)],
                "bounding_box": {"x": 12.5 * j as f64, "y": 40 + 36 * j, "width": 320, "height": 32},
                "selectors": {
                    "css": format!("#el-{i}-{j}"),
                    "xpath": format!("//form[@id='section-{i}']//*[@id='el-{i}-{j}']"),
                    "confidence": 0.95 - 0.05 * (j % 4) as f64,
                    "fallback": [format!("[name='field_{j}']"), format!("form > :nth-child({})", j + 1)],
                },
            })
        })
        .collect();
    let mut output = json!({
            "page_title": format!("Catalogue page {i} - Shop"),
            "url": format!("https://shop.example.com/catalogue?page={i}&sort=price"),
            "discovered_elements": elements,
            "pagination": {"current": i + 1, "next": format!("/catalogue?page={}", i + 2), "has_more": true},
            "notes": format!("Section {i} loads lazily.\n# Not a heading\n- not a list item\nWait for the spinner to go."),
            "warnings": [],
            "metadata": {"scan_duration_ms": 200 + i, "framework_detected": "React", "retries": null, "extra": {}},
    });
    // What the producer's own output contract requires beside the common part, so that every
    // item passes the plan generator's contract (which checks each output against it).
    let required = match agent {
        "selector_agent" => json!({
            "strategy": "id-first-with-attribute-fallback",
            "selectors": {format!("el-{i}-0"): {"css": format!("#el-{i}-0"), "confidence": 0.90}},
        }),
        "accessibility_agent" => json!({
            "overall_score": 70 + i % 30,
            "compliance_level": "AA",
            "issues": [{"severity": "warning", "wcag_criterion": "2.4.6", "affected_elements": [format!("el-{i}-1")]}],
        }),
        _ => json!({}),
    };
    if let (Value::Object(output), Value::Object(required)) = (&mut output, required) {
        output.extend(required);
    }
    json!({
        "agent_name": agent,
        "description": format!("Run {i} of {agent}: found 7 elements in section {i}, with selectors and checks"),
        "output": output,
    })
}

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

/// The plan generator with its compiled contract checks replaced by "pass": its input says
/// `Some(true)` from
/// [`AgentInput::satisfies_contract`](agent_contracts::AgentInput::satisfies_contract) without
/// running them. Beside the real agent (whose generated checks run), it shows what the checks
/// themselves cost; figures from it are labelled "with checks assumed passed". Everything else
/// (contract, prompt) is the plan generator's.
#[derive(Debug, Clone, Copy, Default)]
pub struct AssumedChecksPlanGenerator;

/// The plan generator's typed input, with its compiled checks assumed to pass.
#[derive(Debug, serde::Deserialize)]
#[serde(transparent)]
pub struct AssumedChecksInput(pub PlanGeneratorAgentInput);

impl agent_contracts::AgentInput for AssumedChecksInput {
    fn input_contract() -> &'static agent_contracts::Contract {
        <PlanGeneratorAgentInput as agent_contracts::AgentInput>::input_contract()
    }

    const COMPILED_CHECKS: bool = true;
    fn satisfies_contract(&self) -> Option<bool> {
        Some(true)
    }
}

impl agent_contracts::Agent for AssumedChecksPlanGenerator {
    const NAME: &'static str = "plan_generator_agent_assumed_checks";
    const DESCRIPTION: &'static str = <PlanGeneratorAgent as agent_contracts::Agent>::DESCRIPTION;
    type Input = AssumedChecksInput;
    type Output = <PlanGeneratorAgent as agent_contracts::Agent>::Output;

    fn output_contract() -> Option<&'static agent_contracts::Contract> {
        <PlanGeneratorAgent as agent_contracts::Agent>::output_contract()
    }

    fn render_user_prompt(
        call: &agent_contracts::ToolCall,
        input: &Self::Input,
    ) -> Result<String, agent_contracts::PromptError> {
        <PlanGeneratorAgent as agent_contracts::Agent>::render_user_prompt(call, &input.0)
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
    fn the_synthetic_payload_is_fixed_valid_and_about_200_kb() {
        let text = synthetic_kwargs(50);
        assert_eq!(text, synthetic_kwargs(50));
        assert!(
            (180_000..240_000).contains(&text.len()),
            "{} bytes",
            text.len()
        );
        let outcome = pipeline(&PlanGeneratorAgent, &text, &Limits::default());
        assert!(
            matches!(outcome, Outcome::Prepared(n) if n > 100_000),
            "{outcome:?}"
        );
    }

    #[test]
    fn without_a_required_field_the_path_ends_in_the_retry_error() {
        let text = without_key(&synthetic_kwargs(2), "target_url").unwrap();
        let outcome = pipeline(&PlanGeneratorAgent, &text, &Limits::default());
        assert!(matches!(outcome, Outcome::Retry(n) if n > 0), "{outcome:?}");
        assert!(without_key("{}", "target_url").is_err());
    }

    #[test]
    fn with_checks_assumed_the_path_renders_the_same_prompt() {
        let limits = Limits::default();
        let text = synthetic_kwargs(3);
        let assumed = AssumedChecksPlanGenerator.prepare(&text, &limits).unwrap();
        let real = PlanGeneratorAgent.prepare(&text, &limits).unwrap();
        assert_eq!(assumed.user_prompt, real.user_prompt);
        assert!(!assumed.call.context_built());
        // The plan generator's compiled checks decide this call (each item's `output` read
        // as its agent's output type, the required agents counted): no `Value`, no validator.
        assert!(!real.call.context_built());
        // A call the type refuses still gets the validator's retry error.
        let broken = without_key(&text, "target_url").unwrap();
        let Err(PrepareError::Retry(error)) = AssumedChecksPlanGenerator.prepare(&broken, &limits)
        else {
            panic!("a call without target_url is refused");
        };
        assert_eq!(error.missing_fields, ["target_url"]);
    }

    #[test]
    fn measure_reports_medians() {
        let text = synthetic_kwargs(1);
        let options = Options {
            iterations: Some(2),
            rounds: 3,
        };
        let report = measure(&PlanGeneratorAgent, &text, options).unwrap();
        assert_eq!(report.iterations, 2);
        assert!(report.floor_ns > 0.0 && report.pipeline_ns > 0.0 && report.ratio > 0.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
