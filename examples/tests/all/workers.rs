//! Many worker processes drain one store (issue 29's "done when"): runs are enqueued, workers
//! claim them, two workers are killed with SIGKILL while they hold a run and are replaced,
//! every run pauses at its question, is answered with `--submit-answer`, and completes; no run
//! lists a step twice, none is left running or failed, and the killed workers' runs show their
//! takeovers. 200 runs and 4 workers on PostgreSQL, 40 runs and 2 workers on SQLite.

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_event-planning");

/// The steps every completed run lists, each once.
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
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{args:?}: {stdout}{stderr}");
    stdout
}

/// A worker process; its log goes to a file (a pipe nobody reads could fill and stall it).
fn worker(url: &str, delay_ms: u64, log: &std::path::Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    Command::new(BIN)
        .args(["--store", url, "--worker", "--concurrency", "4"])
        .args(["--lease-secs", "1", "--delay-ms", &delay_ms.to_string()])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

fn list(url: &str) -> Vec<Value> {
    let listed: Value = serde_json::from_str(&cli(url, &["--list", "--json"])).unwrap();
    listed.as_array().unwrap().clone()
}

fn field<'a>(run: &'a Value, name: &str) -> &'a str {
    run[name].as_str().unwrap_or_default()
}

/// Whether `victim` holds a running run (an owner is `<pid>-<loop>`).
fn holds_a_run(runs: &[Value], victim: &Child) -> bool {
    let prefix = format!("{}-", victim.id());
    runs.iter()
        .any(|r| field(r, "status") == "running" && field(r, "owner").starts_with(&prefix))
}

/// Enqueues `runs`, starts `workers` workers (the model's answers `delay_ms` each, so a
/// worker is mostly mid-step), kills two of them (the first while queued runs
/// are worked on, the second once answers are being resumed) with SIGKILL while each holds a
/// run, replaces them, answers every paused run, and checks the end state. Returns the wall
/// time.
fn drain(
    url: &str,
    runs: usize,
    workers: usize,
    delay_ms: u64,
    logs: &std::path::Path,
) -> Duration {
    let started = Instant::now();
    let ids: Vec<String> = cli(url, &["--enqueue", &runs.to_string()])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(ids.len(), runs);
    let mut spawned = 0;
    let mut next_log = || {
        spawned += 1;
        logs.join(format!("worker-{spawned}.log"))
    };
    let mut fleet: Vec<Child> = (0..workers)
        .map(|_| worker(url, delay_ms, &next_log()))
        .collect();
    let mut killed = Vec::new();
    let mut answered = 0;
    let deadline = started + Duration::from_secs(240);
    loop {
        assert!(
            Instant::now() < deadline,
            "not drained: {:?}",
            tally(&list(url))
        );
        let listed = list(url);
        // The first victim dies as soon as it holds a run, the second once answers are being
        // resumed.
        let due = match killed.len() {
            0 => true,
            1 => answered > 0,
            _ => false,
        };
        if due {
            let victim = killed.len();
            if holds_a_run(&listed, &fleet[victim]) {
                fleet[victim].kill().unwrap();
                killed.push(fleet[victim].wait().unwrap());
                fleet[victim] = worker(url, delay_ms, &next_log());
            }
        }
        let mut paused: Vec<&str> = listed
            .iter()
            .filter(|r| field(r, "status") == "paused")
            .map(|r| field(r, "id"))
            .collect();
        // Until both victims died, answers trickle in, so answered runs are being resumed for
        // long enough to catch the second victim holding one.
        if killed.len() < 2 {
            paused.truncate(4);
        }
        // A few answers at a time, each from a process of its own.
        for batch in paused.chunks(8) {
            let answering: Vec<Child> = batch
                .iter()
                .map(|id| {
                    Command::new(BIN)
                        .args(["--store", url, "--submit-answer", id])
                        .args(["--answer", "Three guests are vegetarian."])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut child in answering {
                // A run another worker resumed meanwhile is not paused any more: that is fine.
                child.wait().unwrap();
            }
            answered += batch.len();
        }
        let completed = listed
            .iter()
            .filter(|r| field(r, "status") == "completed")
            .count();
        if completed == runs && killed.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let elapsed = started.elapsed();
    for mut child in fleet {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    check_drained(&list(url), &ids, &killed);
    elapsed
}

fn tally(runs: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for run in runs {
        *counts.entry(field(run, "status").to_owned()).or_default() += 1;
    }
    counts
}

fn check_drained(runs: &[Value], ids: &[String], killed: &[std::process::ExitStatus]) {
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(killed.len(), 2);
    assert!(killed.iter().all(|s| s.signal() == Some(9)), "{killed:?}");
    let mut listed: Vec<&str> = runs.iter().map(|r| field(r, "id")).collect();
    listed.sort_unstable();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(listed, expected);
    for run in runs {
        assert_eq!(field(run, "status"), "completed", "{run}");
        assert_eq!(run["steps"], serde_json::json!(STEPS), "{run}");
        assert_eq!(
            field(run, "output"),
            agent_examples::event_planning::PLAN,
            "{run}"
        );
        assert!(run["owner"].is_null(), "{run}");
    }
    let takeovers: u64 = runs.iter().map(|r| r["takeovers"].as_u64().unwrap()).sum();
    let taken: Vec<&Value> = runs
        .iter()
        .filter(|r| r["takeovers"].as_u64() > Some(0))
        .collect();
    // Each killed worker held at least one run, which another worker took over.
    assert!(taken.len() >= 2, "takeovers: {takeovers}");
    println!(
        "{} runs completed; {} taken over ({takeovers} takeovers)",
        runs.len(),
        taken.len()
    );
}

#[tokio::test]
async fn postgres_200_runs_4_workers_2_killed() {
    let Some((url, schema)) = crate::durable::own_schema("workers").await else {
        return;
    };
    let logs = std::env::temp_dir().join(format!("workers-pg-{}", std::process::id()));
    std::fs::create_dir_all(&logs).unwrap();
    let elapsed = drain(&url, 200, 4, 50, &logs);
    println!("postgres: 200 runs drained by 4 workers in {elapsed:?}");
    crate::durable::drop_schema(&schema).await;
    std::fs::remove_dir_all(logs).unwrap();
}

#[tokio::test]
async fn sqlite_40_runs_2_workers_2_killed() {
    let dir = std::env::temp_dir().join(format!("workers-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    let elapsed = drain(&url, 40, 2, 100, &dir);
    println!("sqlite: 40 runs drained by 2 workers in {elapsed:?}");
    std::fs::remove_dir_all(dir).unwrap();
}
