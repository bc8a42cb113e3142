//! Ingest: `POST /v1/events` takes one event or a batch, is idempotent on
//! `event_id`, and writes nothing unless every event is valid.

use serde_json::json;

use crate::harness::{
    TestApp,
    rows::{assert_stored_events, rows_where, stored_events},
    spawn_app,
};
use hookd_test_macros::both_backends;

const ID: &str = "evt_01JAAAAAAAAAAAAAAAAAAAAAAA";

#[both_backends]
async fn a_valid_event_is_stored_and_answered_with_its_envelope(app: TestApp) {
    let (status, body) = app
            .post_events(
                &json!({"type": "usage.finalized", "schema_version": 1, "partner_id": app.partner_id, "event_id": ID,
            "subject": {"type": "usage_record", "id": "usage_9182", "version": 7},
            "occurred_at": "2026-10-15T14:22:31Z", "correlation_id": "op_7fd",
            "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800"}}),
            )
            .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["event_id"], ID);
    assert_eq!(body["occurred_at"], "2026-10-15T14:22:31Z");
    assert_eq!(body["subject"]["version"], 7);
    assert_eq!(
        body["data"]["final_cost"], "1.274800",
        "money stays a decimal string"
    );
    assert_eq!(stored_events(&app).await, 1);
}

#[both_backends]
async fn an_event_without_an_id_gets_a_ulid_event_id(app: TestApp) {
    let id = app
        .publish(
            "balance.updated",
            json!({"customer_id": "cus_204", "balance": "10.00", "currency": "USD"}),
        )
        .await;
    assert!(
        id.starts_with("evt_") && id.len() == 30,
        "{id} should be evt_ + ULID"
    );
}

#[both_backends]
async fn the_same_event_twice_is_accepted_once(app: TestApp) {
    let event =
        json!({"type": "a.b", "partner_id": app.partner_id, "event_id": ID, "data": {"x": 1}});
    let (first, _) = app.post_events(&event).await;
    let (second, body) = app.post_events(&event).await;
    assert_eq!(
        (first, second),
        (201, 200),
        "the repeat answers 200 with the stored event"
    );
    assert_eq!(body["event_id"], ID);
    assert_eq!(stored_events(&app).await, 1, "stored once");
}

#[both_backends]
async fn the_same_id_with_different_content_is_a_conflict(app: TestApp) {
    let (s, _) = app
        .post_events(
            &json!({"type": "a.b", "partner_id": app.partner_id, "event_id": ID, "data": {"x": 1}}),
        )
        .await;
    assert_eq!(s, 201);
    let (status, body) = app
        .post_events(
            &json!({"type": "a.b", "partner_id": app.partner_id, "event_id": ID, "data": {"x": 2}}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["type"], "https://hookd.dev/problems/conflict");
    assert_eq!(body["event_id"], ID);
}

#[both_backends]
async fn a_batch_is_all_or_nothing(app: TestApp) {
    let good = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
    let bad = json!({"type": "a.b", "partner_id": app.partner_id, "data": "not an object"});
    let (status, body) = app.post_events(&json!([good, good, bad])).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["field"], "events[2].data",
        "the problem names the offending field: {body}"
    );
    assert_stored_events(&app, 0, "nothing of a refused batch is written").await;

    let (status, body) = app.post_events(&json!([good, good])).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["data"].as_array().map(Vec::len), Some(2));
}

#[both_backends]
async fn bad_input_gets_a_problem_that_says_what_is_wrong(app: TestApp) {
    let p = &app.partner_id;
    let big = "x".repeat(300 * 1024);
    let cases: Vec<(String, u16, &str, Option<&str>)> = vec![
        ("{not json".into(), 400, "malformed-json", None),
        ("42".into(), 422, "invalid-type", None),
        (
            json!({"partner_id": p, "data": {}}).to_string(),
            422,
            "validation",
            Some("type"),
        ),
        (
            json!({"type": "a.b", "data": {}}).to_string(),
            422,
            "validation",
            Some("partner_id"),
        ),
        (
            json!({"type": "a.b", "partner_id": p}).to_string(),
            422,
            "validation",
            Some("data"),
        ),
        (
            json!({"type": "a.b", "partner_id": "ptn_nobody", "data": {}}).to_string(),
            422,
            "validation",
            Some("partner_id"),
        ),
        (
            json!({"type": "a.b", "partner_id": p, "data": {}, "colour": "red"}).to_string(),
            422,
            "unknown-field",
            Some("colour"),
        ),
        (
            json!({"type": "a.b", "partner_id": p, "data": {}, "event_id": "42"}).to_string(),
            422,
            "validation",
            Some("event_id"),
        ),
        (
            json!({"type": "a.b", "partner_id": p, "data": {"blob": big}}).to_string(),
            413,
            "payload-too-large",
            Some("data"),
        ),
        ("[]".into(), 422, "validation", Some("events")),
    ];
    for (body, status, kind, field) in cases {
        let (got, problem, content_type) =
            app.post_events_with(Some(&app.service_key), &body).await;
        let shown = &body[..body.len().min(80)];
        assert_eq!(got, status, "{shown} → {problem}");
        assert_eq!(content_type, "application/problem+json", "{shown}");
        assert_eq!(
            problem["type"],
            format!("https://hookd.dev/problems/{kind}"),
            "{shown} → {problem}"
        );
        assert!(
            problem["detail"].as_str().is_some_and(|d| !d.is_empty()),
            "{shown}: a detail says what is wrong"
        );
        if let Some(field) = field {
            assert_eq!(problem["field"], field, "{shown} → {problem}");
        }
    }
    assert_eq!(stored_events(&app).await, 0, "no bad input is written");
}

#[both_backends]
async fn a_batch_over_the_limit_is_refused(app: TestApp) {
    let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
    let (status, body) = app
        .post_events(&serde_json::Value::Array(vec![event.clone(); 501]))
        .await;
    assert_eq!(status, 413, "{body}");
    let (status, body) = app
        .post_events(&serde_json::Value::Array(vec![event; 500]))
        .await;
    assert_eq!(status, 201, "a batch of 500 is accepted: {body}");
    assert_eq!(stored_events(&app).await, 500);
}

#[both_backends]
async fn missing_unknown_and_revoked_keys_are_401_and_other_roles_403(backend: Backend) {
    use hookd::store::keys::{self, Role};
    let app = spawn_app(backend).await;
    let body = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}}).to_string();
    let (status, problem, _) = app.post_events_with(None, &body).await;
    assert_eq!(status, 401, "{problem}");
    let (status, _, _) = app
        .post_events_with(Some("hks_not-a-real-key-at-all"), &body)
        .await;
    assert_eq!(status, 401, "an unknown key");

    let revoked = keys::create(app.db(), Role::Service, None, 0)
        .await
        .expect("a key");
    let (status, _, _) = app.post_events_with(Some(&revoked.key), &body).await;
    assert_eq!(status, 201, "the key works before revocation");
    let operator = app.operator_key().await;
    let path = format!("/v1/admin/keys/{}", revoked.id);
    let (status, answer, _) = app.request("DELETE", &path, &operator, None).await;
    assert_eq!(status, 204, "the operator revokes the key: {answer}");
    let (status, _, _) = app.post_events_with(Some(&revoked.key), &body).await;
    assert_eq!(status, 401, "a revoked key stops working at once");

    let partner_key = keys::create(app.db(), Role::Partner, Some(&app.partner_id), 0)
        .await
        .expect("a key");
    let (status, _, _) = app.post_events_with(Some(&partner_key.key), &body).await;
    assert_eq!(status, 403, "a partner key cannot produce events");
}

/// Opens a transaction and enqueues in it, with the library call a host
/// makes, a `balance.updated` of `balance` for the test partner; returns the
/// open transaction and the event's id.
async fn enqueued_in_a_transaction(
    app: &TestApp,
    balance: &str,
) -> (sea_orm::DatabaseTransaction, String) {
    use sea_orm::TransactionTrait;
    let txn = app.db().begin().await.expect("a transaction");
    let id = hookd::outbox::enqueue(
        &txn,
        hookd::outbox::Event::new(
            "balance.updated",
            &app.partner_id,
            json!({"customer_id": "cus_204", "currency": "USD", "balance": balance}),
        ),
    )
    .await
    .expect("enqueued");
    (txn, id.to_string())
}

#[both_backends]
async fn an_outbox_row_written_in_a_rolled_back_transaction_never_exists(app: TestApp) {
    let (txn, _) = enqueued_in_a_transaction(&app, "1.00").await;
    txn.rollback().await.expect("rolled back");
    assert_eq!(stored_events(&app).await, 0);

    let (txn, id) = enqueued_in_a_transaction(&app, "2.00").await;
    txn.commit().await.expect("committed");
    let stored = rows_where(&app, "outbox_event", &format!("event_id = '{id}'")).await;
    assert_eq!(stored, 1, "the committed event is stored");
}
