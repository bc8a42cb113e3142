//! Oldest first within an endpoint: deliveries that were handed back to the
//! database behind a slow receiver are sent before deliveries of events
//! published after them, even when those arrive by the fast path and the
//! actor's queue has room for them.

use std::{collections::HashMap, time::Duration};

use serde_json::json;

use crate::harness::{
    SLOW, TestApp, WAIT,
    receiver::{Receiver, Reply},
    until_none, wait_until,
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
    // Every delivery is attempted once. One whose first attempt failed (the
    // held first request times out; on a loaded machine a connection may
    // too) waits for a retry the test's clock never reaches: only
    // deliveries that arrived on their first attempt are judged.
    let unattempted = "SELECT COUNT(*) AS n FROM delivery WHERE attempt_count = 0";
    let attempted = until_none(&app, unattempted, SLOW).await;
    assert!(
        attempted,
        "every delivery is attempted once:\n{}",
        deliveries(&app).await
    );
    let once = delivered_at_once(&app).await;
    let mut arrived: HashMap<String, usize> = HashMap::new();
    for (i, r) in receiver.received().iter().enumerate() {
        if let Some(id) = r.header("webhook-id") {
            arrived.entry(id.to_string()).or_insert(i);
        }
    }
    let judged = |ids: &[String]| -> Vec<usize> {
        ids.iter()
            .filter(|id| once.contains(*id))
            .map(|id| arrived.get(id).copied().expect("a delivered event arrived"))
            .collect()
    };
    let (first_at, later_at) = (judged(&first), judged(&later));
    assert!(
        first_at.len() >= FIRST / 2 && later_at.len() >= LATER / 2,
        "most deliveries arrive on their first attempt (first {}, later {}):\n{}",
        first_at.len(),
        later_at.len(),
        deliveries(&app).await
    );
    let last_first = first_at.iter().max().expect("first events");
    let first_later = later_at.iter().min().expect("later events");
    assert!(
        last_first < first_later,
        "every event published first arrives before any published later \
         (the first came {first_at:?}, the later {later_at:?}):\n{}",
        deliveries(&app).await
    );
    // The operator sees the mode over once the claims caught up.
    let operator = app.operator_key().await;
    let caught_up = wait_until(WAIT, || async {
        let n = app.metric(&operator, "hookd_endpoints_oldest_first").await;
        (n == 0).then_some(())
    })
    .await;
    assert!(
        caught_up.is_some(),
        "no endpoint claims oldest first once its backlog is sent"
    );
}

/// The events delivered on their first attempt.
async fn delivered_at_once(app: &TestApp) -> std::collections::HashSet<String> {
    use sea_orm::ConnectionTrait as _;
    let rows = app
        .db()
        .query_all_raw(sea_orm::Statement::from_string(
            app.db().get_database_backend(),
            "SELECT event_id AS e FROM delivery WHERE state = 'delivered' AND attempt_count = 1",
        ))
        .await
        .expect("the deliveries are read");
    rows.iter()
        .map(|r| r.try_get::<String>("", "e").expect("an event id"))
        .collect()
}

/// Each delivery's state, attempts and claim, to tell what went wrong.
async fn deliveries(app: &TestApp) -> String {
    crate::harness::rows::lines(
        app,
        &[
            "SELECT event_id || ' ' || state || ' attempts ' || attempt_count || ' next ' || \
           next_attempt_at || ' claim ' || claim_seq AS x FROM delivery ORDER BY created_at, id",
        ],
    )
    .await
}
