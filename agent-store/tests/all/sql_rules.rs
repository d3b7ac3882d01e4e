//! The SQL stores' own rules, on SQLite and PostgreSQL (with `DATABASE_URL`; skipped with a
//! message without it): pages of runs (status, position, limit) agree with the default
//! `list_page` of the memory store; a stored row is untrusted (a bad status, a negative
//! number, a value of the wrong type are `Corrupt`, named, and listed in place); a store of a
//! newer schema version is refused and one of version 1 is upgraded once; PostgreSQL schema
//! names are `a-z 0-9 _` only.

use agent_contracts_runtime::store::now_ms;
use agent_contracts_runtime::{
    store::CheckpointStore, store::MemoryStore, store::RunPage, store::RunRecord, store::RunStatus,
    store::StoreError,
};
use agent_contracts_store::{PostgresStore, SCHEMA_VERSION, SqliteStore};
use std::path::PathBuf;
use std::time::Duration;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agent-store-sql-{tag}-{}-{}",
        std::process::id(),
        now_ms()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs of three statuses, created in order; every page asked of `store` is the memory
/// store's page of the same runs.
async fn pages(store: &dyn CheckpointStore) {
    let memory = MemoryStore::default();
    let statuses = [RunStatus::Paused, RunStatus::Finished, RunStatus::Queued];
    for i in 0..7 {
        let record = RunRecord::new(
            format!("page-{i}"),
            "w",
            statuses[i % 3],
            format!(r#"{{"i": {i}}}"#),
        );
        store.save(&record).await.unwrap();
        memory.save(&record).await.unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let ids = |runs: Vec<Result<RunRecord, StoreError>>| -> Vec<String> {
        runs.into_iter().map(|r| r.unwrap().run_id).collect()
    };
    let all = ids(store.list().await.unwrap());
    assert_eq!(all.len(), 7);
    let third = store.load(&all[2]).await.unwrap();
    // The memory store's creation times differ from the database's: its pages start after
    // its own record of the same run.
    let third_in_memory = memory.load(&all[2]).await.unwrap();
    for (status, after, limit) in [
        (None, false, 100),
        (None, false, 3),
        (None, false, 0),
        (Some(RunStatus::Paused), false, 100),
        (Some(RunStatus::Finished), false, 1),
        (Some(RunStatus::Running), false, 100),
        (None, true, 100),
        (None, true, 2),
        (Some(RunStatus::Queued), true, 100),
    ] {
        let page = |at: &RunRecord| RunPage {
            status,
            after: after.then(|| (at.created_ms, at.run_id.clone())),
            limit,
        };
        let got = ids(store.list_page(&page(&third)).await.unwrap());
        let want = ids(memory.list_page(&page(&third_in_memory)).await.unwrap());
        assert_eq!(got, want, "{status:?} after {after} limit {limit}");
    }
    let paused = ids(store
        .list_page(&RunPage {
            status: Some(RunStatus::Paused),
            ..RunPage::first(10)
        })
        .await
        .unwrap());
    assert_eq!(paused, ["page-0", "page-3", "page-6"]);
    let after = ids(store
        .list_page(&RunPage {
            status: None,
            after: Some((third.created_ms, third.run_id.clone())),
            limit: 2,
        })
        .await
        .unwrap());
    assert_eq!(after, ["page-3", "page-4"]);
}

/// A row edited behind the store's back: its run is corrupt, named, listed in its place.
async fn raw_rows<F, Fut>(store: &dyn CheckpointStore, edit: F)
where
    F: Fn(&'static str) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    store
        .save(&RunRecord::new("raw-run", "w", RunStatus::Paused, "{}"))
        .await
        .unwrap();
    for (set, reason) in [
        ("status = 'bogus'", "its status `bogus` is not a run status"),
        (
            "status = 'paused', sequence = -1",
            "its sequence (-1) is negative",
        ),
        (
            "sequence = 1, created_ms = -2",
            "its creation time (-2) is negative",
        ),
        (
            "created_ms = 1, updated_ms = -3",
            "its update time (-3) is negative",
        ),
        (
            "updated_ms = 1, lease_until_ms = -4",
            "its lease end (-4) is negative",
        ),
        (
            "lease_until_ms = 0, takeovers = -5",
            "its takeover count (-5) is negative",
        ),
    ] {
        edit(set).await;
        let refused = store.load("raw-run").await.unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("stored run `raw-run` is corrupt: {reason}")
        );
        let listed = store.list().await.unwrap();
        assert!(
            listed.iter().any(
                |r| matches!(r, Err(StoreError::Corrupt { run_id, .. }) if run_id == "raw-run")
            ),
            "{listed:?}"
        );
    }
    // Put right, the run reads again, its numbers as stored.
    edit("takeovers = 6, lease_until_ms = 7").await;
    let fixed = store.load("raw-run").await.unwrap();
    assert_eq!(
        (
            fixed.sequence,
            fixed.created_ms,
            fixed.updated_ms,
            fixed.lease_until_ms,
            fixed.takeovers
        ),
        (1, 1, 1, 7, 6)
    );
    store.delete("raw-run").await.unwrap();
}

#[test]
fn sqlite_rules() {
    let dir = temp_dir("sqlite");
    let url = format!("sqlite:{}", dir.join("runs.db").display());
    runtime().block_on(async {
        let store = SqliteStore::open(&url).await.unwrap();
        pages(&store).await;
        let pool = store.pool().clone();
        raw_rows(&store, |set| {
            let pool = pool.clone();
            async move {
                let sql = format!("UPDATE agent_runs SET {set} WHERE run_id = 'raw-run'");
                sqlx::query(&sql).execute(&pool).await.unwrap();
            }
        })
        .await;
        // Migrating again adds no version; a newer version is refused.
        store.migrate().await.unwrap();
        let versions: Vec<i64> = sqlx::query_scalar("SELECT version FROM agent_store_schema")
            .fetch_all(store.pool())
            .await
            .unwrap();
        assert_eq!(versions, [SCHEMA_VERSION]);
        sqlx::query("INSERT INTO agent_store_schema (version) VALUES ($1)")
            .bind(SCHEMA_VERSION + 1)
            .execute(store.pool())
            .await
            .unwrap();
        let newer = store.migrate().await.unwrap_err();
        assert!(newer.to_string().contains("is newer than"), "{newer}");
        store.pool().close().await;
        // A URL for a store of a newer schema is refused at open.
        assert!(SqliteStore::open(&url).await.is_err());
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn postgres_rules() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        println!("skipped: the PostgreSQL store's rules need DATABASE_URL");
        return;
    };
    runtime().block_on(async {
        let schema = format!("sqlrules_{}_{}", std::process::id(), now_ms());
        let store = PostgresStore::connect_in_schema(&url, Some(&schema))
            .await
            .unwrap();
        pages(&store).await;
        let pool = store.pool().clone();
        let table = format!("{schema}.agent_runs");
        raw_rows(&store, |set| {
            let (pool, table) = (pool.clone(), table.clone());
            async move {
                let sql = format!("UPDATE {table} SET {set} WHERE run_id = 'raw-run'");
                sqlx::query(&sql).execute(&pool).await.unwrap();
            }
        })
        .await;
        store.migrate().await.unwrap();
        let versions: Vec<i64> =
            sqlx::query_scalar(&format!("SELECT version FROM {schema}.agent_store_schema"))
                .fetch_all(store.pool())
                .await
                .unwrap();
        assert_eq!(versions, [SCHEMA_VERSION]);
        sqlx::query(&format!(
            "INSERT INTO {schema}.agent_store_schema (version) VALUES ($1)"
        ))
        .bind(SCHEMA_VERSION + 1)
        .execute(store.pool())
        .await
        .unwrap();
        let newer = store.migrate().await.unwrap_err();
        assert!(newer.to_string().contains("is newer than"), "{newer}");
        // Schema names are `a-z 0-9 _`, not starting with a digit, at most 63 bytes.
        let long = "s".repeat(64);
        for bad in ["", "1abc", "Abc", "a-b", "a.b", "a b", "é", long.as_str()] {
            let refused = PostgresStore::from_pool(pool.clone(), Some(bad));
            assert!(refused.is_err(), "{bad:?}");
        }
        let longest = "s".repeat(63);
        for good in ["_x1", "a", "z9_", longest.as_str()] {
            assert!(
                PostgresStore::from_pool(pool.clone(), Some(good)).is_ok(),
                "{good}"
            );
        }
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(store.pool())
            .await
            .unwrap();
        store.pool().close().await;
    });
}
