//! Durable [`CheckpointStore`]s for `agent-core` workflows: SQLite and PostgreSQL on one
//! driver (sqlx), and a folder of files.
//!
//! - [`FileStore`] keeps each run in a file of one folder (`file:DIR`), for one process.
//! - `SqliteStore` (feature `sqlite`) is the embedded default: `sqlite:runs.db`, created if
//!   missing.
//! - `PostgresStore` (feature `postgres`; `rustls` adds TLS, `sslmode=require` and the
//!   `verify-*` modes) lets several workers share runs: saves are optimistic on the sequence
//!   number and a claim is one conditional `UPDATE`, so two workers never resume one run.
//! - Each store creates its table on first use and records its schema version.
//! - The state is `TEXT`, never `jsonb`: its key order and number text survive.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agent_core::StoreError> {
//! let store = agent_store::open("sqlite:runs.db").await?;
//! for run in store.list().await? {
//!     match run {
//!         Ok(run) => println!("{} {}", run.run_id, run.status),
//!         Err(corrupt) => eprintln!("skipped: {corrupt}"),
//!     }
//! }
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// With neither database feature only the file store is built: the SQL helpers go unused.
#![cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(dead_code, unused_imports, unused_macros)
)]

use agent_core::__private::check_claim;
use agent_core::BoxFuture;
use agent_core::{CheckpointStore, Lease, RunRecord, RunStatus, StoreError};
#[cfg(feature = "postgres")]
use sqlx::postgres::{PgPool, PgPoolOptions};
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
#[cfg(feature = "sqlite")]
use std::str::FromStr as _;
use std::sync::Arc;
#[cfg(feature = "sqlite")]
use std::time::Duration;

mod file;
pub use file::FileStore;

/// The schema version this crate writes.
pub const SCHEMA_VERSION: i64 = 2;

/// Opens the store a URL names: `sqlite:PATH`, `postgres://...` or `file:DIR`. No error
/// carries the URL's password (see [`redact_url`]).
pub async fn open(url: &str) -> Result<Arc<dyn CheckpointStore>, StoreError> {
    let opened: Result<Arc<dyn CheckpointStore>, StoreError> =
        if let Some(dir) = url.strip_prefix("file:") {
            FileStore::open(dir).map(|s| Arc::new(s) as _)
        } else if url.starts_with("sqlite:") {
            open_sqlite(url).await
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            open_postgres(url).await
        } else {
            Err(StoreError::backend(format!(
                "store url `{}` is none of `sqlite:PATH`, `postgres://...` and `file:DIR`",
                redact_url(url)
            )))
        };
    opened.map_err(|e| scrub(e, url))
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(url: &str) -> Result<Arc<dyn CheckpointStore>, StoreError> {
    Ok(Arc::new(SqliteStore::open(url).await?))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_: &str) -> Result<Arc<dyn CheckpointStore>, StoreError> {
    Err(StoreError::Unsupported {
        operation: "open `sqlite:` URLs: this agent-store is built without its `sqlite` feature",
    })
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str) -> Result<Arc<dyn CheckpointStore>, StoreError> {
    Ok(Arc::new(PostgresStore::connect(url).await?))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_: &str) -> Result<Arc<dyn CheckpointStore>, StoreError> {
    Err(StoreError::Unsupported {
        operation: "open `postgres://` URLs: this agent-store is built without its `postgres` feature",
    })
}

/// `url` with its password, in the user part (`user:PASSWORD@host`) or a query parameter
/// whose name holds `password`, replaced by `***`: the form to print or log.
///
/// ```
/// assert_eq!(
///     agent_store::redact_url("postgres://app:s3cret@db:5432/runs?sslpassword=k&sslmode=require"),
///     "postgres://app:***@db:5432/runs?sslpassword=***&sslmode=require"
/// );
/// assert_eq!(agent_store::redact_url("sqlite:runs.db"), "sqlite:runs.db");
/// ```
pub fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut out = match (base.find("://"), base.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &base[scheme + 3..at];
            match user.split_once(':') {
                Some((name, _)) => format!("{}{name}:***{}", &base[..scheme + 3], &base[at..]),
                None => base.to_owned(),
            }
        }
        _ => base.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.to_ascii_lowercase().contains("password") => {
                    format!("{key}=***")
                }
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

/// The secrets `url` holds, as written: the user part's password and `*password*` parameters.
fn secrets(url: &str) -> Vec<&str> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut found = Vec::new();
    if let (Some(scheme), Some(at)) = (base.find("://"), base.rfind('@'))
        && at > scheme
        && let Some((_, password)) = base[scheme + 3..at].split_once(':')
    {
        found.push(password);
    }
    for pair in query.split('&') {
        if let Some((key, value)) = pair.split_once('=')
            && key.to_ascii_lowercase().contains("password")
        {
            found.push(value);
        }
    }
    found.retain(|s| !s.is_empty());
    found
}

/// `error` with every secret of `url` it might quote (a driver's message may hold the URL)
/// replaced by `***`.
fn scrub(error: StoreError, url: &str) -> StoreError {
    let secrets = secrets(url);
    let text = error.to_string();
    if !secrets.iter().any(|s| text.contains(s)) {
        return error;
    }
    let clean = secrets
        .iter()
        .fold(text, |text, secret| text.replace(secret, "***"));
    StoreError::backend(clean)
}

/// The statements of one backend, with its table names and placeholders.
#[derive(Debug)]
struct Sql {
    insert: String,
    update: String,
    select: String,
    list: String,
    delete: String,
    claim: String,
    claim_next: String,
    renew: String,
    prune: String,
    /// `$` (PostgreSQL) or `?` (SQLite).
    placeholder: char,
    /// The page query: `{status}` and `{after}` are replaced by the filters a page has.
    page: String,
}

const COLUMNS: &str = "run_id, workflow, status, sequence, state, created_ms, updated_ms, \
                       owner, lease_until_ms, takeovers, answer";

impl Sql {
    /// `prefix` qualifies the tables (`schema.` or nothing); `$n` placeholders become `?n` on
    /// SQLite.
    fn new(prefix: &str, sqlite: bool) -> Self {
        let t = format!("{prefix}agent_runs");
        let fix = |s: String| if sqlite { s.replace('$', "?") } else { s };
        // PostgreSQL lets racing workers skip each other's candidate row; SQLite has one
        // writer at a time, so its single statement is exclusive as it is.
        let skip_locked = if sqlite {
            ""
        } else {
            " FOR UPDATE SKIP LOCKED"
        };
        Self {
            placeholder: if sqlite { '?' } else { '$' },
            insert: fix(format!(
                "INSERT INTO {t} ({COLUMNS}) VALUES ($1, $2, $3, 1, $4, $5, $5, $6, $7, 0, $8) \
                 ON CONFLICT (run_id) DO NOTHING"
            )),
            update: fix(format!(
                "UPDATE {t} SET workflow = $2, status = $3, sequence = sequence + 1, state = $4, \
                 updated_ms = $5, owner = $6, lease_until_ms = $7, answer = $8 \
                 WHERE run_id = $1 AND sequence = $9"
            )),
            select: fix(format!("SELECT {COLUMNS} FROM {t} WHERE run_id = $1")),
            list: format!("SELECT {COLUMNS} FROM {t} ORDER BY created_ms, run_id"),
            delete: fix(format!("DELETE FROM {t} WHERE run_id = $1")),
            claim: fix(format!(
                "UPDATE {t} SET status = 'running', sequence = sequence + 1, updated_ms = $3, \
                 owner = $4, lease_until_ms = $5, \
                 takeovers = takeovers + CASE WHEN status = 'running' THEN 1 ELSE 0 END \
                 WHERE run_id = $1 AND sequence = $2 AND (status = 'paused' OR \
                 (status = 'running' AND lease_until_ms <= $3)) RETURNING {COLUMNS}"
            )),
            claim_next: fix(format!(
                "UPDATE {t} SET status = 'running', sequence = sequence + 1, updated_ms = $2, \
                 owner = $3, lease_until_ms = $4, \
                 takeovers = takeovers + CASE WHEN status = 'running' THEN 1 ELSE 0 END \
                 WHERE run_id = (SELECT run_id FROM {t} WHERE workflow = $1 AND \
                 (status IN ('queued', 'answered') OR (status = 'running' AND lease_until_ms <= $2)) \
                 ORDER BY updated_ms, run_id LIMIT 1{skip_locked}) RETURNING {COLUMNS}"
            )),
            renew: fix(format!(
                "UPDATE {t} SET lease_until_ms = $3 \
                 WHERE run_id = $1 AND owner = $2 AND status = 'running'"
            )),
            page: format!(
                "SELECT {COLUMNS} FROM {t} WHERE TRUE{{status}}{{after}} \
                 ORDER BY created_ms, run_id LIMIT {{limit}}"
            ),
            prune: fix(format!(
                "DELETE FROM {t} WHERE status IN ('finished', 'failed') AND updated_ms < $1"
            )),
        }
    }

    fn schema(prefix: &str) -> [String; 3] {
        [
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_store_schema (version BIGINT NOT NULL)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_runs (run_id TEXT PRIMARY KEY, \
                 workflow TEXT NOT NULL, status TEXT NOT NULL, sequence BIGINT NOT NULL, \
                 state TEXT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, \
                 owner TEXT, lease_until_ms BIGINT NOT NULL DEFAULT 0, \
                 takeovers BIGINT NOT NULL DEFAULT 0, answer TEXT)"
            ),
            // What a worker's claim looks for, in the order it takes it.
            format!(
                "CREATE INDEX IF NOT EXISTS agent_runs_runnable ON {prefix}agent_runs \
                 (workflow, status, updated_ms)"
            ),
        ]
    }

    /// The statements that bring a store at schema version `from` (`None`: just created) to
    /// [`SCHEMA_VERSION`]: version 2 added the lease columns and the recorded answer.
    ///
    /// Each added column has a default, so a build of version 1 still reads and writes the
    /// table; PostgreSQL adds them only if missing (SQLite cannot say so, and needs not: its
    /// file has one writer of the schema at a time).
    fn upgrade(prefix: &str, from: Option<i64>, sqlite: bool) -> Vec<String> {
        let t = format!("{prefix}agent_runs");
        let if_missing = if sqlite { "" } else { "IF NOT EXISTS " };
        let mut statements = Vec::new();
        if from == Some(1) {
            for column in [
                "owner TEXT",
                "lease_until_ms BIGINT NOT NULL DEFAULT 0",
                "takeovers BIGINT NOT NULL DEFAULT 0",
                "answer TEXT",
            ] {
                statements.push(format!("ALTER TABLE {t} ADD COLUMN {if_missing}{column}"));
            }
        }
        if from != Some(SCHEMA_VERSION) {
            statements.push(format!(
                "INSERT INTO {prefix}agent_store_schema (version) VALUES ({SCHEMA_VERSION})"
            ));
        }
        statements
    }
}

/// The page query of `template` for `page`: its filters, numbered in bind order.
fn page_sql(template: &str, page: &agent_core::RunPage, placeholder: char) -> String {
    let mut n = 0;
    let mut next = || {
        n += 1;
        format!("{placeholder}{n}")
    };
    let status = match page.status {
        Some(_) => format!(" AND status = {}", next()),
        None => String::new(),
    };
    let after = match page.after {
        Some(_) => format!(" AND (created_ms, run_id) > ({}, {})", next(), next()),
        None => String::new(),
    };
    // The limit is a number, never text: it is written in, not bound.
    let limit = i64::try_from(page.limit).unwrap_or(i64::MAX);
    template
        .replace("{status}", &status)
        .replace("{after}", &after)
        .replace("{limit}", &limit.to_string())
}

/// A row as stored: untrusted until [`into_record`] checked it.
type Row = (
    String,
    String,
    String,
    i64,
    String,
    i64,
    i64,
    Option<String>,
    i64,
    i64,
    Option<String>,
);

fn into_record(row: Row) -> Result<RunRecord, StoreError> {
    let (run_id, workflow, status, sequence, state, created, updated) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
    let (owner, lease_until, takeovers, answer) = (row.7, row.8, row.9, row.10);
    let corrupt = |reason: String| StoreError::Corrupt {
        run_id: run_id.chars().take(128).collect(),
        reason,
    };
    // The status as stored is the status's serde form (`running`, `paused`, ...).
    let Ok(status) = serde_json::from_value::<RunStatus>(serde_json::Value::String(status.clone()))
    else {
        let shown: String = status.chars().take(40).collect();
        return Err(corrupt(format!("its status `{shown}` is not a run status")));
    };
    let number = |n: i64, what: &str| {
        u64::try_from(n).map_err(|_| corrupt(format!("its {what} ({n}) is negative")))
    };
    Ok(RunRecord {
        sequence: number(sequence, "sequence")?,
        created_ms: number(created, "creation time")?,
        updated_ms: number(updated, "update time")?,
        lease_until_ms: number(lease_until, "lease end")?,
        takeovers: number(takeovers, "takeover count")?,
        run_id,
        workflow,
        status,
        state,
        owner,
        answer,
    })
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn backend(error: sqlx::Error) -> StoreError {
    StoreError::backend(error)
}

fn checked_version(found: Option<i64>) -> Result<(), StoreError> {
    match found {
        Some(v) if v > SCHEMA_VERSION => Err(StoreError::backend(format!(
            "the store's schema version {v} is newer than this agent-store's ({SCHEMA_VERSION})"
        ))),
        _ => Ok(()),
    }
}

/// Runs in a SQLite file: the embedded default.
#[cfg(feature = "sqlite")]
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    sql: Arc<Sql>,
}

#[cfg(feature = "sqlite")]
impl SqliteStore {
    /// Opens (creating if missing) the database at `url` (`sqlite:PATH`), and creates or
    /// upgrades its tables ([`migrate`](Self::migrate)).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(backend)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(backend)?;
        let store = Self::from_pool(pool);
        store.migrate().await?;
        Ok(store)
    }

    /// A store on the application's own pool. Nothing is created: the tables must be there
    /// ([`migrate`](Self::migrate), once, by whoever has the rights to create them).
    pub fn from_pool(pool: SqlitePool) -> Self {
        Self {
            pool,
            sql: Arc::new(Sql::new("", true)),
        }
    }

    /// Creates the tables, or upgrades them to [`SCHEMA_VERSION`], in one transaction; a
    /// store of a newer version is refused. Safe to run again.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(backend)?;
        for statement in Sql::schema("") {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        let version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM agent_store_schema")
                .fetch_one(&mut *tx)
                .await
                .map_err(backend)?;
        checked_version(version)?;
        for statement in Sql::upgrade("", version, true) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)
    }

    /// The connection pool, for tools that inspect the table.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

/// Runs in PostgreSQL, shared by any number of workers.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    sql: Arc<Sql>,
    /// Where the tables are (`None`: the search path).
    schema: Option<String>,
}

#[cfg(feature = "postgres")]
impl PostgresStore {
    /// Connects to `url` and creates the tables in the default schema.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_in_schema(url, None).await
    }

    /// Connects to `url` and keeps the tables in `schema` (created if missing; `a-z 0-9 _`),
    /// so that several deployments or test runs share a database without colliding; creates
    /// or upgrades the tables ([`migrate`](Self::migrate)).
    pub async fn connect_in_schema(url: &str, schema: Option<&str>) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .connect(url)
            .await
            .map_err(backend)?;
        let store = Self::from_pool(pool, schema)?;
        store.migrate().await?;
        Ok(store)
    }

    /// A store on the application's own pool, its tables in `schema` (`a-z 0-9 _`; `None`:
    /// the connection's search path). Nothing is created: the tables must be there
    /// ([`migrate`](Self::migrate), once, by whoever has the rights to create them).
    pub fn from_pool(pool: PgPool, schema: Option<&str>) -> Result<Self, StoreError> {
        let schema = match schema {
            Some(s) if is_identifier(s) => Some(s.to_owned()),
            Some(s) => {
                return Err(StoreError::backend(format!(
                    "schema `{}` is not made of `a-z 0-9 _`",
                    s.chars().take(64).collect::<String>()
                )));
            }
            None => None,
        };
        let prefix = schema
            .as_ref()
            .map_or_else(String::new, |s| format!("{s}."));
        Ok(Self {
            pool,
            sql: Arc::new(Sql::new(&prefix, false)),
            schema,
        })
    }

    /// Creates the schema and tables, or upgrades them to [`SCHEMA_VERSION`], in one
    /// transaction under an advisory lock (workers starting together migrate once); a store
    /// of a newer version is refused. Safe to run again.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let prefix = self
            .schema
            .as_ref()
            .map_or_else(String::new, |s| format!("{s}."));
        let mut tx = self.pool.begin().await.map_err(backend)?;
        sqlx::query("SELECT pg_advisory_xact_lock(4242013)")
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        if let Some(schema) = &self.schema {
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        for statement in Sql::schema(&prefix) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        let version: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT MAX(version) FROM {prefix}agent_store_schema"
        ))
        .fetch_one(&mut *tx)
        .await
        .map_err(backend)?;
        checked_version(version)?;
        for statement in Sql::upgrade(&prefix, version, false) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)
    }

    /// The connection pool, for tools that inspect the table.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

#[cfg(feature = "postgres")]
fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

/// The trait's body, the same text for both pools: sqlx's query API is.
macro_rules! checkpoint_store {
    ($store:ty, $row:ty) => {
        impl $store {
            /// A row as read, checked: a value of the wrong type (SQLite keeps any) is
            /// [`StoreError::Corrupt`] naming the run, like a value out of range.
            fn decode(row: &$row) -> Result<RunRecord, StoreError> {
                match sqlx::FromRow::from_row(row) {
                    Ok(decoded) => into_record(decoded),
                    Err(e) => Err(StoreError::Corrupt {
                        run_id: sqlx::Row::try_get::<String, _>(row, 0)
                            .map_or_else(|_| "?".into(), |id| id.chars().take(128).collect()),
                        reason: format!("its row does not decode: {e}"),
                    }),
                }
            }
        }

        impl CheckpointStore for $store {
            fn save<'a>(&'a self, record: &'a RunRecord) -> BoxFuture<'a, Result<u64, StoreError>> {
                Box::pin(async move {
                    let now = int(agent_core::__private::now_ms());
                    let sql = if record.sequence == 0 {
                        &self.sql.insert
                    } else {
                        &self.sql.update
                    };
                    let mut query = sqlx::query(sql)
                        .bind(&record.run_id)
                        .bind(&record.workflow)
                        .bind(record.status.to_string())
                        .bind(&record.state)
                        .bind(now)
                        .bind(&record.owner)
                        .bind(int(record.lease_until_ms))
                        .bind(&record.answer);
                    if record.sequence != 0 {
                        query = query.bind(int(record.sequence));
                    }
                    let done = query.execute(&self.pool).await.map_err(backend)?;
                    if done.rows_affected() == 1 {
                        return Ok(record.sequence + 1);
                    }
                    let found = match self.load(&record.run_id).await {
                        Ok(stored) => stored.sequence,
                        Err(StoreError::NotFound { .. }) => 0,
                        Err(other) => return Err(other),
                    };
                    Err(StoreError::Conflict {
                        run_id: record.run_id.clone(),
                        expected: record.sequence,
                        found,
                    })
                })
            }

            fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
                Box::pin(async move {
                    let row = sqlx::query(&self.sql.select)
                        .bind(run_id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(backend)?;
                    match row {
                        Some(row) => Self::decode(&row),
                        None => Err(StoreError::NotFound {
                            run_id: run_id.chars().take(128).collect(),
                        }),
                    }
                })
            }

            fn list(
                &self,
            ) -> BoxFuture<'_, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
                Box::pin(async move {
                    let rows = sqlx::query(&self.sql.list)
                        .fetch_all(&self.pool)
                        .await
                        .map_err(backend)?;
                    // Decoded row by row: a value of the wrong type (SQLite keeps any) is that
                    // row's error, not the list's.
                    Ok(rows.iter().map(Self::decode).collect())
                })
            }

            fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    let done = sqlx::query(&self.sql.delete)
                        .bind(run_id)
                        .execute(&self.pool)
                        .await
                        .map_err(backend)?;
                    match done.rows_affected() {
                        0 => Err(StoreError::NotFound {
                            run_id: run_id.chars().take(128).collect(),
                        }),
                        _ => Ok(()),
                    }
                })
            }

            fn claim<'a>(
                &'a self,
                run_id: &'a str,
                sequence: u64,
                lease: &'a Lease,
            ) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
                Box::pin(async move {
                    let now = agent_core::__private::now_ms();
                    let mut tx = self.pool.begin().await.map_err(backend)?;
                    let rows: Vec<Row> = sqlx::query_as(&self.sql.claim)
                        .bind(run_id)
                        .bind(int(sequence))
                        .bind(int(now))
                        .bind(&lease.owner)
                        .bind(int(lease.until_ms(now)))
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(backend)?;
                    // The row comes back before the commit: the claim is won only once the
                    // commit succeeded (a full disk fails it), so two resumers never both pass.
                    tx.commit().await.map_err(backend)?;
                    if let Some(row) = rows.into_iter().next() {
                        return into_record(row);
                    }
                    let stored = self.load(run_id).await?;
                    check_claim(&stored, sequence, now)?;
                    // Paused at `sequence` now, but not when the update ran: it moved on.
                    Err(StoreError::AlreadyClaimed {
                        run_id: stored.run_id,
                    })
                })
            }

            fn claim_next<'a>(
                &'a self,
                workflow: &'a str,
                lease: &'a Lease,
            ) -> BoxFuture<'a, Result<Option<RunRecord>, StoreError>> {
                Box::pin(async move {
                    let now = agent_core::__private::now_ms();
                    let mut tx = self.pool.begin().await.map_err(backend)?;
                    let rows = sqlx::query(&self.sql.claim_next)
                        .bind(workflow)
                        .bind(int(now))
                        .bind(&lease.owner)
                        .bind(int(lease.until_ms(now)))
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(backend)?;
                    // Won only once committed, as `claim`.
                    tx.commit().await.map_err(backend)?;
                    rows.first().map(Self::decode).transpose()
                })
            }

            fn list_page<'a>(
                &'a self,
                page: &'a agent_core::RunPage,
            ) -> BoxFuture<'a, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
                Box::pin(async move {
                    let sql = page_sql(&self.sql.page, page, self.sql.placeholder);
                    let mut query = sqlx::query(&sql);
                    if let Some(status) = page.status {
                        query = query.bind(status.to_string());
                    }
                    if let Some((created, id)) = &page.after {
                        query = query.bind(int(*created)).bind(id);
                    }
                    let rows = query.fetch_all(&self.pool).await.map_err(backend)?;
                    Ok(rows.iter().map(Self::decode).collect())
                })
            }

            fn prune(&self, age: std::time::Duration) -> BoxFuture<'_, Result<u64, StoreError>> {
                Box::pin(async move {
                    let age = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
                    let before = agent_core::__private::now_ms().saturating_sub(age);
                    let done = sqlx::query(&self.sql.prune)
                        .bind(int(before))
                        .execute(&self.pool)
                        .await
                        .map_err(backend)?;
                    Ok(done.rows_affected())
                })
            }

            fn renew<'a>(
                &'a self,
                run_id: &'a str,
                lease: &'a Lease,
            ) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    let now = agent_core::__private::now_ms();
                    let done = sqlx::query(&self.sql.renew)
                        .bind(run_id)
                        .bind(&lease.owner)
                        .bind(int(lease.until_ms(now)))
                        .execute(&self.pool)
                        .await
                        .map_err(backend)?;
                    if done.rows_affected() == 1 {
                        return Ok(());
                    }
                    // Not found stays not found; a run held by another or ended is lost.
                    self.load(run_id).await?;
                    Err(agent_core::__private::lease_lost(run_id, lease))
                })
            }
        }
    };
}

#[cfg(feature = "sqlite")]
checkpoint_store!(SqliteStore, sqlx::sqlite::SqliteRow);
#[cfg(feature = "postgres")]
checkpoint_store!(PostgresStore, sqlx::postgres::PgRow);
