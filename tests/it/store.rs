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

#[both_backends]
async fn each_attempt_record_is_stored_and_counted_exactly_once(backend: Backend) {
    use hookd::store::deliveries::{AttemptRecord, NextState, Trigger, record};
    let app = spawn_app(backend).await;
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
    let again = |id: String| AttemptRecord {
        id,
        delivery_id: stored.delivery_id.clone(),
        endpoint_id: endpoint.clone(),
        attempt_no: 1,
        trigger: Trigger::Scheduled,
        started_at: stored.started_at,
        latency_ms: 5,
        status_code: Some(200),
        error: None,
        excerpt: None,
        remote_addr: None,
        next: NextState::Delivered,
        replay_id: None,
        // The delivery was claimed once, by the attempt that delivered it.
        claim_seq: 1,
    };
    // The commit whose answer was lost, written again by the recorder.
    record(app.db(), &[again(stored.id.clone())], 0, true)
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
    record(app.db(), &pair, 0, false)
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
    let superseded = record(app.db(), &[stale], 0, false)
        .await
        .expect("the stale record is refused without an error");
    assert_eq!(superseded, 1);
    assert_eq!(app.count(attempts).await, 4, "the stale record was stored");
    assert_eq!(app.count(counted).await, 4, "the stale record was counted");
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

#[actix_rt::test]
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
