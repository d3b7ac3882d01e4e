//! The per-call path of `plan_generator_agent` beside its floors, with allocations counted.
//!
//! ```sh
//! cargo bench -p agent-examples --bench per_call
//! ```
//!
//! Each case module times three functions on the same text: `floor_lex`
//! (`from_str::<IgnoredAny>`), `floor_value` (`from_str::<Value>`) and `pipeline`
//! (`DynAgent::prepare`, plus `serde_json::to_string` of the retry error on the invalid cases).
//! The cases: the fixture kwargs (`tests/fixtures/plan_generator/kwargs.json`), the
//! deterministic 50-item payload (about 200 KB), and both without `target_url` (a required
//! field). `stages` splits the valid 200 KB pipeline into its steps. `pipeline_checks_assumed_passed`
//! is the same path with the contract's compiled checks assumed to pass
//! ([`bench::AssumedChecksPlanGenerator`]): no `Value`, no validator on a valid call.
//!
//! Divan's `AllocProfiler` is the global allocator, so every figure counts allocations (and
//! pays the same small counting cost). The ratios of BENCHMARKS.md come from
//! `agent-demo bench`, which interleaves the floor and the pipeline round by round.

use agent_contracts::{Agent, AgentInput, Limits, ToolCall};
use agent_examples::agents::{PlanGeneratorAgent, plan_generator_agent::PlanGeneratorAgentInput};
use agent_examples::bench;
use divan::counter::BytesCount;
use divan::{AllocProfiler, Bencher, black_box};
use std::sync::OnceLock;

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const FIXTURE: &str = include_str!("../../tests/fixtures/plan_generator/kwargs.json");
/// The required field the invalid cases lack.
const DROPPED: &str = "target_url";

fn main() {
    // Compile the contract (once per process) before any sample, and check the cases are what
    // their names say.
    let limits = Limits::default();
    for (text, valid) in [
        (fixture::text(), true),
        (synthetic_50::text(), true),
        (fixture_invalid::text(), false),
        (synthetic_50_invalid::text(), false),
    ] {
        let outcome = bench::pipeline(&PlanGeneratorAgent, text, &limits);
        let prepared = matches!(outcome, bench::Outcome::Prepared(_));
        assert_eq!(prepared, valid, "{outcome:?} on {} bytes", text.len());
    }
    divan::main();
}

macro_rules! case {
    ($(#[$doc:meta])* $name:ident, $text:expr) => {
        $(#[$doc])*
        mod $name {
            use super::*;

            pub fn text() -> &'static str {
                static TEXT: OnceLock<String> = OnceLock::new();
                TEXT.get_or_init(|| $text)
            }

            #[divan::bench]
            fn floor_lex(bencher: Bencher) {
                let text = text();
                bencher
                    .counter(BytesCount::of_str(text))
                    .bench(|| bench::lex(black_box(text)));
            }

            #[divan::bench]
            fn floor_value(bencher: Bencher) {
                let text = text();
                bencher
                    .counter(BytesCount::of_str(text))
                    .bench(|| bench::floor(black_box(text)));
            }

            #[divan::bench]
            fn pipeline(bencher: Bencher) {
                let text = text();
                let limits = Limits::default();
                bencher
                    .counter(BytesCount::of_str(text))
                    .bench(|| bench::pipeline(&PlanGeneratorAgent, black_box(text), &limits));
            }

            /// The same path with the contract's compiled checks assumed to pass.
            #[divan::bench]
            fn pipeline_checks_assumed_passed(bencher: Bencher) {
                let text = text();
                let limits = Limits::default();
                bencher.counter(BytesCount::of_str(text)).bench(|| {
                    bench::pipeline(&bench::AssumedChecksPlanGenerator, black_box(text), &limits)
                });
            }
        }
    };
}

case!(
    /// tests/fixtures/plan_generator/kwargs.json, as checked in.
    fixture,
    FIXTURE.to_owned()
);
case!(
    /// The fixture without `target_url`: the retry path.
    fixture_invalid,
    bench::without_key(FIXTURE, DROPPED).expect("the fixture has target_url")
);
case!(
    /// 50 collected items, about 200 KB of compact JSON.
    synthetic_50,
    bench::synthetic_kwargs(50)
);
case!(
    /// The 50-item payload without `target_url`: the retry path.
    synthetic_50_invalid,
    bench::without_key(&bench::synthetic_kwargs(50), DROPPED).expect("the payload has target_url")
);

/// The valid 200 KB pipeline, one step at a time, each on the previous step's result.
mod stages {
    use super::*;

    fn call() -> &'static ToolCall {
        static CALL: OnceLock<ToolCall> = OnceLock::new();
        CALL.get_or_init(|| {
            ToolCall::from_json_str(synthetic_50::text(), &agent_contracts::Limits::default())
                .expect("valid kwargs")
        })
    }

    fn input() -> &'static PlanGeneratorAgentInput {
        static INPUT: OnceLock<PlanGeneratorAgentInput> = OnceLock::new();
        INPUT.get_or_init(|| {
            PlanGeneratorAgentInput::from_call(call(), &agent_contracts::Limits::default())
                .expect("valid input")
        })
    }

    /// Text to `ToolCall`: size and depth scan, parse, split and merge.
    #[divan::bench]
    fn s1_parse_split(bencher: Bencher) {
        let text = synthetic_50::text();
        let limits = Limits::default();
        bencher.bench(|| ToolCall::from_json_str(black_box(text), &limits).is_ok());
    }

    /// The contract check (`jsonschema`'s `is_valid`).
    #[divan::bench]
    fn s2_check(bencher: Bencher) {
        let contract = PlanGeneratorAgentInput::input_contract();
        let context = call().context();
        bencher.bench(|| {
            contract
                .check(black_box(context), &agent_contracts::Limits::default())
                .is_ok()
        });
    }

    /// The typed input, deserialized from the call's text (each entry parsed from its slice).
    #[divan::bench]
    fn s3_typed(bencher: Bencher) {
        let call = call();
        bencher.bench(|| {
            black_box(call)
                .deserialize_context::<PlanGeneratorAgentInput>()
                .is_ok()
        });
    }

    /// The askama template with `|markdown` on each output.
    #[divan::bench]
    fn s4_render(bencher: Bencher) {
        let (call, input) = (call(), input());
        bencher.bench(|| {
            <PlanGeneratorAgent as Agent>::render_user_prompt(call, black_box(input))
                .map_or(0, |prompt| prompt.len())
        });
    }
}
