//! What the telemetry costs a call: one agent call and one run of the main job, on the scripted
//! model, with no `tracing` subscriber (the spans compiled in and nobody listening) and, with the
//! `otel` feature, with the OpenTelemetry export on (the layer, the batch span processor and an
//! OTLP/HTTP exporter sending to a loopback receiver that answers 200).
//!
//! ```sh
//! cargo bench -p agent-examples --bench telemetry -- [none|otel] [call|job] [ROUNDS] [ITERATIONS]
//! cargo bench -p agent-examples --features otel --bench telemetry -- otel call
//! # instructions per call, whatever else the machine runs:
//! valgrind --tool=callgrind --toggle-collect='telemetry::once' target/release/deps/telemetry-<hash> none call 1 21
//! ```
//!
//! Each round times `ITERATIONS` calls back to back and prints nothing; the figure is the median
//! round's nanoseconds per call. Every call builds its own runtime (and, for the job, its own
//! scripted model), so the transcript never grows across calls. The file builds without the
//! `otel` feature too, so the same bench runs on a tree from before the telemetry existed.

use agent_contracts::{ChatModel, Runtime};
use agent_examples::agents::PlanGeneratorAgent;
use agent_examples::pipeline;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const FIXTURE: &str = include_str!("../../tests/fixtures/plan_generator/kwargs.json");

/// The guard of the export when it is on (the `otel` feature); nothing to hold without it.
#[cfg(feature = "otel")]
type Export = agent_contracts::otel::Telemetry;
#[cfg(not(feature = "otel"))]
type Export = ();

#[derive(Clone, Copy, PartialEq)]
enum Work {
    /// `Runtime::call::<PlanGeneratorAgent>` on the fixture's kwargs: one checked call, one
    /// rendered prompt, one model answer checked against the output contract.
    Call,
    /// The main job: the main agent's loop, four sub-agents, one retried call.
    Job,
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let export = args.first().map_or("none", String::as_str);
    let work = match args.get(1).map_or("call", String::as_str) {
        "call" => Work::Call,
        "job" => Work::Job,
        other => panic!("unknown work `{other}`: call or job"),
    };
    let rounds: usize = args.get(2).map_or(15, |a| a.parse().expect("ROUNDS"));
    let iterations: usize = args.get(3).map_or(200, |a| a.parse().expect("ITERATIONS"));

    let _export: Option<Export> = match export {
        "none" => None,
        #[cfg(feature = "otel")]
        "otel" => Some(export_on()),
        other => panic!("unknown export `{other}` (otel needs --features otel)"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut per_call = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        for _ in 0..iterations {
            runtime.block_on(once(work));
        }
        per_call.push(started.elapsed().as_nanos() / iterations as u128);
    }
    per_call.sort_unstable();
    println!(
        "{{\"export\": \"{export}\", \"work\": \"{}\", \"rounds\": {rounds}, \"iterations\": {iterations}, \"median_ns\": {}, \"min_ns\": {}}}",
        if work == Work::Call { "call" } else { "job" },
        per_call[rounds / 2],
        per_call[0],
    );
}

/// One call or one job, start to end: what callgrind's `--toggle-collect` counts.
#[inline(never)]
async fn once(work: Work) {
    match work {
        Work::Call => {
            let model: Arc<dyn ChatModel> = Arc::new(pipeline::canned_model());
            let output = Runtime::new(model)
                .call::<PlanGeneratorAgent>(FIXTURE)
                .await;
            assert!(output.is_ok(), "{:?}", output.err());
            black_box(output.ok());
        }
        Work::Job => {
            let (runtime, outcome) = pipeline::run(Arc::new(pipeline::scripted_model())).await;
            assert!(outcome.is_ok(), "{:?}", outcome.err());
            black_box((runtime, outcome.ok()));
        }
    }
}

/// Installs the export as the global subscriber, sending to a receiver on loopback that
/// answers every request with 200 and an empty body (an empty protobuf message); the guard
/// flushes when `main` ends.
#[cfg(feature = "otel")]
fn export_on() -> agent_contracts::otel::Telemetry {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let server = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        server.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = axum::Router::new().fallback(|| async { axum::http::StatusCode::OK });
            axum::serve(listener, app).await.unwrap();
        });
    });
    // SAFETY: set before any other thread of this process reads the environment (the
    // receiver's thread does not).
    unsafe { std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{address}")) };
    let telemetry = agent_contracts::otel::Telemetry::from_env("telemetry-bench").unwrap();
    tracing_subscriber::registry()
        .with(telemetry.layer())
        .init();
    telemetry
}
