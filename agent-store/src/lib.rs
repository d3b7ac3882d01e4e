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
//! - Each run names the fingerprints of the contracts it was recorded under, and the store
//!   keeps each contract version by fingerprint (`agent_contracts`), so a later build can
//!   tell whether its contracts still accept what the run holds.
//! - Errors name the store (its URL without the password, or the SQLite path) and what to
//!   check; connecting to PostgreSQL gives up after [`CONNECT_TIMEOUT`] (or the URL's
//!   `connect_timeout=SECONDS`) with the reason, not after a pool's half-minute wait.
//! - The state is `TEXT`, never `jsonb`: its key order and number text survive.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agent_contracts_runtime::store::StoreError> {
//! let store = agent_contracts_store::open("sqlite:runs.db").await?;
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
// docs.rs (`--cfg docsrs`, nightly) marks each feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// With neither database feature only the file store is built: the SQL helpers go unused.
#![cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(dead_code, unused_imports, unused_macros)
)]

use agent_contracts_runtime::model::BoxFuture;
use agent_contracts_runtime::store::check_claim;
use agent_contracts_runtime::{
    store::CheckpointStore, store::Lease, store::RunRecord, store::RunStatus, store::StoreError,
};
#[cfg(feature = "postgres")]
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use std::collections::HashSet;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use std::str::FromStr as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod file;
pub use file::FileStore;

/// The schema version this crate writes.
pub const SCHEMA_VERSION: i64 = 5;

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
///     agent_contracts_store::redact_url("postgres://app:s3cret@db:5432/runs?sslpassword=k&sslmode=require"),
///     "postgres://app:***@db:5432/runs?sslpassword=***&sslmode=require"
/// );
/// assert_eq!(agent_contracts_store::redact_url("sqlite:runs.db"), "sqlite:runs.db");
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

/// How long connecting to PostgreSQL may take unless the URL says otherwise with
/// `connect_timeout=SECONDS` (libpq's parameter): a closed port or a dropped packet is an
/// error within seconds, not a pool's half-minute wait.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// `url` without its `connect_timeout` parameter (sqlx does not know it), and the timeout it
/// gives ([`CONNECT_TIMEOUT`] when none; at least 1 s).
#[cfg(feature = "postgres")]
fn connect_timeout(url: &str) -> Result<(String, Duration), StoreError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), CONNECT_TIMEOUT));
    };
    let mut timeout = CONNECT_TIMEOUT;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("connect_timeout", value)) => {
                let seconds: u64 = value.parse().map_err(|_| {
                    StoreError::backend(format!(
                        "PostgreSQL store `{}`: `connect_timeout` must be a whole number of \
                         seconds, not `{}`",
                        redact_url(url),
                        value.chars().take(20).collect::<String>()
                    ))
                })?;
                timeout = Duration::from_secs(seconds.max(1));
            }
            _ => kept.push(pair),
        }
    }
    let url = match kept.is_empty() {
        true => base.to_owned(),
        false => format!("{base}?{}", kept.join("&")),
    };
    Ok((url, timeout))
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

/// The statements of one backend, with its table names and placeholders. Every time a lease
/// decision reads or writes (`updated_ms`, `lease_until_ms`, history times) is the database's
/// own clock (`{now}`), never a worker's: a worker whose clock is off cannot end a live lease.
#[derive(Debug)]
struct Sql {
    insert: String,
    update: String,
    select: String,
    /// A run's sequence: whether it is stored.
    select_sequence: String,
    list: String,
    delete: String,
    delete_history: String,
    delete_events: String,
    claim: String,
    claim_next: String,
    renew: String,
    release: String,
    prune: String,
    prune_history: String,
    prune_events: String,
    /// Appends one transcript event: `(run_id, seq, at_ms, event)`, kept as first written.
    append_event: String,
    /// A run's transcript events after a `seq`, in order, at most a limit.
    read_events: String,
    /// Appends a history row: `(run_id, at_ms, event, owner, step)`.
    history: String,
    /// Appends the history row of the claim just written in the run's row.
    claim_history: String,
    /// PostgreSQL: each write and its history row (and its notice) as one statement, so a save
    /// or a claim is one round trip instead of a transaction's four or five (BEGIN, the write,
    /// the history row, the notice, COMMIT), which a worker waited on in turn. A statement is a
    /// transaction of its own; its data-modifying `WITH` parts run to completion together or
    /// not at all. SQLite has no data-modifying `WITH`, and keeps the transaction (in-process,
    /// it has no round trips to save).
    logged: Option<Logged>,
    /// A run's history, oldest first.
    read_history: String,
    /// The database's time, in milliseconds since the Unix epoch.
    now: String,
    /// Tells listening workers that a run of a workflow may be runnable (PostgreSQL).
    notify: Option<String>,
    /// The payload of a workflow's notices: `<schema>.<workflow>`, so that stores in several
    /// schemas of one database (named, or by the connection's search path) wake only their
    /// own workers. Read only by the PostgreSQL store's `LISTEN`: a SQLite-only build keeps it
    /// unread rather than giving the two engines different `Sql` shapes.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    notice: String,
    /// `$` (PostgreSQL) or `?` (SQLite).
    placeholder: char,
    /// The page query: `{status}` and `{after}` are replaced by the filters a page has.
    page: String,
    /// Keeps a contract schema under its fingerprint, unless one is kept already.
    keep_contract: String,
    load_contract: String,
}

/// The one-statement writes of [`Sql::logged`]; `[without, with]` the notice for a save.
#[derive(Debug)]
struct Logged {
    /// The first save: the insert's parameters, then `$11` the history's owner, `$12` its step.
    insert: [String; 2],
    /// A later save: the update's parameters, then `$12` the history's owner, `$13` its step.
    update: [String; 2],
    /// `claim`, returning the run's columns.
    claim: String,
    /// `claim_next`, returning the run's columns.
    claim_next: String,
}

const COLUMNS: &str = "run_id, workflow, status, sequence, state, created_ms, updated_ms, \
                       owner, lease_until_ms, takeovers, answer, contracts, attempts, error";

/// The channel the PostgreSQL store notifies on; the payload is `<schema.>workflow`.
const CHANNEL: &str = "agent_runs";

impl Sql {
    /// `prefix` qualifies the tables (`schema.` or nothing); `$n` placeholders become `?n` on
    /// SQLite.
    fn new(prefix: &str, sqlite: bool) -> Self {
        let t = format!("{prefix}agent_runs");
        let h = format!("{prefix}agent_run_history");
        let e = format!("{prefix}agent_run_events");
        // The schema's name is `a-z 0-9 _` (checked), safe to write in as a literal.
        let schema = match prefix.strip_suffix('.') {
            Some(name) => format!("'{name}'"),
            None if sqlite => "''".to_owned(),
            None => "current_schema()".to_owned(),
        };
        // Milliseconds since the epoch by the database's clock: on PostgreSQL the start of
        // the statement (`now()` would be the transaction's, which a claim begun before an
        // enqueue committed would date before it), SQLite's own clock (its Julian day,
        // rounded: truncated, its float arithmetic could date a time a millisecond early).
        // PostgreSQL's is exact to the microsecond and truncated, as `now_ms` truncates the
        // system clock (a cast to BIGINT alone would round, and date a time up to half a
        // millisecond after a `now_ms` read later).
        let now = if sqlite {
            "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"
        } else {
            "FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT"
        };
        let fix = |s: String| {
            let s = s.replace("{now}", now);
            if sqlite { s.replace('$', "?") } else { s }
        };
        // PostgreSQL lets racing workers skip each other's candidate row; SQLite has one
        // writer at a time, so its single statement is exclusive as it is.
        let skip_locked = if sqlite {
            ""
        } else {
            " FOR UPDATE SKIP LOCKED"
        };
        // A lease asked for as a length ($n > 0) ends that long after the database's now.
        let lease = |n: u8| format!("CASE WHEN ${n} > 0 THEN {{now}} + ${n} ELSE 0 END");
        // A claim of a running run (its lease ended) is a takeover.
        let claimed = "takeovers = takeovers + CASE WHEN status = 'running' THEN 1 ELSE 0 END, \
                       attempts = attempts + 1, \
                       last_event = CASE WHEN status = 'running' THEN 'taken_over' ELSE 'claimed' END";
        let insert = format!(
            "INSERT INTO {t} ({COLUMNS}, last_event) VALUES ($1, $2, $3, 1, $4, {{now}}, \
             {{now}}, $5, {}, 0, $7, $8, 0, $9, $10) ON CONFLICT (run_id) DO NOTHING",
            lease(6)
        );
        let update = format!(
            "UPDATE {t} SET workflow = $2, status = $3, sequence = sequence + 1, state = $4, \
             updated_ms = {{now}}, owner = $5, lease_until_ms = {}, answer = $7, \
             contracts = $8, error = $9, last_event = $10, \
             attempts = CASE WHEN $10 = 'released' AND attempts > 0 THEN attempts - 1 ELSE 0 END \
             WHERE run_id = $1 AND sequence = $11",
            lease(6)
        );
        let claim = format!(
            "UPDATE {t} SET status = 'running', sequence = sequence + 1, updated_ms = {{now}}, \
             owner = $3, lease_until_ms = {{now}} + $4, {claimed} \
             WHERE run_id = $1 AND sequence = $2 AND (status IN ('paused', 'answered') OR \
             (status = 'running' AND lease_until_ms <= {{now}}))"
        );
        let claim_next = format!(
            "UPDATE {t} SET status = 'running', sequence = sequence + 1, updated_ms = {{now}}, \
             owner = $2, lease_until_ms = {{now}} + $3, {claimed} \
             WHERE run_id = (SELECT run_id FROM {t} WHERE workflow = $1 AND \
             (status IN ('queued', 'answered') OR \
             (status = 'running' AND lease_until_ms <= {{now}})) \
             ORDER BY updated_ms, run_id LIMIT 1{skip_locked})"
        );
        // The save's history row: the event ($10, as `last_event`), the owner and the step
        // given after the write's own parameters; the notice, when asked, per row written.
        let saved = |write: &str, owner: u8, step: u8, notice: bool| {
            let notice = if notice {
                format!(", pg_notify('{CHANNEL}', {schema} || '.' || $2)")
            } else {
                String::new()
            };
            fix(format!(
                "WITH w AS ({write} RETURNING run_id, updated_ms), \
                 h AS (INSERT INTO {h} (run_id, at_ms, event, owner, step) \
                 SELECT run_id, updated_ms, $10, ${owner}, ${step} FROM w RETURNING at_ms) \
                 SELECT at_ms{notice} FROM h"
            ))
        };
        // A claim's history row is the claimed row's own event and owner, as `claim_history`.
        let claimed_logged = |write: &str| {
            fix(format!(
                "WITH c AS ({write} RETURNING {COLUMNS}, last_event), \
                 h AS (INSERT INTO {h} (run_id, at_ms, event, owner, step) \
                 SELECT run_id, updated_ms, last_event, owner, NULL FROM c) \
                 SELECT {COLUMNS} FROM c"
            ))
        };
        let logged = (!sqlite).then(|| Logged {
            insert: [saved(&insert, 11, 12, false), saved(&insert, 11, 12, true)],
            update: [saved(&update, 12, 13, false), saved(&update, 12, 13, true)],
            claim: claimed_logged(&claim),
            claim_next: claimed_logged(&claim_next),
        });
        Self {
            logged,
            placeholder: if sqlite { '?' } else { '$' },
            insert: fix(format!("{insert} RETURNING updated_ms")),
            update: fix(format!("{update} RETURNING updated_ms")),
            select: fix(format!("SELECT {COLUMNS} FROM {t} WHERE run_id = $1")),
            select_sequence: fix(format!("SELECT sequence FROM {t} WHERE run_id = $1")),
            list: format!("SELECT {COLUMNS} FROM {t} ORDER BY created_ms, run_id"),
            delete: fix(format!("DELETE FROM {t} WHERE run_id = $1")),
            delete_history: fix(format!("DELETE FROM {h} WHERE run_id = $1")),
            delete_events: fix(format!("DELETE FROM {e} WHERE run_id = $1")),
            claim: fix(format!("{claim} RETURNING {COLUMNS}")),
            claim_next: fix(format!("{claim_next} RETURNING {COLUMNS}")),
            renew: fix(format!(
                "UPDATE {t} SET lease_until_ms = {{now}} + $3 \
                 WHERE run_id = $1 AND owner = $2 AND status = 'running'"
            )),
            release: fix(format!(
                "UPDATE {t} SET status = CASE WHEN answer IS NULL THEN 'queued' ELSE 'answered' END, \
                 sequence = sequence + 1, updated_ms = {{now}}, owner = NULL, lease_until_ms = 0, \
                 last_event = 'released', \
                 attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END \
                 WHERE owner = $1 AND status = 'running' RETURNING run_id, updated_ms, workflow"
            )),
            page: format!(
                "SELECT {COLUMNS} FROM {t} WHERE TRUE{{status}}{{after}} \
                 ORDER BY created_ms, run_id LIMIT {{limit}}"
            ),
            prune: fix(format!(
                "DELETE FROM {t} WHERE status IN ('finished', 'failed') AND updated_ms < {{now}} - $1"
            )),
            prune_history: fix(format!(
                "DELETE FROM {h} WHERE run_id IN (SELECT run_id FROM {t} WHERE \
                 status IN ('finished', 'failed') AND updated_ms < {{now}} - $1)"
            )),
            prune_events: fix(format!(
                "DELETE FROM {e} WHERE run_id IN (SELECT run_id FROM {t} WHERE \
                 status IN ('finished', 'failed') AND updated_ms < {{now}} - $1)"
            )),
            append_event: fix(format!(
                "INSERT INTO {e} (run_id, seq, at_ms, event) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (run_id, seq) DO NOTHING"
            )),
            read_events: fix(format!(
                "SELECT seq, at_ms, event FROM {e} WHERE run_id = $1 AND seq > $2 \
                 ORDER BY seq LIMIT $3"
            )),
            history: fix(format!(
                "INSERT INTO {h} (run_id, at_ms, event, owner, step) VALUES ($1, $2, $3, $4, $5)"
            )),
            claim_history: fix(format!(
                "INSERT INTO {h} (run_id, at_ms, event, owner, step) \
                 SELECT run_id, updated_ms, last_event, owner, NULL FROM {t} WHERE run_id = $1"
            )),
            read_history: fix(format!(
                "SELECT at_ms, event, owner, step FROM {h} WHERE run_id = $1 ORDER BY id"
            )),
            now: fix("SELECT {now}".to_owned()),
            notify: (!sqlite)
                .then(|| format!("SELECT pg_notify('{CHANNEL}', {schema} || '.' || $1)")),
            notice: format!("SELECT {schema} || '.' || $1"),
            keep_contract: fix(format!(
                "INSERT INTO {prefix}agent_contracts (fingerprint, contract) VALUES ($1, $2) \
                 ON CONFLICT (fingerprint) DO NOTHING"
            )),
            load_contract: fix(format!(
                "SELECT contract FROM {prefix}agent_contracts WHERE fingerprint = $1"
            )),
        }
    }

    fn schema(prefix: &str, sqlite: bool) -> [String; 7] {
        // The history's order is its rows' order of insertion.
        let id = if sqlite {
            "id INTEGER PRIMARY KEY AUTOINCREMENT"
        } else {
            "id BIGSERIAL PRIMARY KEY"
        };
        [
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_store_schema (version BIGINT NOT NULL)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_runs (run_id TEXT PRIMARY KEY, \
                 workflow TEXT NOT NULL, status TEXT NOT NULL, sequence BIGINT NOT NULL, \
                 state TEXT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, \
                 owner TEXT, lease_until_ms BIGINT NOT NULL DEFAULT 0, \
                 takeovers BIGINT NOT NULL DEFAULT 0, answer TEXT, contracts TEXT, \
                 attempts BIGINT NOT NULL DEFAULT 0, error TEXT, last_event TEXT)"
            ),
            // The contract versions runs were recorded under, by fingerprint.
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_contracts (fingerprint TEXT PRIMARY KEY, \
                 contract TEXT NOT NULL)"
            ),
            // What a worker's claim looks for, in the order it takes it.
            format!(
                "CREATE INDEX IF NOT EXISTS agent_runs_runnable ON {prefix}agent_runs \
                 (workflow, status, updated_ms)"
            ),
            // Every transition of every run, appended.
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_run_history ({id}, \
                 run_id TEXT NOT NULL, at_ms BIGINT NOT NULL, event TEXT NOT NULL, owner TEXT, \
                 step TEXT)"
            ),
            format!(
                "CREATE INDEX IF NOT EXISTS agent_run_history_run ON {prefix}agent_run_history \
                 (run_id, id)"
            ),
            // Each run's transcript events, appended as they happen (a recorder's).
            format!(
                "CREATE TABLE IF NOT EXISTS {prefix}agent_run_events (run_id TEXT NOT NULL, \
                 seq BIGINT NOT NULL, at_ms BIGINT NOT NULL, event TEXT NOT NULL, \
                 PRIMARY KEY (run_id, seq))"
            ),
        ]
    }

    /// The statements that bring a store at schema version `from` (`None`: just created) to
    /// [`SCHEMA_VERSION`]: version 2 added the lease columns and the recorded answer, version
    /// 3 the contract fingerprints of each run (and the `agent_contracts` table, which
    /// [`Sql::schema`] creates if missing), version 4 each run's attempts at its step, its
    /// failure reason and its last event (and the `agent_run_history` table, created if
    /// missing), version 5 the `agent_run_events` table (created if missing: nothing to
    /// alter). Rows written before version 3 have no fingerprints: they resume as before
    /// (see `RunRecord::contracts`); runs of before version 4 have no history before it.
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
        if matches!(from, Some(1 | 2)) {
            statements.push(format!(
                "ALTER TABLE {t} ADD COLUMN {if_missing}contracts TEXT"
            ));
        }
        if matches!(from, Some(1..=3)) {
            for column in [
                "attempts BIGINT NOT NULL DEFAULT 0",
                "error TEXT",
                "last_event TEXT",
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
fn page_sql(
    template: &str,
    page: &agent_contracts_runtime::store::RunPage,
    placeholder: char,
) -> String {
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
    Option<String>,
    i64,
    Option<String>,
);

fn into_record(row: Row) -> Result<RunRecord, StoreError> {
    let (run_id, workflow, status, sequence, state, created, updated) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
    let (owner, lease_until, takeovers, answer) = (row.7, row.8, row.9, row.10);
    let (contracts, attempts, error) = (row.11, row.12, row.13);
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
    let mut record = RunRecord::new(run_id.clone(), workflow, status, state);
    record.sequence = number(sequence, "sequence")?;
    record.created_ms = number(created, "creation time")?;
    record.updated_ms = number(updated, "update time")?;
    record.lease_until_ms = number(lease_until, "lease end")?;
    record.takeovers = number(takeovers, "takeover count")?;
    record.owner = owner;
    record.answer = answer;
    record.contracts = contracts;
    record.attempts = number(attempts, "attempt count")?;
    record.error = error;
    Ok(record)
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A store's own failure, naming the store (its label has no password).
macro_rules! named_failure {
    ($store:ty) => {
        impl $store {
            fn fail(&self, error: sqlx::Error) -> StoreError {
                StoreError::backend(format!("{}: {error}", self.label))
            }
        }
    };
}
#[cfg(feature = "sqlite")]
named_failure!(SqliteStore);
#[cfg(feature = "postgres")]
named_failure!(PostgresStore);

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
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    sql: Arc<Sql>,
    /// The contract fingerprints this store value has written (or found written).
    kept: Arc<Mutex<HashSet<String>>>,
    /// What its errors call it: `SQLite store at PATH`, `PostgreSQL store URL` (no password).
    label: Arc<str>,
}

#[cfg(feature = "sqlite")]
impl SqliteStore {
    /// Opens (creating if missing) the database at `url` (`sqlite:PATH`), and creates or
    /// upgrades its tables ([`migrate`](Self::migrate)).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| {
                StoreError::backend(format!(
                    "SQLite store URL `{}` does not parse ({e}): write it `sqlite:PATH`",
                    redact_url(url)
                ))
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(10));
        let path = options.get_filename().display().to_string();
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|e| {
                StoreError::backend(format!(
                    "SQLite store at `{path}` cannot be opened: {e}: check that its folder \
                     exists and that this user may read and write the file and the folder"
                ))
            })?;
        let store = Self::from_pool(pool);
        store.migrate().await?;
        Ok(store)
    }

    /// A store on the application's own pool. Nothing is created: the tables must be there
    /// ([`migrate`](Self::migrate), once, by whoever has the rights to create them).
    pub fn from_pool(pool: SqlitePool) -> Self {
        let label = format!(
            "SQLite store at `{}`",
            pool.connect_options().get_filename().display()
        );
        Self {
            pool,
            sql: Arc::new(Sql::new("", true)),
            kept: Arc::default(),
            label: label.into(),
        }
    }

    /// Creates the tables, or upgrades them to [`SCHEMA_VERSION`], in one transaction; a
    /// store of a newer version is refused. Safe to run again.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
        for statement in Sql::schema("", true) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
        }
        let version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM agent_store_schema")
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
        checked_version(version)?;
        for statement in Sql::upgrade("", version, true) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
        }
        tx.commit().await.map_err(|e| self.fail(e))
    }

    /// The connection pool, for tools that inspect the table.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

/// Runs in PostgreSQL, shared by any number of workers.
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    sql: Arc<Sql>,
    /// Where the tables are (`None`: the search path).
    schema: Option<String>,
    /// The contract fingerprints this store value has written (or found written).
    kept: Arc<Mutex<HashSet<String>>>,
    /// What its errors call it: `SQLite store at PATH`, `PostgreSQL store URL` (no password).
    label: Arc<str>,
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
        let (url, timeout) = connect_timeout(url)?;
        let shown = redact_url(&url);
        let options = PgConnectOptions::from_str(&url).map_err(|e| {
            StoreError::backend(format!(
                "PostgreSQL store URL `{shown}` does not parse ({e}): write it \
                 `postgres://USER:PASSWORD@HOST:PORT/DATABASE`"
            ))
        })?;
        let at = format!("{}:{}", options.get_host(), options.get_port());
        // One connection first, bounded: its own error says why (refused, unknown host, bad
        // password), where a pool would wait out its acquire timeout and say it timed out.
        match tokio::time::timeout(
            timeout,
            <PgConnection as sqlx::Connection>::connect_with(&options),
        )
        .await
        {
            Err(_) => {
                return Err(StoreError::backend(format!(
                    "PostgreSQL store `{shown}`: no connection within {} s (its \
                     connect_timeout): check that the server runs and that {at} is reachable \
                     from here; give `connect_timeout=SECONDS` in the URL to wait longer",
                    timeout.as_secs_f64()
                )));
            }
            Ok(Err(e)) => {
                let check = match &e {
                    sqlx::Error::Io(_) => {
                        format!("check that the server runs and listens on {at}")
                    }
                    sqlx::Error::Tls(_) => "check the `sslmode` and the server's TLS setup".into(),
                    sqlx::Error::Database(_) => {
                        "check the user, the password and the database name".into()
                    }
                    _ => "check the host, port, user, password and database of the URL".into(),
                };
                return Err(StoreError::backend(format!(
                    "PostgreSQL store `{shown}` refused the connection: {e}: {check}"
                )));
            }
            Ok(Ok(probe)) => {
                let _ = sqlx::Connection::close(probe).await;
            }
        }
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .connect_lazy_with(options);
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
        let options = pool.connect_options();
        let label = format!(
            "PostgreSQL store `postgres://{}@{}:{}/{}`",
            options.get_username(),
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or_default()
        );
        Ok(Self {
            pool,
            sql: Arc::new(Sql::new(&prefix, false)),
            schema,
            kept: Arc::default(),
            label: label.into(),
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
        let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
        sqlx::query("SELECT pg_advisory_xact_lock(4242013)")
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e))?;
        if let Some(schema) = &self.schema {
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
        }
        for statement in Sql::schema(&prefix, false) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
        }
        let version: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT MAX(version) FROM {prefix}agent_store_schema"
        ))
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| self.fail(e))?;
        checked_version(version)?;
        for statement in Sql::upgrade(&prefix, version, false) {
            sqlx::query(&statement)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
        }
        tx.commit().await.map_err(|e| self.fail(e))
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
    ($store:ty, $row:ty, $db:ty) => {
        impl $store {
            /// The database's time, in milliseconds since the Unix epoch.
            async fn now(&self) -> Result<u64, StoreError> {
                let now: i64 = sqlx::query_scalar(&self.sql.now)
                    .fetch_one(&self.pool)
                    .await
                    .map_err(|e| self.fail(e))?;
                Ok(u64::try_from(now).unwrap_or(0))
            }

            /// Tells listening workers, once `tx` commits, that a run of `workflow` may be
            /// runnable (PostgreSQL; SQLite's workers poll).
            async fn notify(
                &self,
                tx: &mut sqlx::Transaction<'_, $db>,
                workflow: &str,
            ) -> Result<(), StoreError> {
                let Some(notify) = &self.sql.notify else {
                    return Ok(());
                };
                sqlx::query(notify)
                    .bind(workflow)
                    .execute(&mut **tx)
                    .await
                    .map_err(|e| self.fail(e))?;
                Ok(())
            }

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
                    let first = record.sequence == 0;
                    let entry = agent_contracts_runtime::store::history_entry(record, first, 0);
                    // The write's parameters, the same in both forms.
                    let bound = |sql: &'a str| {
                        let query = sqlx::query_scalar::<_, i64>(sql)
                            .bind(&record.run_id)
                            .bind(&record.workflow)
                            .bind(record.status.to_string())
                            .bind(&record.state)
                            .bind(&record.owner)
                            .bind(int(record.lease_length_ms()))
                            .bind(&record.answer)
                            .bind(&record.contracts)
                            .bind(
                                record
                                    .error
                                    .as_deref()
                                    .filter(|_| record.status == RunStatus::Failed),
                            )
                            .bind(entry.event.as_str());
                        if first {
                            query
                        } else {
                            query.bind(int(record.sequence))
                        }
                    };
                    let notice = matches!(record.status, RunStatus::Queued | RunStatus::Answered);
                    let written = if let Some(logged) = &self.sql.logged {
                        let forms = if first {
                            &logged.insert
                        } else {
                            &logged.update
                        };
                        bound(&forms[usize::from(notice)])
                            .bind(&entry.owner)
                            .bind(&entry.step)
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(|e| self.fail(e))?
                            .map(|_| ())
                    } else {
                        let sql = if first {
                            &self.sql.insert
                        } else {
                            &self.sql.update
                        };
                        let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                        let at = bound(sql)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                        if let Some(at) = at {
                            sqlx::query(&self.sql.history)
                                .bind(&record.run_id)
                                .bind(at)
                                .bind(entry.event.as_str())
                                .bind(&entry.owner)
                                .bind(&entry.step)
                                .execute(&mut *tx)
                                .await
                                .map_err(|e| self.fail(e))?;
                            if notice {
                                self.notify(&mut tx, &record.workflow).await?;
                            }
                            // Written only once committed.
                            tx.commit().await.map_err(|e| self.fail(e))?;
                        }
                        at.map(|_| ())
                    };
                    if written.is_some() {
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
                        .map_err(|e| self.fail(e))?;
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
                        .map_err(|e| self.fail(e))?;
                    // Decoded row by row: a value of the wrong type (SQLite keeps any) is that
                    // row's error, not the list's.
                    Ok(rows.iter().map(Self::decode).collect())
                })
            }

            fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    // The run and its history go together.
                    let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                    for statement in [&self.sql.delete_history, &self.sql.delete_events] {
                        sqlx::query(statement)
                            .bind(run_id)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                    }
                    let done = sqlx::query(&self.sql.delete)
                        .bind(run_id)
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| self.fail(e))?;
                    tx.commit().await.map_err(|e| self.fail(e))?;
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
                    let bound = |sql: &'a str| {
                        sqlx::query_as(sql)
                            .bind(run_id)
                            .bind(int(sequence))
                            .bind(&lease.owner)
                            .bind(int(lease.until_ms(0)))
                    };
                    let rows: Vec<Row> = if let Some(logged) = &self.sql.logged {
                        // One statement, its own transaction: the rows come back only with
                        // the commit.
                        bound(&logged.claim)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(|e| self.fail(e))?
                    } else {
                        let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                        let rows = bound(&self.sql.claim)
                            .fetch_all(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                        if !rows.is_empty() {
                            sqlx::query(&self.sql.claim_history)
                                .bind(run_id)
                                .execute(&mut *tx)
                                .await
                                .map_err(|e| self.fail(e))?;
                        }
                        // The row comes back before the commit: the claim is won only once
                        // the commit succeeded (a full disk fails it), so two resumers never
                        // both pass.
                        tx.commit().await.map_err(|e| self.fail(e))?;
                        rows
                    };
                    if let Some(row) = rows.into_iter().next() {
                        return into_record(row);
                    }
                    let stored = self.load(run_id).await?;
                    check_claim(&stored, sequence, self.now().await?)?;
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
                    let bound = |sql: &'a str| {
                        sqlx::query(sql)
                            .bind(workflow)
                            .bind(&lease.owner)
                            .bind(int(lease.until_ms(0)))
                    };
                    let rows = if let Some(logged) = &self.sql.logged {
                        // One statement, as `claim`.
                        bound(&logged.claim_next)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(|e| self.fail(e))?
                    } else {
                        let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                        let rows = bound(&self.sql.claim_next)
                            .fetch_all(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                        if let Some(row) = rows.first() {
                            let run_id: String =
                                sqlx::Row::try_get(row, 0).map_err(|e| self.fail(e))?;
                            sqlx::query(&self.sql.claim_history)
                                .bind(run_id)
                                .execute(&mut *tx)
                                .await
                                .map_err(|e| self.fail(e))?;
                        }
                        // Won only once committed, as `claim`.
                        tx.commit().await.map_err(|e| self.fail(e))?;
                        rows
                    };
                    rows.first().map(Self::decode).transpose()
                })
            }

            fn list_page<'a>(
                &'a self,
                page: &'a agent_contracts_runtime::store::RunPage,
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
                    let rows = query
                        .fetch_all(&self.pool)
                        .await
                        .map_err(|e| self.fail(e))?;
                    Ok(rows.iter().map(Self::decode).collect())
                })
            }

            fn prune(&self, age: std::time::Duration) -> BoxFuture<'_, Result<u64, StoreError>> {
                Box::pin(async move {
                    let age = int(u64::try_from(age.as_millis()).unwrap_or(u64::MAX));
                    // Ended runs by the database's clock, with their history.
                    let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                    for statement in [&self.sql.prune_history, &self.sql.prune_events] {
                        sqlx::query(statement)
                            .bind(age)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                    }
                    let done = sqlx::query(&self.sql.prune)
                        .bind(age)
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| self.fail(e))?;
                    tx.commit().await.map_err(|e| self.fail(e))?;
                    Ok(done.rows_affected())
                })
            }

            fn save_contracts<'a>(
                &'a self,
                contracts: &'a [(String, String)],
            ) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    // Each fingerprint once per store value: later runners skip the database.
                    let new: Vec<&(String, String)> = {
                        let kept = self
                            .kept
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        contracts
                            .iter()
                            .filter(|(f, _)| !kept.contains(f))
                            .collect()
                    };
                    if new.is_empty() {
                        return Ok(());
                    }
                    let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                    for (fingerprint, contract) in &new {
                        sqlx::query(&self.sql.keep_contract)
                            .bind(fingerprint)
                            .bind(contract)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                    }
                    tx.commit().await.map_err(|e| self.fail(e))?;
                    let mut kept = self
                        .kept
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    kept.extend(new.into_iter().map(|(f, _)| f.clone()));
                    Ok(())
                })
            }

            fn load_contract<'a>(
                &'a self,
                fingerprint: &'a str,
            ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
                Box::pin(async move {
                    sqlx::query_scalar(&self.sql.load_contract)
                        .bind(fingerprint)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(|e| self.fail(e))
                })
            }

            fn renew<'a>(
                &'a self,
                run_id: &'a str,
                lease: &'a Lease,
            ) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    let done = sqlx::query(&self.sql.renew)
                        .bind(run_id)
                        .bind(&lease.owner)
                        .bind(int(lease.until_ms(0)))
                        .execute(&self.pool)
                        .await
                        .map_err(|e| self.fail(e))?;
                    if done.rows_affected() == 1 {
                        return Ok(());
                    }
                    // Not found stays not found; a run held by another or ended is lost.
                    self.load(run_id).await?;
                    Err(StoreError::lease_lost(run_id, lease))
                })
            }

            fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<u64, StoreError>> {
                Box::pin(async move {
                    let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                    let released: Vec<(String, i64, String)> = sqlx::query_as(&self.sql.release)
                        .bind(&lease.owner)
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(|e| self.fail(e))?;
                    let mut workflows = std::collections::BTreeSet::new();
                    for (run_id, at, workflow) in &released {
                        sqlx::query(&self.sql.history)
                            .bind(run_id)
                            .bind(at)
                            .bind(agent_contracts_runtime::store::RunEvent::Released.as_str())
                            .bind(&lease.owner)
                            .bind(None::<String>)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                        workflows.insert(workflow.as_str());
                    }
                    for workflow in workflows {
                        self.notify(&mut tx, workflow).await?;
                    }
                    tx.commit().await.map_err(|e| self.fail(e))?;
                    Ok(released.len() as u64)
                })
            }

            fn history<'a>(
                &'a self,
                run_id: &'a str,
            ) -> BoxFuture<'a, Result<agent_contracts_runtime::store::RunHistory, StoreError>> {
                Box::pin(async move {
                    use agent_contracts_runtime::store::{HistoryEntry, RunEvent, RunHistory};
                    // A run that is not stored has no history (it went with the run).
                    self.load(run_id).await?;
                    let rows: Vec<(i64, String, Option<String>, Option<String>)> =
                        sqlx::query_as(&self.sql.read_history)
                            .bind(run_id)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(|e| self.fail(e))?;
                    let corrupt = |reason: String| StoreError::Corrupt {
                        run_id: run_id.chars().take(128).collect(),
                        reason,
                    };
                    let mut entries = Vec::with_capacity(rows.len());
                    for (at, event, owner, step) in rows {
                        let Some(event) = RunEvent::parse(&event) else {
                            let shown: String = event.chars().take(40).collect();
                            return Err(corrupt(format!("its history holds the event `{shown}`")));
                        };
                        let at = u64::try_from(at)
                            .map_err(|_| corrupt(format!("its history holds the time {at}")))?;
                        entries.push(HistoryEntry::new(at, event, owner, step));
                    }
                    Ok(RunHistory::new(run_id, entries))
                })
            }

            fn append_events<'a>(
                &'a self,
                run_id: &'a str,
                events: &'a [agent_contracts_runtime::store::StoredEvent],
            ) -> BoxFuture<'a, Result<(), StoreError>> {
                Box::pin(async move {
                    // One transaction per batch: the run must be there (its events go with it).
                    let mut tx = self.pool.begin().await.map_err(|e| self.fail(e))?;
                    let found: Option<i64> = sqlx::query_scalar(&self.sql.select_sequence)
                        .bind(run_id)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(|e| self.fail(e))?;
                    if found.is_none() {
                        return Err(StoreError::not_found(run_id));
                    }
                    for event in events {
                        sqlx::query(&self.sql.append_event)
                            .bind(run_id)
                            .bind(int(event.seq))
                            .bind(int(event.at_ms))
                            .bind(&event.event)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| self.fail(e))?;
                    }
                    tx.commit().await.map_err(|e| self.fail(e))
                })
            }

            fn events<'a>(
                &'a self,
                run_id: &'a str,
                after: u64,
                limit: usize,
            ) -> BoxFuture<'a, Result<Vec<agent_contracts_runtime::store::StoredEvent>, StoreError>>
            {
                Box::pin(async move {
                    use agent_contracts_runtime::store::StoredEvent;
                    self.load(run_id).await?;
                    let rows: Vec<(i64, i64, String)> = sqlx::query_as(&self.sql.read_events)
                        .bind(run_id)
                        .bind(int(after))
                        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                        .fetch_all(&self.pool)
                        .await
                        .map_err(|e| self.fail(e))?;
                    let corrupt = |reason: String| StoreError::Corrupt {
                        run_id: run_id.chars().take(128).collect(),
                        reason,
                    };
                    rows.into_iter()
                        .map(|(seq, at, event)| {
                            let seq = u64::try_from(seq)
                                .map_err(|_| corrupt(format!("its events hold the seq {seq}")))?;
                            let at = u64::try_from(at)
                                .map_err(|_| corrupt(format!("its events hold the time {at}")))?;
                            Ok(StoredEvent::new(seq, at, event))
                        })
                        .collect()
                })
            }

            fn listen<'a>(
                &'a self,
                workflow: &'a str,
            ) -> BoxFuture<
                'a,
                Result<Option<Box<dyn agent_contracts_runtime::store::WakeUps>>, StoreError>,
            > {
                Box::pin(self.wake_ups(workflow))
            }
        }
    };
}

#[cfg(feature = "sqlite")]
checkpoint_store!(SqliteStore, sqlx::sqlite::SqliteRow, sqlx::Sqlite);
#[cfg(feature = "postgres")]
checkpoint_store!(PostgresStore, sqlx::postgres::PgRow, sqlx::Postgres);

#[cfg(feature = "sqlite")]
impl SqliteStore {
    /// SQLite sends no notices: its workers poll.
    async fn wake_ups(
        &self,
        _: &str,
    ) -> Result<Option<Box<dyn agent_contracts_runtime::store::WakeUps>>, StoreError> {
        Ok(None)
    }
}

/// The notices of one PostgreSQL store's workflow: `LISTEN` on one connection of its own.
#[cfg(feature = "postgres")]
struct PgWakeUps {
    listener: sqlx::postgres::PgListener,
    /// The payload of this store's workflow (`<schema.>workflow`): notices of other
    /// schemas' or workflows' runs are skipped.
    payload: String,
    label: Arc<str>,
}

#[cfg(feature = "postgres")]
impl agent_contracts_runtime::store::WakeUps for PgWakeUps {
    fn next(&mut self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            loop {
                let notice = self.listener.recv().await.map_err(|e| {
                    StoreError::backend(format!("{}: listening failed: {e}", self.label))
                })?;
                if notice.payload() == self.payload {
                    return Ok(());
                }
            }
        })
    }
}

#[cfg(feature = "postgres")]
impl PostgresStore {
    /// `LISTEN`s for the runs of `workflow` that become runnable, on a connection of its own.
    async fn wake_ups(
        &self,
        workflow: &str,
    ) -> Result<Option<Box<dyn agent_contracts_runtime::store::WakeUps>>, StoreError> {
        let payload: String = sqlx::query_scalar(&self.sql.notice)
            .bind(workflow)
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.fail(e))?;
        let mut listener = sqlx::postgres::PgListener::connect_with(&self.pool)
            .await
            .map_err(|e| self.fail(e))?;
        listener.listen(CHANNEL).await.map_err(|e| self.fail(e))?;
        Ok(Some(Box::new(PgWakeUps {
            listener,
            payload,
            label: self.label.clone(),
        })))
    }
}
