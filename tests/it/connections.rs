//! A LISTEN connection (`store::listening`) dropped where no Tokio runtime
//! runs is closed, not kept: an in-process hookd whose actix system ends
//! without a stop (a test that returns, a host that exits its runtime) drops
//! its listeners so. One test process runs hundreds of hookds, and a
//! connection kept by each once ran the shared cluster out of
//! `max_connections`.

use hookd::store::listening::Listening;
use sea_orm::{
    ConnectOptions, ConnectionTrait as _, Database, DatabaseConnection, Statement,
    sqlx::postgres::PgListener,
};

use crate::harness::{Backend, WAIT, database, skip_postgres, wait_until};

/// Connections to this database other than the asking one, and how many of
/// them LISTEN.
async fn connections(db: &DatabaseConnection) -> (i64, i64) {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE query LIKE 'LISTEN%') AS listening \
             FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
        ))
        .await
        .expect("pg_stat_activity is readable")
        .expect("a row");
    (
        row.try_get("", "n").expect("a count"),
        row.try_get("", "listening").expect("a count"),
    )
}

#[hookd_test_macros::test]
async fn on_postgresql_a_listening_connection_dropped_where_no_runtime_runs_is_closed() {
    if skip_postgres() {
        return;
    }
    let (url, _dir) = database(Backend::Postgres).await;
    let mut one = ConnectOptions::new(url.clone());
    one.max_connections(1);
    let observer = Database::connect(one).await.expect("a connection to look");
    let mut listener = PgListener::connect(&url).await.expect("a listener");
    listener.listen("hookd_test").await.expect("LISTEN");
    let listening = Listening::new(listener);
    assert_eq!(
        connections(&observer).await,
        (1, 1),
        "one connection, listening"
    );
    std::thread::spawn(move || drop(listening))
        .join()
        .expect("dropped on a thread with no runtime, without a panic");
    let closed = wait_until(WAIT, || async {
        (connections(&observer).await.0 == 0).then_some(())
    })
    .await;
    assert!(
        closed.is_some(),
        "the listening connection should be closed once dropped; open: {:?}",
        connections(&observer).await
    );
}
