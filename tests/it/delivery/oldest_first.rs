//! Oldest first within an endpoint: deliveries that were handed back to the
//! database behind a slow receiver are sent before deliveries of events
//! published after them, even when those arrive by the fast path and the
//! actor's queue has room for them.

use std::{collections::HashMap, time::Duration};

use serde_json::json;

use crate::harness::{
    SLOW, TestApp, WAIT,
    receiver::{Receiver, Reply},
    wait_until,
};
use hookd_test_macros::both_backends;

/// Events published while the receiver holds the first request: more than
/// one actor keeps in memory (32), so the youngest are handed back as rows.
const FIRST: usize = 40;
/// Events published once the queue has drained a little.
const LATER: usize = 10;

/// Publishes `n` events one per request (the fast path); their ids in order.
async fn publish_one_by_one(app: &TestApp, n: usize, from: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for i in from..from + n {
        ids.push(app.publish("a.b", json!({ "i": i })).await);
    }
    ids
}

#[both_backends]
async fn deliveries_handed_back_behind_a_slow_receiver_go_before_younger_ones(app: TestApp) {
    let receiver = Receiver::start().await;
    // The first request is held while the first events are published; then
    // the receiver answers each in 50 ms: slower than the events came.
    receiver.script([Reply::Delay(
        Duration::from_secs(3),
        Box::new(Reply::status(200)),
    )]);
    receiver.set_default(Reply::Delay(
        Duration::from_millis(50),
        Box::new(Reply::status(200)),
    ));
    app.endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
        .await;
    let first = publish_one_by_one(&app, FIRST, 0).await;
    let handed_back = wait_until(WAIT, || async {
        let n = app
            .count("SELECT COUNT(*) AS n FROM delivery WHERE state = 'pending'")
            .await;
        (n > 0).then_some(n)
    })
    .await;
    assert!(
        handed_back.is_some(),
        "the test needs deliveries handed back as rows while the first request was held"
    );
    // The queue drains below what it may hold: younger events now fit in it.
    receiver
        .wait_for(12, SLOW)
        .await
        .expect("the receiver takes the first deliveries");
    let later = publish_one_by_one(&app, LATER, FIRST).await;
    receiver
        .wait_for(FIRST + LATER, SLOW)
        .await
        .expect("every delivery arrives");
    // The order attempts started in, by the attempt records: a request that
    // failed on a loaded machine (a connection timeout) is retried on its
    // schedule and may arrive late, but it started in its turn.
    let started = wait_until(SLOW, || async {
        let started = first_attempts(&app).await;
        (started.len() >= FIRST + LATER).then_some(started)
    })
    .await
    .expect("every attempt is recorded");
    let at = |id: &String| *started.get(id).expect("each event had an attempt");
    let last_first = first.iter().map(at).max().expect("first events");
    let first_later = later.iter().map(at).min().expect("later events");
    assert!(
        last_first <= first_later,
        "every event published first is first attempted before any published later \
         (the last of the first at {last_first} ms, the first of the later at {first_later} ms)"
    );
}

/// When each event's first attempt started (ms), by event id.
async fn first_attempts(app: &TestApp) -> HashMap<String, i64> {
    use sea_orm::ConnectionTrait as _;
    let rows = app
        .db()
        .query_all_raw(sea_orm::Statement::from_string(
            app.db().get_database_backend(),
            "SELECT d.event_id AS e, MIN(a.started_at) AS s FROM attempt a \
             JOIN delivery d ON d.id = a.delivery_id GROUP BY d.event_id",
        ))
        .await
        .expect("the attempts are read");
    rows.iter()
        .map(|r| {
            let id: String = r.try_get("", "e").expect("an event id");
            let at: i64 = r.try_get("", "s").expect("a start");
            (id, at)
        })
        .collect()
}
