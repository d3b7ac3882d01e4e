//! What a fleet of workers relies on, on the memory, SQLite and PostgreSQL stores (with
//! `DATABASE_URL`; skipped with a message without it):
//!
//! - history: every transition is appended in order (enqueued, claimed, taken over, step
//!   completed, paused, answered, released, failed, completed) with its owner and step, and
//!   goes with the run when it is deleted;
//! - attempts: each claim counts one, a save resets the count, a release gives its attempt
//!   back;
//! - release: a released run is queued (answered, if its answer is still recorded), has no
//!   owner and no lease, and its next claim is not a takeover; another owner's runs stay;
//! - the database's clock (SQL stores): a writer whose clock runs five minutes ahead gets a
//!   lease of its length from the database's now, not one that ends five minutes late.

use agent_contracts_runtime::store::{
    CheckpointStore, Lease, MemoryStore, RunEvent, RunRecord, RunStatus, StoreError, Transition,
    now_ms,
};
use agent_contracts_store::{PostgresStore, SqliteStore};
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn events(history: &agent_contracts_runtime::store::RunHistory) -> Vec<(RunEvent, Option<&str>)> {
    history
        .entries
        .iter()
        .map(|e| (e.event, e.owner.as_deref()))
        .collect()
}

/// A run through every transition a fleet makes, its attempts and its history.
async fn lifecycle(store: &dyn CheckpointStore) {
    let a = Lease::new("a", Duration::from_secs(60));
    // A lease that has ended as soon as it is taken: the next claim is a takeover.
    let dead = Lease::new("dead", Duration::ZERO);
    store
        .save(&RunRecord::new("life", "w", RunStatus::Queued, "{}"))
        .await
        .unwrap();
    let claimed = store.claim_next("w", &dead).await.unwrap().unwrap();
    assert_eq!((claimed.attempts, claimed.takeovers), (1, 0));
    let taken = store.claim_next("w", &a).await.unwrap().unwrap();
    assert_eq!((taken.attempts, taken.takeovers), (2, 1));
    assert_eq!(taken.owner.as_deref(), Some("a"));
    // A step saved: the attempts start again.
    let mut step = taken.clone();
    step.transition = Some(Transition::new(RunEvent::StepCompleted).step("venue_agent"));
    store.save(&step).await.unwrap();
    let saved = store.load("life").await.unwrap();
    assert_eq!((saved.attempts, saved.takeovers), (0, 1));
    // Nothing else is runnable while `a` holds it.
    assert_eq!(store.claim_next("w", &dead).await.unwrap(), None);
    // Another owner releases nothing of `a`'s.
    assert_eq!(store.release(&dead).await.unwrap(), 0);
    assert_eq!(store.release(&a).await.unwrap(), 1);
    let released = store.load("life").await.unwrap();
    assert_eq!(released.status, RunStatus::Queued);
    assert_eq!((released.owner, released.lease_until_ms), (None, 0));
    // Its next claim is a plain claim, and counts one attempt (the release gave its back).
    let again = store.claim_next("w", &a).await.unwrap().unwrap();
    assert_eq!((again.attempts, again.takeovers), (1, 1));
    let mut paused = again.clone();
    paused.status = RunStatus::Paused;
    paused.owner = None;
    paused.lease_until_ms = 0;
    paused.transition = Some(Transition::new(RunEvent::Paused).by("a"));
    store.save(&paused).await.unwrap();
    let mut answered = store.load("life").await.unwrap();
    answered.status = RunStatus::Answered;
    answered.answer = Some("yes".into());
    store.save(&answered).await.unwrap();
    let resumed = store.claim_next("w", &a).await.unwrap().unwrap();
    // Released before its first save after the answer: it goes back answered.
    assert_eq!(store.release(&a).await.unwrap(), 1);
    let back = store.load("life").await.unwrap();
    assert_eq!(
        (back.status, back.answer.as_deref()),
        (RunStatus::Answered, Some("yes"))
    );
    let resumed = store.claim_next("w", &a).await.unwrap().unwrap_or(resumed);
    let mut failed = resumed.clone();
    failed.status = RunStatus::Failed;
    failed.owner = None;
    failed.error = Some("step `venue_agent` broke".into());
    failed.transition = Some(
        Transition::new(RunEvent::Failed)
            .by("a")
            .step("venue_agent"),
    );
    store.save(&failed).await.unwrap();
    let ended = store.load("life").await.unwrap();
    assert_eq!(ended.error.as_deref(), Some("step `venue_agent` broke"));
    assert_eq!(store.claim_next("w", &a).await.unwrap(), None);

    let history = store.history("life").await.unwrap();
    use RunEvent::*;
    assert_eq!(
        events(&history),
        [
            (Enqueued, None),
            (Claimed, Some("dead")),
            (TakenOver, Some("a")),
            (StepCompleted, Some("a")),
            (Released, Some("a")),
            (Claimed, Some("a")),
            (Paused, Some("a")),
            (Answered, None),
            (Claimed, Some("a")),
            (Released, Some("a")),
            (Claimed, Some("a")),
            (Failed, Some("a")),
        ]
    );
    assert_eq!(history.entries[3].step.as_deref(), Some("venue_agent"));
    assert_eq!(history.entries[11].step.as_deref(), Some("venue_agent"));
    let times: Vec<u64> = history.entries.iter().map(|e| e.at_ms).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let now = now_ms();
    assert!(
        times[0] + 60_000 > now && times[11] <= now + 60_000,
        "{times:?}"
    );
    // The history goes with the run.
    store.delete("life").await.unwrap();
    assert!(matches!(
        store.history("life").await,
        Err(StoreError::NotFound { .. })
    ));
}

/// A writer whose clock runs five minutes ahead: the lease it asks for starts at the
/// database's now.
async fn database_clock(store: &dyn CheckpointStore) {
    let ahead = now_ms() + 300_000;
    let mut record = RunRecord::new("clock", "w", RunStatus::Running, "{}");
    record.owner = Some("ahead".into());
    record.updated_ms = ahead;
    record.created_ms = ahead;
    record.lease_until_ms = ahead + 2_000;
    store.save(&record).await.unwrap();
    let stored = store.load("clock").await.unwrap();
    let now = now_ms();
    assert!(
        stored.lease_until_ms <= now + 2_000 && stored.lease_until_ms + 10_000 > now,
        "lease until {} at {now}",
        stored.lease_until_ms
    );
    assert!(stored.updated_ms <= now, "{} at {now}", stored.updated_ms);
    // Still leased by the database's clock: nobody takes it over.
    let other = Lease::new("other", Duration::from_secs(60));
    assert_eq!(store.claim_next("w", &other).await.unwrap(), None);
    store.delete("clock").await.unwrap();
}

#[test]
fn memory_store_fleet_rules() {
    runtime().block_on(lifecycle(&MemoryStore::default()));
}

#[test]
fn sqlite_store_fleet_rules() {
    let dir = std::env::temp_dir().join(format!("agent-store-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    runtime().block_on(async {
        let url = format!("sqlite:{}", dir.join("runs.db").display());
        let store = SqliteStore::open(&url).await.unwrap();
        lifecycle(&store).await;
        database_clock(&store).await;
        // SQLite sends no wake-ups: its workers poll.
        assert!(store.listen("w").await.unwrap().is_none());
        store.pool().close().await;
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn postgres_store_fleet_rules() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: the PostgreSQL store's fleet rules need DATABASE_URL");
        return;
    };
    let schema = format!("fleet_{}_{}", std::process::id(), now_ms());
    runtime().block_on(async {
        let store = PostgresStore::connect_in_schema(&url, Some(&schema))
            .await
            .unwrap();
        lifecycle(&store).await;
        database_clock(&store).await;
        // An enqueued run and a release wake a listener of its workflow; another workflow's
        // runs do not.
        let mut wake_ups = store.listen("w").await.unwrap().unwrap();
        store
            .save(&RunRecord::new("other", "v", RunStatus::Queued, "{}"))
            .await
            .unwrap();
        store
            .save(&RunRecord::new("woken", "w", RunStatus::Queued, "{}"))
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), wake_ups.next())
            .await
            .expect("a notice within 5 s")
            .unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(200), wake_ups.next()).await;
        assert!(quiet.is_err(), "no notice for another workflow's run");
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(store.pool())
            .await
            .unwrap();
        store.pool().close().await;
    });
}
