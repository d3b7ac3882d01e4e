//! A burst of 1,000 `tools/call`s against `agent-mcp` over streamable HTTP on loopback, 50 in
//! flight at a time, on the canned model: latency percentiles and the process's peak memory.
//!
//! ```sh
//! cargo bench -p agent-examples --bench mcp_burst
//! ```
//!
//! Half the calls are valid (the plan generator runs and answers), half break the input
//! contract (the retry error comes back as an `isError` result). Client and server share the
//! process, so the peak resident set covers both.

use agent_examples::{agents, pipeline};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CALLS: usize = 1_000;
const IN_FLIGHT: usize = 50;
const FIXTURE: &str = include_str!("../../tests/fixtures/plan_generator/kwargs.json");

/// The process's peak resident set, from `/proc/self/status` (`VmHWM`), in kB.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(burst());
}

async fn burst() {
    let server = agent_contracts::mcp::AgentServer::new(
        agents::AGENTS.to_vec(),
        Arc::new(pipeline::canned_model()),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(server.serve_http_on(listener));
    agent_contracts::mcp::tls::install_crypto_provider();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = Arc::new(().serve(transport).await.expect("a session"));
    let valid: serde_json::Map<String, Value> = serde_json::from_str(FIXTURE).expect("JSON");
    let mut broken = valid.clone();
    broken.remove("collected_information");
    let before = peak_rss_kb();
    let start = Instant::now();
    let mut latencies: Vec<Duration> = Vec::with_capacity(CALLS);
    let mut errors = 0;
    for chunk in (0..CALLS).collect::<Vec<_>>().chunks(IN_FLIGHT) {
        let mut tasks = tokio::task::JoinSet::new();
        for &i in chunk {
            let client = client.clone();
            let mut params = CallToolRequestParams::new("run_plan_generator_agent");
            params.arguments = Some(if i % 2 == 0 {
                valid.clone()
            } else {
                broken.clone()
            });
            tasks.spawn(async move {
                let started = Instant::now();
                let result = client.call_tool(params).await;
                (started.elapsed(), result.map(|r| r.is_error == Some(true)))
            });
        }
        while let Some(joined) = tasks.join_next().await {
            let (latency, result) = joined.expect("the task ran");
            latencies.push(latency);
            match result {
                Ok(true) => errors += 1,
                Ok(false) => {}
                Err(e) => panic!("a call failed: {e}"),
            }
        }
    }
    let total = start.elapsed();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "{CALLS} calls ({IN_FLIGHT} in flight; {errors} retry errors) in {:.2} s: {:.0} calls/s; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; peak RSS {} kB before, {} kB after",
        total.as_secs_f64(),
        CALLS as f64 / total.as_secs_f64(),
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3,
        before.unwrap_or(0),
        peak_rss_kb().unwrap_or(0)
    );
    assert_eq!(errors, CALLS / 2);
}
