//! SQLite's writer connection (`store::writer`): held across turns, its
//! transactions take the write lock when they begin, and its errors read
//! as those of the pool's connections.

use std::time::Duration;

use hookd::store::writer::Held;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};

/// A migrated SQLite database in `dir`, its pool, and its URL.
async fn sqlite_in(dir: &tempfile::TempDir) -> (DatabaseConnection, String) {
    let url = format!("sqlite://{}/hookd.db", dir.path().display());
    let config = hookd::config::Config::load(None, crate::harness::test_env(&url, &[]))
        .expect("a valid configuration");
    let db = hookd::store::connect(&config.database)
        .await
        .expect("the pool opens");
    hookd::store::migrate(&db).await.expect("migrated");
    (db, url)
}

fn held(db: &DatabaseConnection) -> Held {
    Held::new(db.get_sqlite_connection_pool().clone())
}

/// Whether another connection could take SQLite's write lock at once.
async fn another_writer_gets_in(url: &str) -> bool {
    use sea_orm::sqlx::{ConnectOptions as _, Connection as _, Executor as _};
    let options: sea_orm::sqlx::sqlite::SqliteConnectOptions = url.parse().expect("a URL");
    let mut other = options
        .busy_timeout(Duration::ZERO)
        .connect()
        .await
        .expect("a second connection");
    let got_in = other.execute("BEGIN IMMEDIATE").await.is_ok();
    if got_in {
        other.execute("ROLLBACK").await.expect("rolled back");
    }
    other.close().await.expect("closed");
    got_in
}

#[hookd_test_macros::test]
async fn a_writer_transaction_holds_the_write_lock_from_its_begin() {
    let dir = tempfile::tempdir().expect("a folder");
    let (db, url) = sqlite_in(&dir).await;
    let mut writer = held(&db);

    let txn = writer.begin().await.expect("begins");
    assert!(
        !another_writer_gets_in(&url).await,
        "a transaction that has only begun already holds the write lock: no read in it can be overtaken"
    );
    txn.commit().await.expect("commits");
    assert!(
        another_writer_gets_in(&url).await,
        "the lock is free again once it committed"
    );
    writer.release();
    db.close().await.expect("the pool closes");
}

#[hookd_test_macros::test]
async fn the_writer_keeps_its_connection_from_one_turn_to_the_next() {
    let dir = tempfile::tempdir().expect("a folder");
    let (db, _) = sqlite_in(&dir).await;
    let mut writer = held(&db);

    // A temporary table lives and dies with its connection.
    let txn = writer.begin().await.expect("begins");
    txn.execute_unprepared("CREATE TEMP TABLE mine (x INTEGER)")
        .await
        .expect("a table of this connection");
    txn.commit().await.expect("commits");
    for turn in 0..4 {
        let txn = writer.begin().await.expect("begins");
        let seen = txn
            .query_one_raw(Statement::from_string(
                DbBackend::Sqlite,
                "SELECT COUNT(*) AS n FROM temp.sqlite_master WHERE name = 'mine'",
            ))
            .await
            .expect("reads")
            .expect("a row")
            .try_get::<i64>("", "n")
            .expect("a count");
        assert_eq!(seen, 1, "turn {turn} ran on another connection");
        txn.commit().await.expect("commits");
    }
    writer.release();
    db.close().await.expect("the pool closes");
}

#[hookd_test_macros::test]
async fn a_repeated_id_written_by_the_writer_is_a_unique_violation() {
    let dir = tempfile::tempdir().expect("a folder");
    let (db, _) = sqlite_in(&dir).await;
    let mut writer = held(&db);

    let txn = writer.begin().await.expect("begins");
    hookd::store::partners::create(&txn, Some("ptn_twice".into()), "First", 0)
        .await
        .expect("the first insert");
    let repeated = hookd::store::partners::create(&txn, Some("ptn_twice".into()), "Again", 0)
        .await
        .expect_err("the same id twice");
    let hookd::store::StoreError::Db(e) = repeated else {
        panic!("a database error, got {repeated:?}");
    };
    assert!(
        hookd::store::is_unique_violation(&e),
        "the group commit answers a repeated event id by this test: {e}"
    );
    drop(txn);
    writer.release();
    db.close().await.expect("the pool closes");
}

#[hookd_test_macros::test]
async fn a_writer_transaction_dropped_uncommitted_leaves_nothing_and_the_next_one_begins() {
    let dir = tempfile::tempdir().expect("a folder");
    let (db, url) = sqlite_in(&dir).await;
    let mut writer = held(&db);

    let txn = writer.begin().await.expect("begins");
    hookd::store::partners::create(&txn, Some("ptn_dropped".into()), "Dropped", 0)
        .await
        .expect("inserted");
    drop(txn);

    let txn = writer.begin().await.expect("the next turn begins");
    hookd::store::partners::create(&txn, Some("ptn_kept".into()), "Kept", 0)
        .await
        .expect("inserted");
    txn.commit().await.expect("commits");
    assert!(
        another_writer_gets_in(&url).await,
        "nothing is left holding the lock"
    );
    let ids: Vec<String> = hookd::store::partners::list(&db, None, 10)
        .await
        .expect("the partners read")
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, vec!["ptn_kept".to_string()]);
    writer.release();
    db.close().await.expect("the pool closes");
}

#[test]
fn a_writer_dropped_where_no_runtime_is_left_does_not_panic() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = tempfile::tempdir().expect("a folder");
    let (db, writer) = runtime.block_on(async {
        let (db, _) = sqlite_in(&dir).await;
        let mut writer = held(&db);
        let txn = writer.begin().await.expect("begins");
        txn.commit().await.expect("commits");
        (db, writer)
    });
    // Outside the runtime, as when a host's runtime shuts down under the
    // engine: sqlx could not spawn the connection's return to the pool.
    drop(writer);
    runtime.block_on(async move { drop(db) });
}
