//! The delivery window counts from the event's creation, not from its
//! fanout: an event that waited in a backlog has that much less of its
//! 72 h, and one already past them is dead without an attempt.

use std::time::Duration;

use hookd::domain::clock::Clock as _;
use serde_json::json;

use super::jitterless_endpoint;
use crate::harness::{
    Backend, TestApp,
    outcome::assert_state_after,
    receiver::{Receiver, Reply},
};
use hookd_test_macros::both_backends;

const HOUR_MS: i64 = 3_600_000;

/// Commits an event straight into the outbox, as the host's own
/// transaction would, written `age` before now (it waited that long in a
/// backlog before hookd fanned it out); returns its id.
async fn backlogged_event(app: &TestApp, age: Duration) -> String {
    use sea_orm::{ConnectionTrait as _, TransactionTrait as _};
    let txn = app.db().begin().await.expect("a transaction");
    let event = hookd::outbox::Event::new(
        "usage.finalized",
        &app.partner_id,
        json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.20", "usage_id": "usage_1"}),
    )
    .schema_version(1);
    let id = hookd::outbox::enqueue(&txn, event)
        .await
        .expect("the outbox row")
        .as_str()
        .to_string();
    let created = app.clock.now_ms() - age.as_millis() as i64;
    let backend = txn.get_database_backend();
    txn.execute_raw(sea_orm::Statement::from_sql_and_values(
        backend,
        match backend {
            sea_orm::DbBackend::Postgres => {
                "UPDATE outbox_event SET created_at = $1 WHERE event_id = $2"
            }
            _ => "UPDATE outbox_event SET created_at = ? WHERE event_id = ?",
        },
        [created.into(), id.clone().into()],
    ))
    .await
    .expect("the event's age");
    txn.commit().await.expect("commit");
    id
}

/// hookd without jitter and a receiver that always answers 500: (app,
/// receiver, endpoint).
async fn failing(backend: Backend) -> (TestApp, Receiver, String) {
    let (app, receiver, endpoint) =
        jitterless_endpoint(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100")]).await;
    receiver.set_default(Reply::status(500));
    (app, receiver, endpoint)
}

#[both_backends]
async fn an_event_fanned_out_71_hours_late_dies_at_72_hours_of_age(backend: Backend) {
    let (app, receiver, endpoint) = failing(backend).await;
    let event = backlogged_event(&app, Duration::from_secs(71 * 3600)).await;
    // 5 s, 5 min and 30 min fit in the hour left; the 2 h retry would not.
    for (made, step) in [(1, 5u64), (2, 300), (3, 1800)] {
        app.attempts_when(&event, &endpoint, made).await;
        app.advance(Duration::from_secs(step));
    }
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "dead",
        4,
        "the 2 h retry would start 73.6 h after the event",
    )
    .await;
    assert_eq!(receiver.count(), 4);
    let attempts = app.attempts(&event, &endpoint).await;
    assert_eq!(
        attempts.last().and_then(|a| a.next_attempt_at),
        None,
        "the last attempt scheduled no retry"
    );
    let delivery = app.delivery_row(&event, &endpoint).await;
    let made_ago = app.clock.now_ms() - delivery.created_at;
    assert!(
        made_ago < HOUR_MS,
        "the delivery itself is {made_ago} ms old: its own age did not end it"
    );
}

#[both_backends]
async fn an_event_older_than_the_window_at_its_fanout_is_dead_unsent(backend: Backend) {
    let (app, receiver, endpoint) = failing(backend).await;
    let event = backlogged_event(&app, Duration::from_secs(73 * 3600)).await;
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "dead",
        0,
        "73 h after the event is past its window",
    )
    .await;
    receiver.stays_at(0).await;
}
