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
    let all = receiver
        .wait_for(FIRST + LATER, SLOW)
        .await
        .expect("every delivery arrives");
    // A delivery whose first request failed (on a loaded machine, a
    // connection timeout) is retried on its schedule and may rightly arrive
    // late: only deliveries sent once are judged.
    let retried = retried_events(&app).await;
    let mut arrived: HashMap<String, usize> = HashMap::new();
    for (i, r) in all.iter().enumerate() {
        if let Some(id) = r.header("webhook-id") {
            arrived.entry(id.to_string()).or_insert(i);
        }
    }
    let last_first = first
        .iter()
        .filter(|id| !retried.contains(*id))
        .map(|id| arrived.get(id).copied().expect("each first event arrived"))
        .max()
        .expect("first events");
    let first_later = later
        .iter()
        .filter(|id| !retried.contains(*id))
        .map(|id| arrived.get(id).copied().expect("each later event arrived"))
        .min()
        .expect("later events");
    assert!(
        last_first < first_later,
        "every event published first arrives before any published later \
         (the last of the first came {last_first}th, the first of the later {first_later}th)"
    );
}

/// The events whose delivery took more than one attempt.
async fn retried_events(app: &TestApp) -> std::collections::HashSet<String> {
    use sea_orm::ConnectionTrait as _;
    let rows = app
        .db()
        .query_all_raw(sea_orm::Statement::from_string(
            app.db().get_database_backend(),
            "SELECT event_id AS e FROM delivery WHERE attempt_count > 1",
        ))
        .await
        .expect("the deliveries are read");
    rows.iter()
        .map(|r| r.try_get::<String>("", "e").expect("an event id"))
        .collect()
}
