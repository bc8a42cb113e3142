//! Store guarantees that handlers rely on.

use hookd_test_macros::both_backends;
use sea_orm::{EntityTrait, PaginatorTrait};

use crate::harness::{Backend, spawn_app};

#[both_backends]
async fn a_snapshot_keeps_seeing_the_rows_of_its_first_read_while_others_commit(app: TestApp) {
    let partners = hookd::store::entity::partner::Entity::find;
    let snapshot = hookd::store::snapshot(app.db()).await.expect("begin");
    let before = partners().count(&snapshot).await.expect("first read");

    hookd::store::partners::create(app.db(), None, "Committed meanwhile", 0)
        .await
        .expect("a partner committed outside the snapshot");

    let inside = partners().count(&snapshot).await.expect("second read");
    assert_eq!(
        inside, before,
        "a read in the snapshot saw a row committed after its first read"
    );
    snapshot.commit().await.expect("end the snapshot");
    let after = partners().count(app.db()).await.expect("fresh read");
    assert_eq!(
        after,
        before + 1,
        "the committed partner is visible outside"
    );
}

/// One event delivered to a fresh endpoint: the endpoint, and the stored
/// attempt that delivered it.
async fn delivered_once(
    app: &crate::harness::TestApp,
) -> (String, hookd::store::entity::attempt::Model) {
    let receiver = crate::harness::receiver::Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app
        .publish(
            "balance.updated",
            serde_json::json!({"customer_id": "cus_204", "currency": "USD", "balance": "1.00"}),
        )
        .await;
    app.wait_for_state(
        &event,
        &endpoint,
        "delivered",
        std::time::Duration::from_secs(10),
    )
    .await;
    let stored = hookd::store::entity::attempt::Entity::find()
        .one(app.db())
        .await
        .expect("the attempts read")
        .expect("one attempt");
    (endpoint, stored)
}

/// A successful scheduled attempt `id` of `stored`'s delivery, made under
/// claim `claim_seq`.
fn success(
    stored: &hookd::store::entity::attempt::Model,
    endpoint: &str,
    id: String,
    claim_seq: i64,
) -> hookd::store::deliveries::AttemptRecord {
    use hookd::store::deliveries::{AttemptRecord, NextState, Trigger};
    AttemptRecord {
        id,
        delivery_id: stored.delivery_id.clone(),
        endpoint_id: endpoint.to_string(),
        attempt_no: 1,
        trigger: Trigger::Scheduled,
        started_at: stored.started_at,
        latency_ms: 5,
        status_code: Some(200),
        error: None,
        excerpt: None,
        remote_addr: None,
        url: None,
        location: None,
        next: NextState::Delivered,
        ordered: false,
        replay_id: None,
        claim_seq,
    }
}

/// Text that a batch written as one JSON parameter (SQLite) must carry
/// through unchanged: quotes, backslashes, brackets, escapes spelled out,
/// line separators, non-ASCII, and JSON's own words as plain text.
const AWKWARD: &str =
    "a \"quoted\" \\path\\ ], [\"x\"] \\u0041 \u{2028}\u{2029} café 🚀 null true 1e3 '; --";

#[both_backends]
async fn an_attempt_is_stored_exactly_as_recorded_whatever_its_text_holds(backend: Backend) {
    use hookd::domain::outcome::ErrorCategory;
    use hookd::store::deliveries::{AttemptRecord, NextState, record};
    let app = spawn_app(backend).await;
    let (endpoint, stored) = delivered_once(&app).await;
    let far = 253_402_300_799_999_i64;
    let written = AttemptRecord {
        attempt_no: 2_000_000_000,
        started_at: far - 1,
        latency_ms: u32::MAX / 2,
        status_code: Some(599),
        error: Some((ErrorCategory::HttpStatus, format!("detail {AWKWARD}"))),
        excerpt: Some(format!("excerpt {AWKWARD}")),
        remote_addr: Some("[::1]:8443".into()),
        url: Some(format!("https://example.com/{AWKWARD}")),
        location: Some(format!("/moved/{AWKWARD}")),
        next: NextState::RetryAt(far),
        ..success(&stored, &endpoint, hookd::domain::ids::new_id("att"), 1)
    };
    record(app.db(), std::slice::from_ref(&written), 0, false, &|_| {
        None
    })
    .await
    .expect("the record is written");
    let read = hookd::store::entity::attempt::Entity::find_by_id(written.id.clone())
        .one(app.db())
        .await
        .expect("the attempt reads")
        .expect("the attempt was stored");
    assert_eq!(read.delivery_id, written.delivery_id);
    assert_eq!(read.attempt_no, 2_000_000_000);
    assert_eq!(read.trigger, "scheduled");
    assert_eq!(read.started_at, far - 1);
    assert_eq!(read.latency_ms, Some((u32::MAX / 2) as i32));
    assert_eq!(read.status_code, Some(599));
    assert_eq!(read.error_category.as_deref(), Some("http_status"));
    assert_eq!(read.error_detail, Some(format!("detail {AWKWARD}")));
    assert_eq!(read.response_excerpt, written.excerpt);
    assert_eq!(read.remote_addr.as_deref(), Some("[::1]:8443"));
    assert_eq!(read.url, written.url);
    assert_eq!(read.location, written.location);
    assert_eq!(read.next_attempt_at, Some(far));
    let due = "SELECT next_attempt_at AS n FROM delivery WHERE state = 'failed'";
    assert_eq!(app.count(due).await, far, "the delivery's next attempt");
}

#[both_backends]
async fn each_attempt_record_is_stored_and_counted_exactly_once(backend: Backend) {
    use hookd::store::deliveries::{AttemptRecord, record};
    let app = spawn_app(backend).await;
    let (endpoint, stored) = delivered_once(&app).await;
    // The delivery was claimed once, by the attempt that delivered it.
    let again = |id: String| success(&stored, &endpoint, id, 1);
    // The commit whose answer was lost, written again by the recorder.
    record(app.db(), &[again(stored.id.clone())], 0, true, &|_| None)
        .await
        .expect("the same record again");
    let attempts = "SELECT COUNT(*) AS n FROM attempt";
    let counted = "SELECT COALESCE(SUM(attempt_count), 0) AS n FROM delivery";
    assert_eq!(app.count(attempts).await, 1, "the attempt was stored twice");
    assert_eq!(app.count(counted).await, 1, "the attempt was counted twice");
    // Another attempt (another id) is stored: the check can see one.
    record(
        app.db(),
        &[again(hookd::domain::ids::new_id("att"))],
        0,
        true,
        &|_| None,
    )
    .await
    .expect("a new record");
    assert_eq!(app.count(attempts).await, 2);
    assert_eq!(app.count(counted).await, 2);
    // Two attempts of one delivery in one batch are both counted.
    let pair = [
        again(hookd::domain::ids::new_id("att")),
        again(hookd::domain::ids::new_id("att")),
    ];
    record(app.db(), &pair, 0, false, &|_| None)
        .await
        .expect("two records of one delivery");
    assert_eq!(app.count(attempts).await, 4);
    assert_eq!(
        app.count(counted).await,
        4,
        "one of the pair was not counted"
    );
    // A late record from a claim that was superseded (another claim
    // numbered the row since) is left out: a stale owner never wins.
    let stale = AttemptRecord {
        claim_seq: 0,
        ..again(hookd::domain::ids::new_id("att"))
    };
    let recorded = record(app.db(), &[stale], 0, false, &|_| None)
        .await
        .expect("the stale record is refused without an error");
    assert_eq!(recorded.superseded, 1);
    assert_eq!(app.count(attempts).await, 4, "the stale record was stored");
    assert_eq!(app.count(counted).await, 4, "the stale record was counted");
    // A record whose delivery was deleted meanwhile (its endpoint removed)
    // is dropped, not an error that fails the batch beside it.
    let orphan = AttemptRecord {
        delivery_id: "dlv_deleted_meanwhile".into(),
        ..again(hookd::domain::ids::new_id("att"))
    };
    let beside = again(hookd::domain::ids::new_id("att"));
    let recorded = record(app.db(), &[orphan, beside], 0, false, &|_| None)
        .await
        .expect("the orphan record is dropped without an error");
    assert_eq!(recorded.superseded, 1);
    assert_eq!(
        app.count(attempts).await,
        5,
        "only the record beside it is stored"
    );
}

#[hookd_test_macros::test]
async fn on_postgresql_successes_at_an_endpoint_marked_failing_are_left_to_the_transaction_that_mends_its_health()
 {
    use hookd::store::deliveries::record_alone;
    use sea_orm::ConnectionTrait;
    if crate::harness::skip_postgres() {
        return;
    }
    let app = spawn_app(Backend::Postgres).await;
    let (endpoint, stored) = delivered_once(&app).await;
    // Claimed again (a replay's worth of work), far from any poll's reach.
    let claim = format!(
        "UPDATE delivery SET claim_seq = 2, state = 'delivering', next_attempt_at = 9000000000000 \
         WHERE id = '{}'",
        stored.delivery_id
    );
    app.db().execute_unprepared(&claim).await.expect("claimed");
    let mark = |failing: &str| {
        format!("UPDATE endpoint SET failing_since = {failing} WHERE id = '{endpoint}'")
    };
    app.db()
        .execute_unprepared(&mark("1"))
        .await
        .expect("marked failing");
    let attempts = "SELECT COUNT(*) AS n FROM attempt";
    let batch = [success(
        &stored,
        &endpoint,
        hookd::domain::ids::new_id("att"),
        2,
    )];
    let written = record_alone(app.db(), &batch, 0)
        .await
        .expect("the statement runs");
    assert!(
        written.is_none(),
        "a success at an endpoint marked failing went around the health it must clear"
    );
    assert_eq!(app.count(attempts).await, 1, "something was written");
    app.db()
        .execute_unprepared(&mark("NULL"))
        .await
        .expect("healthy again");
    let written = record_alone(app.db(), &batch, 0)
        .await
        .expect("the statement runs")
        .expect("a healthy endpoint's successes are written by the statement");
    assert_eq!(written.superseded, 0);
    assert_eq!(app.count(attempts).await, 2);
    drop(app);
    crate::harness::quiesce().await;
}

/// The text in `column` of the one row that `sql` gives on `conn`.
async fn text_of(conn: &impl sea_orm::ConnectionTrait, sql: &str, column: &str) -> String {
    let statement = sea_orm::Statement::from_string(conn.get_database_backend(), sql);
    let row = conn
        .query_one_raw(statement)
        .await
        .unwrap_or_else(|e| panic!("`{sql}` runs: {e}"))
        .unwrap_or_else(|| panic!("`{sql}` gives a row"));
    row.try_get("", column)
        .unwrap_or_else(|e| panic!("`{sql}` gives a text `{column}`: {e}"))
}

#[hookd_test_macros::test]
async fn every_postgresql_session_asks_the_server_to_end_a_transaction_left_idle_for_ten_seconds() {
    use sea_orm::TransactionTrait;
    if crate::harness::skip_postgres() {
        return;
    }
    let app = spawn_app(Backend::Postgres).await;
    let db = app.db();
    let show = "SHOW idle_in_transaction_session_timeout";
    let value = text_of(db, show, "idle_in_transaction_session_timeout").await;
    assert_eq!(
        value, "10s",
        "every hookd session asks PostgreSQL to end a transaction left idle for 10 s, \
         so a paused instance cannot hold the feed counter that every publisher needs"
    );
    // And it is every session's, not only the first one's.
    let txn = db.begin().await.expect("a transaction");
    let current = "SELECT current_setting('idle_in_transaction_session_timeout') AS v";
    assert_eq!(
        text_of(&txn, current, "v").await,
        "10s",
        "inside a transaction"
    );
    txn.rollback().await.expect("rollback");
    drop(app);
    crate::harness::quiesce().await;
}

/// `PRAGMA synchronous` on `pool` connections of a pool opened with
/// `setting`, each read while all of them are held.
async fn synchronous_on_every_connection(setting: &str, pool: u32) -> Vec<i64> {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let dir = tempfile::tempdir().expect("a folder");
    let url = format!("sqlite://{}/hookd.db", dir.path().display());
    let pool_size = pool.to_string();
    let config = hookd::config::Config::load(
        None,
        crate::harness::test_env(
            &url,
            &[
                ("HOOKD_DATABASE__SQLITE_SYNCHRONOUS", setting),
                ("HOOKD_DATABASE__MAX_CONNECTIONS", &pool_size),
            ],
        ),
    )
    .expect("a valid configuration");
    let db = hookd::store::connect(&config.database)
        .await
        .expect("the pool opens");
    let mut held = Vec::new();
    for _ in 0..pool {
        held.push(db.begin().await.expect("a connection of the pool"));
    }
    let mut values = Vec::new();
    for txn in &held {
        let row = txn
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Sqlite,
                "PRAGMA synchronous",
            ))
            .await
            .expect("the pragma reads")
            .expect("a row");
        values.push(row.try_get_by_index::<i64>(0).expect("a number"));
    }
    drop(held);
    db.close().await.expect("the pool closes");
    values
}

#[hookd_test_macros::test]
async fn every_pooled_sqlite_connection_syncs_as_configured() {
    assert_eq!(
        synchronous_on_every_connection("full", 4).await,
        vec![2; 4],
        "FULL (2) on each connection: every commit reaches the disk before hookd answers"
    );
    assert_eq!(
        synchronous_on_every_connection("normal", 4).await,
        vec![1; 4],
        "NORMAL (1) when configured"
    );
}

/// The recorder's every-day statement (`hookd_record_attempts`) keeps its
/// plan for the session, and that plan must find the batch's rows by
/// primary key even when it was made on an empty table: a plan that scans
/// the table would scan it on every record as it grows.
#[hookd_test_macros::test]
async fn on_postgresql_the_recorders_kept_plan_never_scans_the_delivery_table() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    if crate::harness::skip_postgres() {
        return;
    }
    let app = spawn_app(Backend::Postgres).await;
    let txn = app.db().begin().await.expect("a transaction");
    let batch = serde_json::json!([
        {"id": "att_1", "delivery_id": "dlv_1", "endpoint_id": "ep_1", "claim_seq": 1,
         "attempt_no": 1, "trigger": "scheduled", "started_at": 1, "latency_ms": 1,
         "status_code": 200, "state": "delivered", "next_at": 1},
        {"id": "att_2", "delivery_id": "dlv_2", "endpoint_id": "ep_1", "claim_seq": 1,
         "attempt_no": 1, "trigger": "scheduled", "started_at": 1, "latency_ms": 1,
         "status_code": 200, "state": "delivered", "next_at": 1}
    ]);
    let before = delivery_scans(&txn).await;
    // Past the five calls after which PostgreSQL keeps a generic plan.
    for _ in 0..8 {
        txn.execute_unprepared(&format!(
            "SELECT r FROM hookd_record_attempts('{batch}'::json, true, 1) AS r"
        ))
        .await
        .expect("the function runs");
    }
    let after = delivery_scans(&txn).await;
    assert_eq!(after.0, before.0, "the empty delivery table was scanned");
    assert!(
        after.1 - before.1 >= 8,
        "each call looked its rows up by key: {before:?} then {after:?}"
    );
    txn.rollback().await.expect("rollback");
    drop(app);
    crate::harness::quiesce().await;
}

/// This session's (sequential, index) scans of `delivery` not yet reported:
/// within one transaction they only grow.
async fn delivery_scans(db: &impl sea_orm::ConnectionTrait) -> (i64, i64) {
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Postgres,
            "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'delivery'",
        ))
        .await
        .expect("the statistics are read")
        .expect("the delivery table has a row");
    let count = |c: &str| row.try_get::<i64>("", c).expect(c);
    (count("seq_scan"), count("idx_scan"))
}
