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
//! claim latency p50/p99 (ms) over every claim of the round. Beside each, the floor: a bare
//! `FOR UPDATE SKIP LOCKED` queue making the same claims and saves (no model, no contracts,
//! no history), its runs per second and the workers' ratio to it. Last, per round, the
//! enqueue-to-claim latency of an idle library `Worker` with `NOTIFY`/`LISTEN` and with
//! polling (median, p90 and max of 20 runs, from the runs' history times).

use agent_contracts::runtime::CancellationToken;
use agent_contracts::store::PostgresStore;
use agent_contracts::{
    model::BoxFuture, store::CheckpointStore, store::Lease, store::RunEvent, store::RunHistory,
    store::RunPage, store::RunRecord, store::RunStatus, store::StoreError, store::WakeUps,
};
use agent_examples::event_planning::{self, HUMAN_ANSWER, REQUEST};
use agent_examples::worker::Delayed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A store that times `claim_next`, and forwards everything (its notices only when it is
/// not `deaf`: a deaf store's workers poll).
struct Timed {
    inner: PostgresStore,
    claims: Arc<Mutex<Vec<Duration>>>,
    deaf: bool,
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
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.release(lease)
    }
    fn history<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunHistory, StoreError>> {
        self.inner.history(run_id)
    }
    fn listen<'a>(
        &'a self,
        workflow: &'a str,
    ) -> BoxFuture<'a, Result<Option<Box<dyn WakeUps>>, StoreError>> {
        match self.deaf {
            true => Box::pin(async { Ok(None) }),
            false => self.inner.listen(workflow),
        }
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
            let runs_per_s = runtime.block_on(measure(&url, runs, workers, round));
            let floor = runtime.block_on(floor(&url, runs, workers, round));
            println!(
                "round {round}: {workers:>2} workers: {runs_per_s:.1} runs/s, floor {floor:.1} runs/s: {:.2} of the floor",
                runs_per_s / floor
            );
        }
        for deaf in [false, true] {
            runtime.block_on(wake_ups(&url, deaf, round));
        }
    }
    println!(
        "load average after: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}

async fn measure(url: &str, runs: usize, workers: usize, round: usize) -> f64 {
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
            deaf: false,
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
    runs as f64 / seconds
}

/// The floor: a bare `FOR UPDATE SKIP LOCKED` queue making the same claims and saves as the
/// workers (per run: a claim and three saves to the question, the answer untimed, a claim and
/// three saves to the end; each save conditional on the sequence, the state as long as a
/// run's), with no model, no contracts and no history. Returns its runs per second.
async fn floor(url: &str, runs: usize, workers: usize, round: usize) -> f64 {
    let schema = format!("bench_floor_{}_{workers}_{round}", std::process::id());
    let admin = sqlx::PgPool::connect(url).await.expect("a pool");
    for statement in [
        format!("CREATE SCHEMA {schema}"),
        format!(
            "CREATE TABLE {schema}.q (id TEXT PRIMARY KEY, status TEXT NOT NULL, \
             sequence BIGINT NOT NULL, state TEXT NOT NULL, owner TEXT, updated_ms BIGINT NOT NULL)"
        ),
        format!("CREATE INDEX ON {schema}.q (status, updated_ms)"),
    ] {
        sqlx::query(&statement)
            .execute(&admin)
            .await
            .expect("created");
    }
    // As long as a stored event-planning run at its question.
    let state = "x".repeat(4_000);
    for n in 0..runs {
        sqlx::query(&format!(
            "INSERT INTO {schema}.q VALUES ($1, 'queued', 1, $2, NULL, $3)"
        ))
        .bind(format!("run-{n}"))
        .bind(&state)
        .bind(n as i64)
        .execute(&admin)
        .await
        .expect("enqueued");
    }
    let mut pools = Vec::new();
    for _ in 0..workers {
        pools.push(
            sqlx::postgres::PgPoolOptions::new()
                .max_connections(2)
                .connect(url)
                .await
                .expect("a worker's pool"),
        );
    }
    let start = Instant::now();
    let first = floor_drain(&pools, &schema, &state, "paused").await;
    let to_question = start.elapsed();
    sqlx::query(&format!(
        "UPDATE {schema}.q SET status = 'answered' WHERE status = 'paused'"
    ))
    .execute(&admin)
    .await
    .expect("answered");
    let start = Instant::now();
    let second = floor_drain(&pools, &schema, &state, "finished").await;
    let seconds = (to_question + start.elapsed()).as_secs_f64();
    assert_eq!((first, second), (runs, runs), "every run drained once");
    for pool in pools {
        pool.close().await;
    }
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&admin)
        .await
        .expect("dropped");
    admin.close().await;
    runs as f64 / seconds
}

/// One task per pool claims and saves until nothing is queued or answered; the last save of
/// each claim sets `end`.
async fn floor_drain(pools: &[sqlx::PgPool], schema: &str, state: &str, end: &str) -> usize {
    let claim = format!(
        "UPDATE {schema}.q SET status = 'running', sequence = sequence + 1, owner = $1, \
         updated_ms = $2 WHERE id = (SELECT id FROM {schema}.q WHERE status IN ('queued', \
         'answered') ORDER BY updated_ms, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING id, sequence"
    );
    let save = format!(
        "UPDATE {schema}.q SET state = $1, status = $2, sequence = sequence + 1, updated_ms = $3 \
         WHERE id = $4 AND sequence = $5"
    );
    let mut tasks = tokio::task::JoinSet::new();
    for (n, pool) in pools.iter().enumerate() {
        let (pool, claim, save) = (pool.clone(), claim.clone(), save.clone());
        let (state, end) = (state.to_owned(), end.to_owned());
        tasks.spawn(async move {
            let mut driven = 0;
            loop {
                let now = agent_contracts::store::now_ms() as i64;
                let claimed: Option<(String, i64)> = sqlx::query_as(&claim)
                    .bind(format!("floor-{n}"))
                    .bind(now)
                    .fetch_optional(&pool)
                    .await
                    .expect("claimed");
                let Some((id, mut sequence)) = claimed else {
                    return driven;
                };
                for status in ["running", "running", end.as_str()] {
                    let done = sqlx::query(&save)
                        .bind(&state)
                        .bind(status)
                        .bind(agent_contracts::store::now_ms() as i64)
                        .bind(&id)
                        .bind(sequence)
                        .execute(&pool)
                        .await
                        .expect("saved");
                    assert_eq!(done.rows_affected(), 1, "the save of a claimed run");
                    sequence += 1;
                }
                driven += 1;
            }
        });
    }
    let mut driven = 0;
    while let Some(n) = tasks.join_next().await {
        driven += n.expect("a worker");
    }
    driven
}

/// Enqueue-to-claim latency of an idle library worker (concurrency 4): 20 runs enqueued one
/// at a time, each taken to its question before the next; the time from `enqueued` to
/// `claimed` in each run's history (the database's times). With notices (`NOTIFY`/`LISTEN`)
/// or, `deaf`, polling every 100 ms.
async fn wake_ups(url: &str, deaf: bool, round: usize) {
    let schema = format!("bench_wake_{}_{deaf}_{round}", std::process::id());
    let inner = PostgresStore::connect_in_schema(url, Some(&schema))
        .await
        .expect("PostgreSQL at DATABASE_URL");
    let store: Arc<dyn CheckpointStore> = Arc::new(Timed {
        inner,
        claims: Arc::default(),
        deaf,
    });
    let mut settings = agent_examples::worker::WorkerSettings::new();
    settings.concurrency = 4;
    let worker = agent_examples::worker::worker(store.clone(), settings);
    let stop = CancellationToken::new();
    let working = tokio::spawn({
        let stop = stop.clone();
        async move { worker.run(stop).await }
    });
    let workflow = event_planning::workflow();
    let runner = workflow
        .runner(Delayed {
            delay: Duration::ZERO,
        })
        .with_store(store.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut waits = Vec::new();
    for _ in 0..20 {
        let run_id = runner.enqueue(REQUEST).await.expect("enqueued");
        while store.load(&run_id).await.expect("loaded").status != RunStatus::Paused {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let history = store.history(&run_id).await.expect("its history");
        let at = |event: RunEvent| {
            history
                .entries
                .iter()
                .find(|e| e.event == event)
                .expect("the event")
                .at_ms
        };
        waits.push(at(RunEvent::Claimed).saturating_sub(at(RunEvent::Enqueued)));
        // Let the worker's slots go idle again before the next run.
        tokio::time::sleep(Duration::from_millis(50 + (waits.len() as u64 * 37) % 100)).await;
    }
    stop.cancel();
    working.await.expect("the worker");
    waits.sort_unstable();
    println!(
        "round {round}: enqueue to claim, {}: median {} ms, p90 {} ms, max {} ms over 20 runs",
        if deaf {
            "polling every 100 ms"
        } else {
            "NOTIFY"
        },
        waits[10],
        waits[18],
        waits[19]
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
