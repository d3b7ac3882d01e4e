//! Store errors that say what and where: the store (its URL without the password, or the
//! SQLite path) and what to check; a PostgreSQL server that does not answer is an error
//! within its `connect_timeout` (5 s unless the URL says), not a pool's half-minute wait.

use std::net::TcpListener;

/// A loopback port nothing listens on: bound by the OS, then closed.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

#[tokio::test]
async fn a_closed_postgres_port_is_named_with_what_to_check() {
    let port = closed_port();
    let url = format!("postgres://app:s3cret@127.0.0.1:{port}/runs");
    let Err(error) = agent_contracts::store::open(&url).await else {
        panic!("nothing listens on {port}");
    };
    let text = error.to_string();
    assert!(
        text.starts_with(&format!(
            "store backend failed: PostgreSQL store `postgres://app:***@127.0.0.1:{port}/runs` refused the connection: "
        )),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            ": check that the server runs and listens on 127.0.0.1:{port}"
        )),
        "{text}"
    );
    assert!(
        !text.contains("s3cret") && !text.contains("pool timed out"),
        "{text}"
    );
    assert!(error.is_retryable());
}

/// A server that accepts the connection and never answers: the bounded first connection
/// gives up after the URL's `connect_timeout` and says so.
#[tokio::test]
async fn a_silent_postgres_server_times_out_and_says_so() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            held.push(socket);
        }
    });
    let url =
        format!("postgres://app:s3cret@127.0.0.1:{port}/runs?connect_timeout=1&sslmode=disable");
    let Err(error) = agent_contracts::store::open(&url).await else {
        panic!("the server never answers");
    };
    assert_eq!(
        error.to_string(),
        format!(
            "store backend failed: PostgreSQL store `postgres://app:***@127.0.0.1:{port}/runs?sslmode=disable`: \
             no connection within 1 s (its connect_timeout): check that the server runs and that \
             127.0.0.1:{port} is reachable from here; give `connect_timeout=SECONDS` in the URL to wait longer"
        )
    );
    silent.abort();
    let bad =
        agent_contracts::store::open("postgres://app:s3cret@127.0.0.1:1/runs?connect_timeout=soon")
            .await
            .err()
            .unwrap();
    assert_eq!(
        bad.to_string(),
        "store backend failed: PostgreSQL store `postgres://app:***@127.0.0.1:1/runs?connect_timeout=soon`: \
         `connect_timeout` must be a whole number of seconds, not `soon`"
    );
}

#[tokio::test]
async fn an_unopenable_sqlite_path_is_named() {
    let dir = crate::stores::temp_dir("unopenable");
    let path = dir.join("no-such-folder").join("runs.db");
    let Err(error) = agent_contracts::store::open(&format!("sqlite:{}", path.display())).await
    else {
        panic!("its folder does not exist");
    };
    let text = error.to_string();
    assert!(
        text.starts_with(&format!(
            "store backend failed: SQLite store at `{}` cannot be opened: ",
            path.display()
        )),
        "{text}"
    );
    assert!(
        text.ends_with(
            ": check that its folder exists and that this user may read and write the file and the folder"
        ),
        "{text}"
    );
    crate::stores::remove_dir(dir)().await;
}

/// A failure after opening names the store too (here: the tables were never created).
#[tokio::test]
async fn a_failing_query_names_the_store() {
    let dir = crate::stores::temp_dir("unmigrated");
    let path = dir.join("runs.db");
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let store = agent_contracts::store::SqliteStore::from_pool(pool.clone());
    let error = agent_contracts::store::CheckpointStore::load(&store, "any")
        .await
        .unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "store backend failed: SQLite store at `{}`: ",
            path.display()
        )),
        "{error}"
    );
    pool.close().await;
    crate::stores::remove_dir(dir)().await;
}
