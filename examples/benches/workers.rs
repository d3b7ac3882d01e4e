//! Workers draining one PostgreSQL store: runs per second for 1, 4 and 16 workers on the
//! canned model (no model delay), and the latency of `claim_next`.
//!
//! ```sh
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!     cargo bench -p agent-examples --bench workers [-- RUNS [ROUNDS]]
//! ```
//!
//! Per worker count, in a schema of its own: `RUNS` event-planning runs (200 unless given) are
//! enqueued ([`Runner::enqueue`](agent_contracts::Runner::enqueue)); the workers drain them to the
//! catering specialist's question; every run is answered
//! ([`Runner::submit_answer`](agent_contracts::Runner::submit_answer), not timed); the workers
//! drain them again to the end. A run is one enqueued run taken to its end: 7 model calls
//! (venue, budget, catering asks, catering, logistics, synthesis) and 7 saves, plus 2 claims.
//! Each worker is what one `event-planning --worker --concurrency 1` process is: its own lease
//! and its own pool (of `PostgresStore::connect_in_schema`), in this process as a task. A
//! worker stops when nothing is runnable (every run was enqueued or answered before it
//! started). `claim_next` is timed through a store that wraps the real one.
//!
//! Prints one line per worker count and round: runs, workers, seconds, runs per second, and
//! claim latency p50/p99 (ms) over every claim of the round.

use agent_contracts::store::PostgresStore;
use agent_contracts::{
    model::BoxFuture, store::CheckpointStore, store::Lease, store::RunPage, store::RunRecord,
    store::RunStatus, store::StoreError,
};
use agent_examples::event_planning::{self, HUMAN_ANSWER, REQUEST};
use agent_examples::worker::Delayed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A store that times `claim_next`, and forwards everything.
struct Timed {
    inner: PostgresStore,
    claims: Arc<Mutex<Vec<Duration>>>,
}

impl CheckpointStore for Timed {
    fn save<'a>(&'a self, record: &'a RunRecord) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.save(record)
    }
    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        self.inner.load(run_id)
    }
    fn list(&self) -> BoxFuture<'_, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
        self.inner.list()
    }
    fn list_page<'a>(
        &'a self,
        page: &'a RunPage,
    ) -> BoxFuture<'a, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
        self.inner.list_page(page)
    }
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.delete(run_id)
    }
    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        sequence: u64,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        self.inner.claim(run_id, sequence, lease)
    }
    fn claim_next<'a>(
        &'a self,
        workflow: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Option<RunRecord>, StoreError>> {
        Box::pin(async move {
            let start = Instant::now();
            let claimed = self.inner.claim_next(workflow, lease).await;
            let took = start.elapsed();
            self.claims
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(took);
            claimed
        })
    }
    fn save_contracts<'a>(
        &'a self,
        contracts: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.save_contracts(contracts)
    }
    fn load_contract<'a>(
        &'a self,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        self.inner.load_contract(fingerprint)
    }
    fn renew<'a>(
        &'a self,
        run_id: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.renew(run_id, lease)
    }
}

fn main() {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(200);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!(
        "load average before: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for round in 1..=rounds {
        for workers in [1, 4, 16] {
            runtime.block_on(measure(&url, runs, workers, round));
        }
    }
    println!(
        "load average after: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}

async fn measure(url: &str, runs: usize, workers: usize, round: usize) {
    let schema = format!("bench_workers_{}_{workers}_{round}", std::process::id());
    let admin = PostgresStore::connect_in_schema(url, Some(&schema))
        .await
        .expect("PostgreSQL at DATABASE_URL");
    let admin: Arc<dyn CheckpointStore> = Arc::new(admin);
    let workflow = event_planning::workflow();
    let enqueuer = workflow
        .runner(Delayed {
            delay: Duration::ZERO,
        })
        .with_store(admin.clone());
    let mut ids = Vec::with_capacity(runs);
    for _ in 0..runs {
        ids.push(enqueuer.enqueue(REQUEST).await.expect("enqueued"));
    }
    let claims = Arc::new(Mutex::new(Vec::new()));
    let mut stores = Vec::with_capacity(workers);
    for _ in 0..workers {
        let inner = PostgresStore::connect_in_schema(url, Some(&schema))
            .await
            .expect("a worker's pool");
        stores.push(Arc::new(Timed {
            inner,
            claims: claims.clone(),
        }) as Arc<dyn CheckpointStore>);
    }
    let start = Instant::now();
    let paused = drain(&stores).await;
    let to_question = start.elapsed();
    for id in &ids {
        enqueuer
            .submit_answer(id, HUMAN_ANSWER)
            .await
            .expect("answered");
    }
    let start = Instant::now();
    let finished = drain(&stores).await;
    let to_end = start.elapsed();
    assert_eq!((paused, finished), (runs, runs), "every run drained once");
    let done = admin
        .list_page(&RunPage {
            status: Some(RunStatus::Finished),
            ..RunPage::first(runs + 1)
        })
        .await
        .expect("listed");
    assert_eq!(done.len(), runs, "every run finished");
    let seconds = (to_question + to_end).as_secs_f64();
    let mut claims = claims
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    claims.sort();
    let at = |q: f64| {
        let i = ((claims.len() as f64 - 1.0) * q).round() as usize;
        claims[i].as_secs_f64() * 1e3
    };
    println!(
        "round {round}: {runs} runs, {workers:>2} workers: {seconds:.2} s ({:.2} s to the question, {:.2} s answered to the end), {:.1} runs/s; claim_next p50 {:.2} ms, p99 {:.2} ms over {} claims",
        to_question.as_secs_f64(),
        to_end.as_secs_f64(),
        runs as f64 / seconds,
        at(0.5),
        at(0.99),
        claims.len()
    );
    let pool = sqlx::PgPool::connect(url).await.expect("a pool");
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&pool)
        .await
        .expect("dropped");
    pool.close().await;
}

/// Runs one worker per store until nothing is runnable; how many runs they drove.
async fn drain(stores: &[Arc<dyn CheckpointStore>]) -> usize {
    let mut tasks = tokio::task::JoinSet::new();
    for (n, store) in stores.iter().enumerate() {
        let store = store.clone();
        tasks.spawn(async move {
            let workflow = event_planning::workflow();
            let lease = Lease::new(format!("bench-{n}"), Duration::from_secs(30));
            let mut driven = 0;
            loop {
                let runner = workflow
                    .runner(Delayed {
                        delay: Duration::ZERO,
                    })
                    .with_store(store.clone())
                    .with_lease(lease.clone());
                match runner.run_next().await.expect("a run driven") {
                    Some(_) => driven += 1,
                    None => return driven,
                }
            }
        });
    }
    let mut driven = 0;
    while let Some(n) = tasks.join_next().await {
        driven += n.expect("a worker");
    }
    driven
}
