//! A fleet on one PostgreSQL (issue 49's "done when"), with `event-planning --worker`
//! processes and the library `Worker`:
//!
//! - a worker whose clock runs 5 minutes ahead (libfaketime) drains 100 runs beside two on the
//!   right time: no run is taken over while its owner lives, no step runs twice;
//! - a run whose worker is SIGKILLed every time it claims it ends failed after the attempt
//!   limit, with the attempts reason naming the step's agent, while 50 others complete; the
//!   history of a taken-over run lists its transitions in order with owners and the
//!   database's times (`--history RUN_ID --json`);
//! - SIGTERM mid-run: the worker exits within its grace period, its runs are runnable at once
//!   (released, not waiting out a lease) and complete on another worker, not as takeovers;
//! - an idle worker claims a new run, and an answered one, within 50 ms (median of 20, by the
//!   history's times) and asks the store at most once per 5 s while idle, whatever its
//!   concurrency.
//!
//! Each needs `DATABASE_URL` (skipped with a message without it) and works in a schema of
//! its own; leases are short so that each test takes seconds.

use agent_contracts::model::BoxFuture;
use agent_contracts::runtime::CancellationToken;
use agent_contracts::store::{
    CheckpointStore, Lease, PostgresStore, RunEvent, RunHistory, RunPage, RunRecord, RunStatus,
    StoreError, WakeUps,
};
use agent_examples::event_planning::{self, HUMAN_ANSWER};
use agent_examples::worker::{Delayed, WorkerSettings};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_event-planning");

/// Where Debian's `faketime` package puts the library.
const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

const STEPS: [&str; 4] = [
    "venue_agent",
    "budget_agent",
    "catering_agent",
    "logistics_agent",
];

fn cli(url: &str, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(["--store", url])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A worker process: `extra` flags after the usual ones, its log in `log`.
fn spawn_worker(url: &str, extra: &[&str], env: &[(&str, &str)], log: &std::path::Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    Command::new(BIN)
        .args(["--store", url, "--worker"])
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

async fn store(url: &str) -> PostgresStore {
    PostgresStore::connect(url).await.unwrap()
}

async fn runs(store: &dyn CheckpointStore) -> Vec<RunRecord> {
    store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

/// Answers every paused run, as the user would.
async fn answer_paused(store: &Arc<dyn CheckpointStore>) -> usize {
    let workflow = event_planning::workflow();
    let runner = workflow
        .runner(agent_contracts::ScriptedModel::default())
        .with_store(store.clone());
    let mut answered = 0;
    for run in runs(&**store).await {
        if run.status == RunStatus::Paused
            && runner
                .submit_answer(&run.run_id, HUMAN_ANSWER)
                .await
                .is_ok()
        {
            answered += 1;
        }
    }
    answered
}

fn enqueue(url: &str, n: usize) -> Vec<String> {
    let ids: Vec<String> = cli(url, &["--enqueue", &n.to_string()])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(ids.len(), n);
    ids
}

/// Drives the fleet until `done` holds of the runs, answering paused runs on the way.
async fn until(
    store: &Arc<dyn CheckpointStore>,
    limit: Duration,
    done: impl Fn(&[RunRecord]) -> bool,
) -> Vec<RunRecord> {
    let deadline = Instant::now() + limit;
    loop {
        let listed = runs(&**store).await;
        if done(&listed) {
            return listed;
        }
        assert!(
            Instant::now() < deadline,
            "not done in {limit:?}: {:?}",
            tally(&listed)
        );
        answer_paused(store).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn tally(runs: &[RunRecord]) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for run in runs {
        *counts.entry(run.status.to_string()).or_default() += 1;
    }
    counts
}

fn all_completed(runs: &[RunRecord]) -> bool {
    runs.iter().all(|r| r.status == RunStatus::Finished)
}

/// The completed steps of a run, each once, in order.
fn steps_once(run: &RunRecord) {
    let state = event_planning::workflow().parse_state(&run.state).unwrap();
    let steps: Vec<&str> = (&state.upstream)
        .into_iter()
        .map(|p| p.producer.as_str())
        .collect();
    assert_eq!(steps, STEPS, "{}", run.run_id);
}

fn logs(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fleet-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_worker_five_minutes_ahead_takes_nothing_over() {
    if !std::path::Path::new(FAKETIME).exists() {
        println!("skipped: libfaketime is not installed ({FAKETIME}; apt-get install faketime)");
        return;
    }
    let Some((url, schema)) = crate::durable::own_schema("ahead").await else {
        return;
    };
    let dir = logs("ahead");
    let ahead = [
        ("LD_PRELOAD", FAKETIME),
        ("FAKETIME", "+5m"),
        ("DONT_FAKE_MONOTONIC", "1"),
    ];
    // The preload works: a run enqueued by a process five minutes ahead has a UUID v7 whose
    // time is five minutes ahead.
    let out = Command::new(BIN)
        .args(["--store", &url, "--enqueue", "1"])
        .envs(ahead)
        .output()
        .unwrap();
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let uuid = uuid_millis(&id);
    let skew = uuid as i64 - agent_contracts::store::now_ms() as i64;
    assert!((290_000..310_000).contains(&skew), "{id}: {skew} ms ahead");
    let mut ids = enqueue(&url, 99);
    ids.push(id);
    // Short leases, renewed every third: a worker that judged them by its own clock would
    // see every lease of the others as ended five minutes ago.
    let flags = [
        "--concurrency",
        "4",
        "--lease-secs",
        "1",
        "--delay-ms",
        "20",
        "--grace-secs",
        "5",
    ];
    let mut fleet = vec![
        spawn_worker(&url, &flags, &ahead, &dir.join("ahead.log")),
        spawn_worker(&url, &flags, &[], &dir.join("right-1.log")),
        spawn_worker(&url, &flags, &[], &dir.join("right-2.log")),
    ];
    let store: Arc<dyn CheckpointStore> = Arc::new(store(&url).await);
    let done = until(&store, Duration::from_secs(120), all_completed).await;
    for worker in &fleet {
        sigterm(worker);
    }
    for worker in &mut fleet {
        assert!(worker.wait().unwrap().success());
    }
    assert_eq!(done.len(), 100);
    let mut owners = BTreeSet::new();
    for run in &done {
        assert_eq!(run.takeovers, 0, "{} was taken over", run.run_id);
        steps_once(run);
        let history = store.history(&run.run_id).await.unwrap();
        assert!(
            history
                .entries
                .iter()
                .all(|e| e.event != RunEvent::TakenOver),
            "{history:?}"
        );
        // Each step completed once: a step run twice would be saved twice.
        let completed: Vec<&str> = history
            .entries
            .iter()
            .filter(|e| e.event == RunEvent::StepCompleted)
            .filter_map(|e| e.step.as_deref())
            .collect();
        let unique: BTreeSet<&&str> = completed.iter().collect();
        assert_eq!(unique.len(), completed.len(), "{completed:?}");
        owners.extend(
            history
                .entries
                .iter()
                .filter(|e| e.event == RunEvent::Claimed)
                .filter_map(|e| e.owner.as_deref().and_then(|o| o.split('-').next()))
                .map(str::to_owned),
        );
    }
    // The worker ahead claimed runs too.
    assert!(owners.contains(&fleet[0].id().to_string()), "{owners:?}");
    crate::durable::drop_schema(&schema).await;
    std::fs::remove_dir_all(dir).unwrap();
}

/// The Unix milliseconds of a `run-<UUID v7>` ID.
fn uuid_millis(run_id: &str) -> u64 {
    let hex: String = run_id
        .trim_start_matches("run-")
        .chars()
        .filter(|c| *c != '-')
        .take(12)
        .collect();
    u64::from_str_radix(&hex, 16).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_run_that_kills_its_workers_fails_after_the_limit() {
    let Some((url, schema)) = crate::durable::own_schema("killer").await else {
        return;
    };
    let dir = logs("killer");
    // The first run enqueued is claimed first: it is the one that "kills" its workers.
    let victim = enqueue(&url, 1).remove(0);
    let others = enqueue(&url, 50);
    // One worker drives eight runs at once; the two beside it, and each that replaces a killed
    // one, drive one at a time. A worker with free slots claims the dead worker's runs together
    // when their leases end, the victim among them, so with more than one such worker the same
    // runs could follow the victim to a second and a third kill, taken over three times with no
    // step between, and fail beside it: the attempt limit working as it should, but not what
    // this test is about. With one, a run other than the victim is killed with it at most once
    // (the test saw such a second failure under load when all three took eight).
    let flags = |concurrency: &'static str| {
        [
            "--concurrency",
            concurrency,
            "--lease-secs",
            "1",
            "--delay-ms",
            "300",
            "--max-attempts",
            "3",
        ]
    };
    let mut spawned = 0;
    let mut next_worker = |url: &str, concurrency: &'static str| {
        spawned += 1;
        let log = dir.join(format!("worker-{spawned}.log"));
        spawn_worker(url, &flags(concurrency), &[], &log)
    };
    let mut fleet: Vec<Child> = ["8", "1", "1"]
        .into_iter()
        .map(|concurrency| next_worker(&url, concurrency))
        .collect();
    let store: Arc<dyn CheckpointStore> = Arc::new(store(&url).await);
    let mut kills = 0;
    // Another run whose worker dies once: it is taken over and completes.
    let mut survivor: Option<String> = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline,
            "not done: {:?}",
            tally(&runs(&*store).await)
        );
        let run = store.load(&victim).await.unwrap();
        if run.status == RunStatus::Failed {
            break;
        }
        // Its worker dies while it holds the run, before the step is saved.
        if run.status == RunStatus::Running
            && run.attempts <= 3
            && let Some(owner) = &run.owner
            && let Some(at) = fleet
                .iter()
                .position(|w| owner.starts_with(&format!("{}-", w.id())))
        {
            // The other runs that worker held are taken over (once) and complete.
            if survivor.is_none() {
                survivor = runs(&*store)
                    .await
                    .into_iter()
                    .find(|r| {
                        r.run_id != victim
                            && r.status == RunStatus::Running
                            && r.owner
                                .as_deref()
                                .is_some_and(|o| o.starts_with(&format!("{}-", fleet[at].id())))
                    })
                    .map(|r| r.run_id);
            }
            fleet[at].kill().unwrap();
            fleet[at].wait().unwrap();
            kills += 1;
            fleet[at] = next_worker(&url, "1");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let listed = until(&store, Duration::from_secs(120), |runs| {
        runs.iter()
            .filter(|r| r.status == RunStatus::Finished)
            .count()
            == 50
    })
    .await;
    for worker in &fleet {
        sigterm(worker);
    }
    for worker in &mut fleet {
        worker.wait().unwrap();
    }
    assert_eq!(kills, 3, "one kill per allowed attempt");
    let failed = store.load(&victim).await.unwrap();
    assert_eq!(failed.status, RunStatus::Failed);
    let reason = failed.error.clone().unwrap();
    assert!(
        reason.contains("step `venue_agent` was attempted 3 times"),
        "{reason}"
    );
    // The listing shows the reason; the completed runs have none.
    let listed_json: Value = serde_json::from_str(&cli(&url, &["--list", "--json"])).unwrap();
    for run in listed_json.as_array().unwrap() {
        match run["id"].as_str() == Some(victim.as_str()) {
            true => assert_eq!(run["error"].as_str(), Some(reason.as_str())),
            false => assert!(run["error"].is_null(), "{run}"),
        }
    }
    for run in listed.iter().filter(|r| r.run_id != victim) {
        assert_eq!(run.status, RunStatus::Finished);
        assert!(others.contains(&run.run_id));
        steps_once(run);
    }
    // Never claimed again: four claims (three attempts and the claim that failed it).
    let history = store.history(&victim).await.unwrap();
    let claims = history
        .entries
        .iter()
        .filter(|e| matches!(e.event, RunEvent::Claimed | RunEvent::TakenOver))
        .count();
    assert_eq!(claims, 4, "{history:?}");
    assert_eq!(history.entries.last().unwrap().event, RunEvent::Failed);
    if let Some(survivor) = survivor {
        taken_over_history(&url, &store, &survivor).await;
    }
    crate::durable::drop_schema(&schema).await;
    std::fs::remove_dir_all(dir).unwrap();
}

/// `--history RUN_ID --json` of a run taken over once: its transitions in order, owners
/// and the database's times.
async fn taken_over_history(url: &str, store: &Arc<dyn CheckpointStore>, run_id: &str) {
    let printed: Value = serde_json::from_str(&cli(url, &["--history", run_id, "--json"])).unwrap();
    let entries = printed.as_array().unwrap();
    let events: Vec<&str> = entries
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(events.first(), Some(&"enqueued"), "{events:?}");
    assert_eq!(events.last(), Some(&"completed"), "{events:?}");
    let over = events
        .iter()
        .position(|e| *e == "taken_over")
        .expect("a takeover");
    let claimed = events.iter().position(|e| *e == "claimed").unwrap();
    assert!(claimed < over, "{events:?}");
    // Claimed by one worker, taken over by another.
    assert_ne!(entries[claimed]["owner"], entries[over]["owner"]);
    for e in ["paused", "answered", "step_completed"] {
        assert!(events.contains(&e), "{events:?}");
    }
    let stored: RunHistory = store.history(run_id).await.unwrap();
    assert_eq!(stored.entries.len(), entries.len());
    let mut last = String::new();
    for (entry, printed) in stored.entries.iter().zip(entries) {
        let at = printed["at"].as_str().unwrap();
        // RFC 3339, UTC, milliseconds: `2026-01-19T10:15:00.123Z`.
        assert_eq!(at.len(), 24, "{at}");
        assert!(at.ends_with('Z') && at.as_bytes()[19] == b'.', "{at}");
        assert_eq!(at, entry.at_rfc3339());
        assert!(at >= last.as_str(), "{at} after {last}");
        last = at.to_owned();
        assert_eq!(printed["event"].as_str(), Some(entry.event.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sigterm_gives_runs_back_at_once() {
    let Some((url, schema)) = crate::durable::own_schema("sigterm").await else {
        return;
    };
    let dir = logs("sigterm");
    let ids = enqueue(&url, 4);
    // Each answer takes 3 s: when the 1-second grace ends, every run is mid-step.
    let slow = spawn_worker(
        &url,
        &[
            "--concurrency",
            "4",
            "--lease-secs",
            "30",
            "--delay-ms",
            "3000",
            "--grace-secs",
            "1",
        ],
        &[],
        &dir.join("slow.log"),
    );
    let store: Arc<dyn CheckpointStore> = Arc::new(store(&url).await);
    let held = format!("{}-", slow.id());
    until(&store, Duration::from_secs(30), |runs| {
        runs.iter()
            .filter(|r| r.owner.as_deref().is_some_and(|o| o.starts_with(&held)))
            .count()
            == 4
    })
    .await;
    let mut slow = slow;
    let asked = Instant::now();
    sigterm(&slow);
    let status = slow.wait().unwrap();
    let took = asked.elapsed();
    assert!(status.success(), "{status:?}");
    // The grace period (1 s), and the release: well under the 3-second step.
    assert!(took < Duration::from_millis(2_500), "exited after {took:?}");
    // Runnable at once: queued, no owner, no lease (its 30-second lease is not waited out).
    for run in runs(&*store).await {
        assert_eq!(run.status, RunStatus::Queued, "{}", run.run_id);
        assert_eq!((run.owner.as_deref(), run.lease_until_ms), (None, 0));
        let history = store.history(&run.run_id).await.unwrap();
        let last = history.entries.last().unwrap();
        assert_eq!(last.event, RunEvent::Released);
        assert!(last.owner.as_deref().unwrap().starts_with(&held));
    }
    let mut fast = spawn_worker(
        &url,
        &["--concurrency", "4", "--grace-secs", "5"],
        &[],
        &dir.join("fast.log"),
    );
    let done = until(&store, Duration::from_secs(30), all_completed).await;
    sigterm(&fast);
    assert!(fast.wait().unwrap().success());
    assert_eq!(done.len(), ids.len());
    for run in &done {
        // Not a takeover: the released runs were claimed as new.
        assert_eq!(run.takeovers, 0, "{}", run.run_id);
        steps_once(run);
    }
    crate::durable::drop_schema(&schema).await;
    std::fs::remove_dir_all(dir).unwrap();
}

/// A store that counts the claims it is asked for, and forwards everything.
struct Counted {
    inner: PostgresStore,
    claims: AtomicU64,
}

impl CheckpointStore for Counted {
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
        self.claims.fetch_add(1, Ordering::Relaxed);
        self.inner.claim_next(workflow, lease)
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
        self.inner.listen(workflow)
    }
}

/// The time between `from` and the claim after it, in the run's history (the database's
/// times).
fn wake_up_ms(history: &RunHistory, from: RunEvent) -> u64 {
    let at = history
        .entries
        .iter()
        .rposition(|e| e.event == from)
        .unwrap();
    let claim = history.entries[at..]
        .iter()
        .find(|e| e.event == RunEvent::Claimed)
        .unwrap_or_else(|| panic!("no claim after {from}: {history:?}"));
    // A claim whose statement began as the run was committed may read the same millisecond.
    claim.at_ms.saturating_sub(history.entries[at].at_ms)
}

fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_idle_worker_wakes_at_once_and_asks_rarely() {
    let Some((url, schema)) = crate::durable::own_schema("wakeups").await else {
        return;
    };
    let counted = Arc::new(Counted {
        inner: store(&url).await,
        claims: AtomicU64::new(0),
    });
    let store: Arc<dyn CheckpointStore> = counted.clone();
    let mut settings = WorkerSettings::new();
    settings.concurrency = 8;
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
    // Idle: every slot asked once at its start; then at most one claim per 5 s.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = counted.claims.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    let idle = counted.claims.load(Ordering::Relaxed) - before;
    assert!(idle <= 2, "{idle} claims in 5.5 s of idleness");
    let (mut enqueued, mut answered) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let run_id = runner.enqueue(event_planning::REQUEST).await.unwrap();
        wait_for(&*store, &run_id, RunStatus::Paused).await;
        runner.submit_answer(&run_id, HUMAN_ANSWER).await.unwrap();
        wait_for(&*store, &run_id, RunStatus::Finished).await;
        let history = store.history(&run_id).await.unwrap();
        enqueued.push(wake_up_ms(&history, RunEvent::Enqueued));
        answered.push(wake_up_ms(&history, RunEvent::Answered));
    }
    let (new, answer) = (median(enqueued.clone()), median(answered.clone()));
    println!("enqueue to claim: median {new} ms of {enqueued:?}");
    println!("answer to claim: median {answer} ms of {answered:?}");
    assert!(new < 50, "enqueue to claim: {enqueued:?}");
    assert!(answer < 50, "answer to claim: {answered:?}");
    stop.cancel();
    let report = working.await.unwrap();
    assert_eq!(
        (report.finished, report.paused, report.released),
        (20, 20, 0)
    );
    crate::durable::drop_schema(&schema).await;
}

async fn wait_for(store: &dyn CheckpointStore, run_id: &str, status: RunStatus) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.load(run_id).await.unwrap().status != status {
        assert!(Instant::now() < deadline, "{run_id} never {status}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
