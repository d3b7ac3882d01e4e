//! The checkpoint stores' rules, pinned on all four stores without doc tests: memory, file,
//! SQLite in a temp dir, and PostgreSQL when `DATABASE_URL` is set (each test in its own
//! schema; skipped with a message without it).
//!
//! - saves: a first save is sequence 1; an old sequence, one ahead of the store, or a sequence
//!   for a run never saved is a conflict naming both sequences; the creation time and the
//!   takeover count are the store's, not the writer's;
//! - claims: only a paused run at its sequence (or a running one at its sequence whose lease
//!   ended, a takeover, counted); an old or future sequence is a conflict, a claimed run is
//!   already claimed, an ended or queued one is not paused, a missing one is not found; a
//!   writer that read the run before the claim is stale;
//! - renewals, deletes and `claim_next`'s order and choice;
//! - contracts by fingerprint: the first one kept stays, an unknown one is none;
//! - run ids: the file store refuses any id that is not `A-Za-z0-9 _ - .` (1 to 128 bytes):
//!   no `/`, no `..` path, nothing written outside its folder; the other stores keep any id as
//!   data.
//!
//! The shared rule functions (`check_claim`, `check_save`, ...) are pinned at their bounds
//! too, with exact times.

use agent_contracts_runtime::store::{
    check_claim, check_save, claim_record, now_ms, renew_lease, saved_record,
};
use agent_contracts_runtime::{
    store::CheckpointStore, store::Lease, store::MemoryStore, store::RunRecord, store::RunStatus,
    store::StoreError,
};
use agent_contracts_store::{FileStore, PostgresStore, SqliteStore};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "agent-store-rules-{tag}-{}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn record(run_id: &str, workflow: &str, status: RunStatus) -> RunRecord {
    RunRecord::new(run_id, workflow, status, r#"{"step": 1}"#)
}

fn lease(owner: &str, secs: u64) -> Lease {
    Lease::new(owner, Duration::from_secs(secs))
}

#[track_caller]
fn conflict<T: std::fmt::Debug>(
    result: Result<T, StoreError>,
    run: &str,
    expected_seq: u64,
    found_seq: u64,
) {
    match result {
        Err(StoreError::Conflict {
            run_id,
            expected,
            found,
        }) => assert_eq!(
            (run_id.as_str(), expected, found),
            (run, expected_seq, found_seq)
        ),
        other => panic!("expected a conflict on {run}, got {other:?}"),
    }
}

#[track_caller]
fn already<T: std::fmt::Debug>(result: Result<T, StoreError>, run: &str) {
    match result {
        Err(StoreError::AlreadyClaimed { run_id }) => assert_eq!(run_id, run),
        other => panic!("expected {run} already claimed, got {other:?}"),
    }
}

#[track_caller]
fn not_found<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::NotFound { .. })),
        "expected not found, got {result:?}"
    );
}

#[track_caller]
fn not_paused<T: std::fmt::Debug>(result: Result<T, StoreError>, status: RunStatus) {
    match result {
        Err(StoreError::NotPaused { status: s, .. }) => assert_eq!(s, status),
        other => panic!("expected not paused ({status}), got {other:?}"),
    }
}

#[track_caller]
fn lease_lost<T: std::fmt::Debug>(result: Result<T, StoreError>, run: &str, by: &str) {
    match result {
        Err(StoreError::LeaseLost { run_id, owner }) => {
            assert_eq!((run_id.as_str(), owner.as_str()), (run, by))
        }
        other => panic!("expected the lease of {by} on {run} lost, got {other:?}"),
    }
}

/// Saves: sequences, conflicts, and what the store keeps of its own.
async fn saves(store: &dyn CheckpointStore) {
    let first = record("save-1", "w", RunStatus::Paused);
    let before = now_ms();
    assert_eq!(store.save(&first).await.unwrap(), 1);
    // A second first save: this writer read no run, the store holds sequence 1.
    conflict(store.save(&first).await, "save-1", 0, 1);
    let read = store.load("save-1").await.unwrap();
    assert_eq!((read.sequence, read.status), (1, RunStatus::Paused));
    let created = read.created_ms;
    assert!(created >= before.saturating_sub(1000) && created <= now_ms());
    let mut next = read.clone();
    next.state = r#"{"step": 2}"#.into();
    // Neither the creation time nor the takeover count is the writer's to change.
    next.created_ms = 7;
    next.takeovers = 99;
    assert_eq!(store.save(&next).await.unwrap(), 2);
    // The sequence the writer read is old now.
    conflict(store.save(&next).await, "save-1", 1, 2);
    let mut ahead = next.clone();
    ahead.sequence = 5;
    conflict(store.save(&ahead).await, "save-1", 5, 2);
    // A run never saved, with a sequence: no writer read it.
    let mut unknown = record("save-2", "w", RunStatus::Paused);
    unknown.sequence = 3;
    conflict(store.save(&unknown).await, "save-2", 3, 0);
    not_found(store.load("save-2").await);
    let stored = store.load("save-1").await.unwrap();
    assert_eq!(stored.sequence, 2);
    assert_eq!(stored.state, r#"{"step": 2}"#);
    assert_eq!((stored.created_ms, stored.takeovers), (created, 0));
    assert!(stored.updated_ms >= created && stored.updated_ms <= now_ms());
    // The third save goes on from 2.
    assert_eq!(store.save(&stored).await.unwrap(), 3);
}

/// Claims of a paused run: the sequence, the lease, and every refusal.
async fn claims(store: &dyn CheckpointStore) {
    let worker = lease("w1", 60);
    store
        .save(&record("claim-1", "w", RunStatus::Paused))
        .await
        .unwrap();
    let read = store.load("claim-1").await.unwrap();
    assert_eq!(store.save(&read).await.unwrap(), 2);
    let read = store.load("claim-1").await.unwrap();
    // A claimer that read the run before its last save, and one ahead of it.
    conflict(store.claim("claim-1", 1, &worker).await, "claim-1", 1, 2);
    conflict(store.claim("claim-1", 3, &worker).await, "claim-1", 3, 2);
    let before = now_ms();
    let claimed = store.claim("claim-1", 2, &worker).await.unwrap();
    let after = now_ms();
    assert_eq!(
        (
            claimed.status,
            claimed.sequence,
            claimed.owner.as_deref(),
            claimed.takeovers
        ),
        (RunStatus::Running, 3, Some("w1"), 0)
    );
    assert!(claimed.lease_until_ms >= before + 60_000 && claimed.lease_until_ms <= after + 60_000);
    assert!(claimed.updated_ms >= before && claimed.updated_ms <= after);
    assert_eq!(store.load("claim-1").await.unwrap(), claimed);
    // Claimed, its lease holding: already claimed, whatever the sequence.
    already(store.claim("claim-1", 3, &worker).await, "claim-1");
    already(store.claim("claim-1", 2, &lease("w2", 60)).await, "claim-1");
    // The writer that read sequence 2 before the claim is stale.
    conflict(store.save(&read).await, "claim-1", 2, 3);
    // Runs that wait for no resume.
    for (id, status) in [
        ("claim-f", RunStatus::Finished),
        ("claim-x", RunStatus::Failed),
        ("claim-q", RunStatus::Queued),
    ] {
        store.save(&record(id, "w", status)).await.unwrap();
        not_paused(store.claim(id, 1, &worker).await, status);
        assert_eq!(store.load(id).await.unwrap().status, status);
    }
    // An answered run is claimed at its sequence by whoever runs it first, its answer kept.
    let mut answered = record("claim-a", "w", RunStatus::Answered);
    answered.answer = Some("yes".into());
    store.save(&answered).await.unwrap();
    conflict(store.claim("claim-a", 2, &worker).await, "claim-a", 2, 1);
    let claimed = store.claim("claim-a", 1, &worker).await.unwrap();
    assert_eq!(
        (claimed.status, claimed.sequence, claimed.answer.as_deref()),
        (RunStatus::Running, 2, Some("yes"))
    );
    already(store.claim("claim-a", 2, &worker).await, "claim-a");
    not_found(store.claim("claim-none", 0, &worker).await);
}

/// A running run whose lease ended is taken over at its sequence, and counted.
async fn takeovers(store: &dyn CheckpointStore) {
    store
        .save(&record("take-1", "w", RunStatus::Paused))
        .await
        .unwrap();
    let dead = Lease::new("dead", Duration::ZERO);
    let held = store.claim("take-1", 1, &dead).await.unwrap();
    assert_eq!((held.sequence, held.takeovers), (2, 0));
    assert!(held.lease_until_ms <= now_ms());
    // Its lease ended, but an old sequence is still not this run's.
    already(store.claim("take-1", 1, &lease("w1", 60)).await, "take-1");
    let taken = store.claim("take-1", 2, &lease("w1", 60)).await.unwrap();
    assert_eq!(
        (
            taken.status,
            taken.sequence,
            taken.owner.as_deref(),
            taken.takeovers
        ),
        (RunStatus::Running, 3, Some("w1"), 1)
    );
    // A save keeps the store's count.
    let mut saved = taken.clone();
    saved.takeovers = 0;
    saved.status = RunStatus::Paused;
    assert_eq!(store.save(&saved).await.unwrap(), 4);
    assert_eq!(store.load("take-1").await.unwrap().takeovers, 1);
}

/// Renewals: only the owner of a running run.
async fn renewals(store: &dyn CheckpointStore) {
    store
        .save(&record("renew-1", "w", RunStatus::Paused))
        .await
        .unwrap();
    let owner = lease("w1", 60);
    let claimed = store.claim("renew-1", 1, &owner).await.unwrap();
    let before = now_ms();
    store.renew("renew-1", &lease("w1", 600)).await.unwrap();
    let renewed = store.load("renew-1").await.unwrap();
    assert!(renewed.lease_until_ms >= before + 600_000);
    assert!(renewed.lease_until_ms > claimed.lease_until_ms);
    // A renewal changes neither the sequence nor the owner.
    assert_eq!(
        (renewed.sequence, renewed.owner.as_deref()),
        (claimed.sequence, Some("w1"))
    );
    lease_lost(
        store.renew("renew-1", &lease("w2", 60)).await,
        "renew-1",
        "w2",
    );
    store
        .save(&record("renew-2", "w", RunStatus::Paused))
        .await
        .unwrap();
    lease_lost(
        store.renew("renew-2", &lease("w1", 60)).await,
        "renew-2",
        "w1",
    );
    not_found(store.renew("renew-none", &owner).await);
}

/// Deletes: once.
async fn deletes(store: &dyn CheckpointStore) {
    store
        .save(&record("del-1", "w", RunStatus::Finished))
        .await
        .unwrap();
    store
        .save(&record("del-2", "w", RunStatus::Finished))
        .await
        .unwrap();
    store.delete("del-1").await.unwrap();
    not_found(store.load("del-1").await);
    not_found(store.delete("del-1").await);
    not_found(store.delete("del-none").await);
    // The other run stays.
    assert_eq!(store.load("del-2").await.unwrap().run_id, "del-2");
}

/// `claim_next`: runnable runs of the workflow, least recently saved first.
async fn next_runs(store: &dyn CheckpointStore) {
    let worker = lease("w1", 60);
    for (id, status) in [
        ("next-a", RunStatus::Queued),
        ("next-b", RunStatus::Answered),
        ("next-c", RunStatus::Paused),
        ("next-d", RunStatus::Finished),
        ("next-e", RunStatus::Failed),
    ] {
        store.save(&record(id, "next", status)).await.unwrap();
        std::thread::sleep(Duration::from_millis(3));
    }
    store
        .save(&record("other-a", "other", RunStatus::Queued))
        .await
        .unwrap();
    let first = store.claim_next("next", &worker).await.unwrap().unwrap();
    assert_eq!(
        (
            first.run_id.as_str(),
            first.status,
            first.sequence,
            first.owner.as_deref()
        ),
        ("next-a", RunStatus::Running, 2, Some("w1"))
    );
    assert_eq!(store.load("next-a").await.unwrap(), first);
    let second = store.claim_next("next", &worker).await.unwrap().unwrap();
    assert_eq!((second.run_id.as_str(), second.takeovers), ("next-b", 0));
    // Paused, ended, and running with a live lease: nothing runnable.
    assert_eq!(store.claim_next("next", &worker).await.unwrap(), None);
    // A running run whose lease ended is taken over.
    store
        .save(&record("next-z", "late", RunStatus::Queued))
        .await
        .unwrap();
    let dead = Lease::new("dead", Duration::ZERO);
    let held = store.claim_next("late", &dead).await.unwrap().unwrap();
    assert_eq!(held.takeovers, 0);
    let taken = store.claim_next("late", &worker).await.unwrap().unwrap();
    assert_eq!(
        (taken.run_id.as_str(), taken.sequence, taken.takeovers),
        ("next-z", 3, 1)
    );
    assert_eq!(store.claim_next("none", &worker).await.unwrap(), None);
    assert_eq!(
        store.load("other-a").await.unwrap().status,
        RunStatus::Queued
    );
}

/// Contracts by fingerprint: the first schema kept under one stays; an unknown fingerprint
/// is none, not an error.
async fn contracts(store: &dyn CheckpointStore) {
    let (first, second) = ("0123456789abcdef", "fedcba9876543210");
    let kept = |fingerprint: &str, schema: &str| (fingerprint.to_owned(), schema.to_owned());
    store
        .save_contracts(&[kept(first, r#"{"type": "string"}"#)])
        .await
        .unwrap();
    store
        .save_contracts(&[
            kept(first, r#"{"type": "integer"}"#),
            kept(second, r#"{"type": "object"}"#),
        ])
        .await
        .unwrap();
    assert_eq!(
        store.load_contract(first).await.unwrap().as_deref(),
        Some(r#"{"type": "string"}"#)
    );
    assert_eq!(
        store.load_contract(second).await.unwrap().as_deref(),
        Some(r#"{"type": "object"}"#)
    );
    assert_eq!(store.load_contract("00000000deadbeef").await.unwrap(), None);
}

async fn rules(store: &dyn CheckpointStore) {
    saves(store).await;
    claims(store).await;
    takeovers(store).await;
    renewals(store).await;
    deletes(store).await;
    next_runs(store).await;
    contracts(store).await;
}

/// Ids a database keeps as data: the same rules hold for them.
async fn ids_are_data(store: &dyn CheckpointStore) {
    for id in ["a/b", "../up", "x y", "é"] {
        assert_eq!(
            store
                .save(&record(id, "w", RunStatus::Paused))
                .await
                .unwrap(),
            1
        );
        assert_eq!(store.load(id).await.unwrap().run_id, id);
        conflict(
            store.save(&record(id, "w", RunStatus::Paused)).await,
            id,
            0,
            1,
        );
        store.delete(id).await.unwrap();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn memory_store_rules() {
    runtime().block_on(async {
        let store = MemoryStore::default();
        rules(&store).await;
        ids_are_data(&store).await;
    });
}

#[test]
fn file_store_rules() {
    let dir = temp_dir("file");
    runtime().block_on(async {
        let store = FileStore::open(&dir).unwrap();
        rules(&store).await;
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sqlite_store_rules() {
    let dir = temp_dir("sqlite");
    runtime().block_on(async {
        let url = format!("sqlite:{}", dir.join("runs.db").display());
        let store = SqliteStore::open(&url).await.unwrap();
        rules(&store).await;
        ids_are_data(&store).await;
        store.pool().close().await;
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn postgres_store_rules() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: the PostgreSQL store's rules need DATABASE_URL");
        return;
    };
    let schema = format!("rules_{}_{}", std::process::id(), now_ms());
    runtime().block_on(async {
        let store = PostgresStore::connect_in_schema(&url, Some(&schema))
            .await
            .unwrap();
        rules(&store).await;
        ids_are_data(&store).await;
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(store.pool())
            .await
            .unwrap();
        store.pool().close().await;
    });
}

/// The file store's ids are file names: anything that could leave its folder, or name another
/// file, is no run (not found), and nothing is written.
#[test]
fn file_store_run_ids_stay_in_their_folder() {
    let parent = temp_dir("ids");
    let dir = parent.join("runs");
    let long = "x".repeat(129);
    runtime().block_on(async {
        let store = FileStore::open(&dir).unwrap();
        let worker = lease("w1", 60);
        for id in [
            "a/b",
            "../escape",
            "a/../b",
            "/abs",
            "..\\escape",
            "",
            "a b",
            "x\0y",
            "é",
            "run:1",
            long.as_str(),
        ] {
            not_found(store.save(&record(id, "w", RunStatus::Paused)).await);
            not_found(store.load(id).await);
            not_found(store.claim(id, 1, &worker).await);
            not_found(store.renew(id, &worker).await);
            not_found(store.delete(id).await);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 1);
        // Dots, dashes and underscores are a name's, up to 128 bytes: `..` is a file in the
        // folder like any other.
        let longest = "y".repeat(128);
        for id in ["..", ".", "a.b-c_D", longest.as_str()] {
            assert_eq!(
                store
                    .save(&record(id, "w", RunStatus::Paused))
                    .await
                    .unwrap(),
                1
            );
            assert_eq!(store.load(id).await.unwrap().run_id, id);
            assert!(dir.join(format!("{id}.run.json")).is_file(), "{id}");
        }
        assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 1);
        let listed: Vec<String> = store
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap().run_id)
            .collect();
        assert_eq!(listed.len(), 4);
    });
    std::fs::remove_dir_all(parent).unwrap();
}

/// A run file that is not its run's record is corrupt, named, and listed last.
#[test]
fn file_store_corrupt_files_are_named() {
    let dir = temp_dir("corrupt");
    runtime().block_on(async {
        let store = FileStore::open(&dir).unwrap();
        store
            .save(&record("good", "w", RunStatus::Paused))
            .await
            .unwrap();
        let good = std::fs::read_to_string(dir.join("good.run.json")).unwrap();
        std::fs::write(dir.join("moved.run.json"), &good).unwrap();
        std::fs::write(dir.join("cut.run.json"), &good[..good.len() / 2]).unwrap();
        std::fs::write(dir.join("notes.txt"), "not a run").unwrap();
        for id in ["moved", "cut"] {
            match store.load(id).await {
                Err(StoreError::Corrupt { run_id, .. }) => assert_eq!(run_id, id),
                other => panic!("{id}: {other:?}"),
            }
            match store.save(&record(id, "w", RunStatus::Paused)).await {
                Err(StoreError::Corrupt { run_id, .. }) => assert_eq!(run_id, id),
                other => panic!("{id}: {other:?}"),
            }
        }
        let listed = store.list().await.unwrap();
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[0].as_ref().unwrap().run_id, "good");
        let bad: Vec<String> = listed[1..]
            .iter()
            .map(|r| match r {
                Err(StoreError::Corrupt { run_id, .. }) => run_id.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(bad, ["cut", "moved"]);
        // `claim_next` passes the corrupt files by.
        store
            .save(&record("queued", "w", RunStatus::Queued))
            .await
            .unwrap();
        let next = store.claim_next("w", &lease("w1", 60)).await.unwrap();
        assert_eq!(next.map(|r| r.run_id).as_deref(), Some("queued"));
    });
    std::fs::remove_dir_all(dir).unwrap();
}

/// A bounded memory store forgets the least recently saved run that is not running.
#[test]
fn a_full_memory_store_forgets_its_oldest_idle_run() {
    runtime().block_on(async {
        let store = MemoryStore::bounded(2);
        store
            .save(&record("a", "w", RunStatus::Paused))
            .await
            .unwrap();
        std::thread::sleep(Duration::from_millis(3));
        store
            .save(&record("b", "w", RunStatus::Finished))
            .await
            .unwrap();
        std::thread::sleep(Duration::from_millis(3));
        // A save of a stored run makes no room.
        let a = store.load("a").await.unwrap();
        store.save(&a).await.unwrap();
        assert_eq!(store.list().await.unwrap().len(), 2);
        store
            .save(&record("c", "w", RunStatus::Running))
            .await
            .unwrap();
        // `b` was the least recently saved.
        not_found(store.load("b").await);
        assert_eq!(store.load("a").await.unwrap().sequence, 2);
        store
            .save(&record("d", "w", RunStatus::Running))
            .await
            .unwrap();
        not_found(store.load("a").await);
        // Both kept runs run: no room, and a retry may help.
        let full = store.save(&record("e", "w", RunStatus::Paused)).await;
        assert!(
            full.as_ref().is_err_and(StoreError::is_retryable),
            "{full:?}"
        );
        assert_eq!(store.list().await.unwrap().len(), 2);
    });
}

/// The rules themselves, at their bounds, with exact times.
#[test]
fn the_shared_rules_at_their_bounds() {
    let mut paused = record("r", "w", RunStatus::Paused);
    paused.sequence = 4;
    assert!(check_claim(&paused, 4, 0).is_ok());
    conflict(check_claim(&paused, 3, 0), "r", 3, 4);
    conflict(check_claim(&paused, 5, 0), "r", 5, 4);
    let mut running = paused.clone();
    running.status = RunStatus::Running;
    running.lease_until_ms = 1_000;
    // The lease ends at its time: from then on the run is runnable.
    assert!(check_claim(&running, 4, 1_000).is_ok());
    assert!(check_claim(&running, 4, 1_001).is_ok());
    already(check_claim(&running, 4, 999), "r");
    already(check_claim(&running, 3, 1_000), "r");
    already(check_claim(&running, 5, 2_000), "r");
    assert!(running.is_runnable(1_000) && !running.is_runnable(999));
    let mut queued = paused.clone();
    queued.status = RunStatus::Queued;
    not_paused(check_claim(&queued, 4, 0), RunStatus::Queued);
    assert!(queued.is_runnable(0));
    let mut answered = paused.clone();
    answered.status = RunStatus::Answered;
    assert!(check_claim(&answered, 4, 0).is_ok());
    conflict(check_claim(&answered, 3, 0), "r", 3, 4);
    conflict(check_claim(&answered, 5, 0), "r", 5, 4);
    assert!(answered.is_runnable(0));
    for status in [RunStatus::Paused, RunStatus::Finished, RunStatus::Failed] {
        let mut r = paused.clone();
        r.status = status;
        r.lease_until_ms = 0;
        assert!(!r.is_runnable(u64::MAX));
    }

    // Saves: the stored sequence (0 when absent) is the one read.
    assert_eq!(
        check_save(None, &record("r", "w", RunStatus::Paused)).unwrap(),
        1
    );
    assert_eq!(check_save(Some(&paused), &paused).unwrap(), 5);
    let mut stale = paused.clone();
    stale.sequence = 3;
    conflict(check_save(Some(&paused), &stale), "r", 3, 4);
    conflict(check_save(None, &paused), "r", 4, 0);

    // The record written keeps the first save's creation time and the store's takeovers.
    let mut stored = paused.clone();
    stored.created_ms = 11;
    stored.takeovers = 2;
    let mut incoming = paused.clone();
    incoming.created_ms = 99;
    incoming.takeovers = 7;
    let before = now_ms();
    let written = saved_record(Some(&stored), &incoming, 5);
    assert_eq!(
        (written.sequence, written.created_ms, written.takeovers),
        (5, 11, 2)
    );
    assert!(written.updated_ms >= before);
    let first = saved_record(None, &incoming, 1);
    assert_eq!(
        (first.sequence, first.created_ms, first.takeovers),
        (1, 99, 0)
    );

    // A claim: running at the next sequence, held until the lease ends; a takeover counted.
    let worker = Lease::new("w1", Duration::from_millis(500));
    let mut claimed = paused.clone();
    claim_record(&mut claimed, &worker, 10_000);
    assert_eq!(
        (
            claimed.status,
            claimed.sequence,
            claimed.owner.as_deref(),
            claimed.lease_until_ms,
            claimed.updated_ms,
            claimed.takeovers
        ),
        (RunStatus::Running, 5, Some("w1"), 10_500, 10_000, 0)
    );
    claim_record(&mut claimed, &worker, 20_000);
    assert_eq!((claimed.sequence, claimed.takeovers), (6, 1));

    // A renewal: the owner of a running run only.
    renew_lease(
        &mut claimed,
        &Lease::new("w1", Duration::from_secs(1)),
        30_000,
    )
    .unwrap();
    assert_eq!(claimed.lease_until_ms, 31_000);
    lease_lost(
        renew_lease(&mut claimed, &Lease::new("w2", Duration::from_secs(1)), 0),
        "r",
        "w2",
    );
    assert_eq!(claimed.lease_until_ms, 31_000);
    let mut idle = paused.clone();
    idle.owner = Some("w1".into());
    lease_lost(
        renew_lease(&mut idle, &Lease::new("w1", Duration::from_secs(1)), 0),
        "r",
        "w1",
    );
}

/// An I/O failure other than a missing file is the backend's, never "no such run" or "no such
/// contract": a run file or a contract file that is a folder cannot be read or deleted.
#[test]
fn file_store_io_failures_are_not_missing_runs() {
    let dir = temp_dir("io");
    runtime().block_on(async {
        let store = FileStore::open(&dir).unwrap();
        std::fs::create_dir(dir.join("folder.run.json")).unwrap();
        let read = store.load("folder").await;
        assert!(matches!(read, Err(StoreError::Backend(_))), "{read:?}");
        let deleted = store.delete("folder").await;
        assert!(
            matches!(deleted, Err(StoreError::Backend(_))),
            "{deleted:?}"
        );
        assert!(dir.join("folder.run.json").is_dir());
        std::fs::create_dir_all(dir.join("contracts/0123456789abcdef.json")).unwrap();
        let contract = store.load_contract("0123456789abcdef").await;
        assert!(
            matches!(contract, Err(StoreError::Backend(_))),
            "{contract:?}"
        );
    });
    std::fs::remove_dir_all(dir).unwrap();
}
