//! A row written with plain SQL cannot be checked at insert: the fanout
//! checks it, and one that fails its schema is `rejected` with the reason,
//! never delivered, listed for the operator and counted.

use hookd::domain::clock::Clock as _;
use sea_orm::ConnectionTrait;
use serde_json::Value;

use super::STRICT;
use crate::harness::{WAIT, receiver::Receiver, spawn_app_with, wait_until};
use hookd_test_macros::both_backends;

async fn insert(app: &crate::harness::TestApp, id: &str, payload: &str) {
    let now = app.clock.now_ms();
    let sql = format!(
        "INSERT INTO outbox_event (event_id, partner_id, type, occurred_at, schema_version, payload, created_at) \
         VALUES ('{id}', '{}', 'balance.updated', {now}, '1', '{payload}', {now})",
        app.partner_id
    );
    app.db()
        .execute_unprepared(&sql)
        .await
        .expect("the row is written with plain SQL");
}

/// A row that fails `balance.updated` (a made-up currency, a float
/// balance) and a valid one after it, written with plain SQL, the valid
/// one delivered and the bad one listed as rejected: (app, receiver,
/// endpoint, the bad row's id, the operator's rejected list).
async fn a_bad_row_and_a_good_one(
    backend: crate::harness::Backend,
) -> (
    crate::harness::TestApp,
    Receiver,
    String,
    &'static str,
    Value,
) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let bad = "evt_01JBBBBBBBBBBBBBBBBBBBBBBB";
    let good = "evt_01JCCCCCCCCCCCCCCCCCCCCCCC";
    insert(
        &app,
        bad,
        r#"{"customer_id":"cus_1","currency":"dollars","balance":10.5}"#,
    )
    .await;
    insert(
        &app,
        good,
        r#"{"customer_id":"cus_1","currency":"USD","balance":"10.50"}"#,
    )
    .await;
    app.wait_for_state(good, &endpoint, "delivered", WAIT).await;
    let operator = app.operator_key().await;
    let listed = wait_until(WAIT, || async {
        let (_, body, _) = app
            .request("GET", "/v1/admin/events?state=rejected", &operator, None)
            .await;
        (body["data"].as_array().is_some_and(|d| !d.is_empty())).then_some(body)
    })
    .await
    .expect("the rejected event is listed");
    (app, receiver, endpoint, bad, listed)
}

#[both_backends]
async fn a_plain_sql_row_that_fails_its_schema_is_never_delivered(backend: Backend) {
    let (app, receiver, endpoint, bad, _) = a_bad_row_and_a_good_one(backend).await;
    assert_eq!(
        app.delivery(bad, &endpoint).await,
        None,
        "no delivery was created"
    );
    assert_eq!(receiver.count(), 1, "only the valid event went out");
}

#[both_backends]
async fn a_rejected_row_is_listed_for_the_operator_with_the_reason(backend: Backend) {
    let (_app, _receiver, _endpoint, bad, listed) = a_bad_row_and_a_good_one(backend).await;
    let row = &listed["data"][0];
    assert_eq!(row["event_id"], bad);
    let reason = row["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("/currency") && reason.contains("/balance"),
        "{reason}"
    );
}

#[both_backends]
async fn a_rejected_row_is_counted(backend: Backend) {
    let (app, _receiver, _endpoint, _, _) = a_bad_row_and_a_good_one(backend).await;
    let operator = app.operator_key().await;
    assert_eq!(
        app.metric(&operator, "hookd_events_rejected_total").await,
        1
    );
}

#[both_backends]
async fn the_event_list_takes_no_state_but_rejected(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let operator = app.operator_key().await;
    let (status, body, _) = app
        .request("GET", "/v1/admin/events?state=published", &operator, None)
        .await;
    assert_eq!(
        (status, body["field"].as_str()),
        (422, Some("state")),
        "{body}"
    );
}
