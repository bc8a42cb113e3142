//! Upgrading a database with events stored before `schema_version` became an
//! integer: migration 9 reads any value that is not a positive integer as 1,
//! and leaves integers alone, so every stored event stays readable.

use migration::{Migrator, MigratorTrait};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, Statement};

use crate::harness::{self, Backend};
use hookd_test_macros::both_backends;

/// A fresh database of `backend` with no migration run yet, and whatever
/// keeps it alive.
async fn unmigrated_database(backend: Backend) -> (DatabaseConnection, Option<tempfile::TempDir>) {
    let (url, dir) = harness::database(backend).await;
    let url = match backend {
        Backend::Sqlite => format!("{url}?mode=rwc"),
        Backend::Postgres => url,
    };
    let db = Database::connect(&url).await.expect("the database opens");
    (db, dir)
}

/// `sql` as a statement for `db`'s backend.
fn statement(db: &DatabaseConnection, sql: &str) -> Statement {
    Statement::from_string(db.get_database_backend(), sql)
}

#[both_backends]
async fn stored_versions_that_are_not_integers_are_read_as_1_after_the_upgrade(backend: Backend) {
    let (db, _dir) = unmigrated_database(backend).await;
    Migrator::up(&db, Some(8)).await.expect("migrations 1 to 8");
    let stored = [
        ("evt_01JDDDDDDDDDDDDDDDDDDDDDD1", "v1"),
        ("evt_01JDDDDDDDDDDDDDDDDDDDDDD2", "2"),
        ("evt_01JDDDDDDDDDDDDDDDDDDDDDD3", "0"),
        ("evt_01JDDDDDDDDDDDDDDDDDDDDDD4", ""),
    ];
    for (id, version) in stored {
        db.execute_unprepared(&format!(
                "INSERT INTO outbox_event (event_id, partner_id, type, occurred_at, schema_version, payload, created_at, published_at) \
                 VALUES ('{id}', 'ptn_1', 'a.b', 1, '{version}', '{{}}', 1, 1)"
            ))
            .await
            .expect("an event stored the old way");
    }
    Migrator::up(&db, None)
        .await
        .expect("the remaining migrations");
    let rows = db
        .query_all_raw(statement(
            &db,
            "SELECT event_id, schema_version FROM outbox_event ORDER BY event_id",
        ))
        .await
        .expect("the events read back");
    let versions: Vec<String> = rows
        .iter()
        .map(|r| {
            r.try_get::<String>("", "schema_version")
                .expect("a version")
        })
        .collect();
    assert_eq!(versions, ["1", "2", "1", "1"]);
    db.close().await.expect("closed");
}

#[both_backends]
async fn the_latest_migrations_go_down_and_up_again(backend: Backend) {
    let (db, _dir) = unmigrated_database(backend).await;
    Migrator::up(&db, None).await.expect("every migration");
    // Every migration from the tenth (the endpoint's kind) on.
    let from_tenth = u32::try_from(Migrator::migrations().len() - 9).unwrap();
    Migrator::down(&db, Some(from_tenth))
        .await
        .expect("the migrations from the tenth on undone");
    let traced = db
        .query_one_raw(statement(
            &db,
            "SELECT COUNT(*) AS n FROM outbox_event WHERE traceparent IS NULL",
        ))
        .await;
    assert!(
        traced.is_err(),
        "the trace context columns are gone after down"
    );
    let gone = db
        .query_one_raw(statement(
            &db,
            "SELECT COUNT(*) AS n FROM endpoint WHERE kind = 'endpoint'",
        ))
        .await;
    assert!(gone.is_err(), "the kind column is gone after down");
    Migrator::up(&db, None)
        .await
        .expect("the migrations from the tenth on, again");
    db.close().await.expect("closed");
}
