//! `hookd migrate` on a fresh database: it exits 0, says in one line on
//! stdout how many migrations it applied (and nothing on stderr), leaves
//! every table behind, and a second run changes nothing and says the schema
//! is up to date.

use migration::MigratorTrait as _;
use sea_orm::ConnectionTrait as _;

use crate::harness::{MASTER_KEY, database, process::run_off_runtime};
use hookd_test_macros::both_backends;

/// Every table the migrations create, as the store's queries name them.
const TABLES: &[&str] = &[
    "api_key",
    "attempt",
    "audit",
    "backlog_sample",
    "dashboard_session",
    "delivery",
    "dev_key",
    "endpoint",
    "endpoint_secret",
    "feed_counter",
    "instance",
    "mail",
    "outbox_event",
    "partner",
    "portal_link",
    "receiver_check",
    "receiver_check_slot",
    "replay",
    "threshold_state",
];

/// The database's tables and the migration versions it records as applied.
struct Schema {
    tables: Vec<String>,
    applied: Vec<String>,
}

async fn schema(url: &str) -> Schema {
    let db = sea_orm::Database::connect(url)
        .await
        .expect("the migrated database opens");
    let backend = db.get_database_backend();
    let column = |sql: &str, name: &'static str| {
        let db = &db;
        let statement = sea_orm::Statement::from_string(backend, sql);
        async move {
            let mut values: Vec<String> = db
                .query_all_raw(statement)
                .await
                .expect("the schema query runs")
                .iter()
                .map(|row| row.try_get::<String>("", name).expect("a text column"))
                .collect();
            values.sort();
            values
        }
    };
    let tables = match backend {
        sea_orm::DatabaseBackend::Sqlite => {
            column(
                "SELECT name FROM sqlite_master WHERE type = 'table'",
                "name",
            )
            .await
        }
        _ => {
            column(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
                "tablename",
            )
            .await
        }
    };
    let applied = if tables.iter().any(|t| t == "seaql_migrations") {
        column("SELECT version FROM seaql_migrations", "version").await
    } else {
        Vec::new()
    };
    db.close().await.expect("the checking pool closes");
    Schema { tables, applied }
}

async fn migrate(url: &str) -> std::process::Output {
    let env = vec![
        ("HOOKD_DATABASE__URL".to_string(), url.to_string()),
        (
            "HOOKD_SECRETS__MASTER_KEY".to_string(),
            MASTER_KEY.to_string(),
        ),
    ];
    run_off_runtime(env, vec!["migrate".to_string()]).await
}

#[both_backends]
async fn migrate_builds_the_schema_on_a_fresh_database_and_a_second_run_changes_nothing(
    backend: Backend,
) {
    let (url, _dir) = database(backend).await;
    let mut every_migration: Vec<String> = migration::Migrator::migrations()
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    every_migration.sort();

    let first = migrate(&url).await;
    let said = String::from_utf8_lossy(&first.stdout);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        first.status.success(),
        "the first migrate failed ({}):\n{said}\n{stderr}",
        first.status
    );
    assert_eq!(
        said,
        format!(
            "migrated {url}: {} migrations applied\n",
            every_migration.len()
        ),
        "the first migrate does not say in one line what it did"
    );
    assert_eq!(
        stderr, "",
        "the migrator's step-by-step lines reached stderr at the default log filter"
    );
    let after = schema(&url).await;
    let missing: Vec<_> = TABLES
        .iter()
        .filter(|t| !after.tables.iter().any(|have| have == *t))
        .collect();
    assert!(
        missing.is_empty(),
        "tables missing after migrate: {missing:?} (the database has {:?})",
        after.tables
    );
    assert_eq!(
        after.applied, every_migration,
        "the database does not record exactly the migrations hookd has as applied"
    );

    let second = migrate(&url).await;
    let said = String::from_utf8_lossy(&second.stdout);
    assert!(
        second.status.success(),
        "the second migrate failed ({}):\n{said}\n{}",
        second.status,
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(
        said,
        format!("{url} is up to date\n"),
        "the second migrate does not say that nothing was left to do"
    );
    assert_eq!(
        String::from_utf8_lossy(&second.stderr),
        "",
        "the second migrate wrote to stderr"
    );
    let again = schema(&url).await;
    assert_eq!(
        (again.tables, again.applied),
        (after.tables, after.applied),
        "the second migrate changed the schema"
    );
}
