//! How many rows one of hookd's tables holds: the check that a request
//! wrote what it should, or that a refused one wrote nothing.

use super::TestApp;

/// The number of rows in `table`.
pub async fn rows(app: &TestApp, table: &str) -> i64 {
    app.count(&format!("SELECT COUNT(*) AS n FROM {table}"))
        .await
}

/// The number of rows in `table` that match `condition` (SQL, as after `WHERE`).
pub async fn rows_where(app: &TestApp, table: &str, condition: &str) -> i64 {
    app.count(&format!(
        "SELECT COUNT(*) AS n FROM {table} WHERE {condition}"
    ))
    .await
}

/// The number of events stored (the outbox), published or not.
pub async fn stored_events(app: &TestApp) -> i64 {
    rows(app, "outbox_event").await
}

/// Asserts that `table` holds `n` rows; `why` says why it should.
pub async fn assert_rows(app: &TestApp, table: &str, n: i64, why: &str) {
    let held = rows(app, table).await;
    assert_eq!(held, n, "{table} holds {held} rows, not {n}: {why}");
}

/// Asserts that `n` events are stored (the outbox); `why` says why.
pub async fn assert_stored_events(app: &TestApp, n: i64, why: &str) {
    assert_rows(app, "outbox_event", n, why).await;
}

/// The text column `x` of every row `queries` answer, a line each: what a
/// failing assertion shows of the store.
pub async fn lines(app: &TestApp, queries: &[&str]) -> String {
    use sea_orm::{ConnectionTrait, Statement};
    let db = app.db();
    let mut lines = Vec::new();
    for q in queries {
        let rows = db
            .query_all_raw(Statement::from_string(db.get_database_backend(), *q))
            .await
            .expect("the store answers");
        lines.extend(
            rows.iter()
                .filter_map(|r| r.try_get::<String>("", "x").ok()),
        );
    }
    lines.join("\n")
}
