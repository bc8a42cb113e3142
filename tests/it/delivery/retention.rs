//! Retention on the manual clock: finished deliveries (delivered or dead),
//! with their attempts, go once older than `retention.deliveries`; published
//! events once older than `retention.events` and left without deliveries.
//! Unfinished deliveries, deliveries with a replay still waiting, and so
//! their events, are kept; under the defaults an event outlives its swept
//! deliveries in the feed and the export. The sweep runs every 100 ms here.

use std::time::Duration;

use serde_json::json;

use hookd::domain::clock::Clock as _;

use super::delivery_id;
use crate::{
    harness::{
        Backend, QUIET, TestApp, WAIT, expect_status,
        receiver::{Receiver, Reply},
        spawn_app_with, stays_quiet, wait_until,
    },
    partner_api::{
        export::export,
        feed_time::{at, ids},
    },
};
use hookd_test_macros::both_backends;

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

/// A hookd sweeping every 100 ms with these retentions (and `extra`), and
/// an endpoint taking `a.b` events only: (app, receiver, endpoint).
async fn sweeping(
    backend: Backend,
    deliveries: &str,
    events: &str,
    extra: &[(&str, &str)],
) -> (TestApp, Receiver, String) {
    let mut env = vec![
        ("HOOKD_RETENTION__DELIVERIES", deliveries),
        ("HOOKD_RETENTION__EVENTS", events),
        ("HOOKD_RETENTION__SWEEP_INTERVAL", "100ms"),
    ];
    env.extend_from_slice(extra);
    let app = spawn_app_with(backend, &env).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 8)
        .await;
    (app, receiver, endpoint)
}

/// How many rows of `table` have `column = id`.
async fn rows(app: &TestApp, table: &str, column: &str, id: &str) -> i64 {
    app.count(&format!(
        "SELECT COUNT(*) AS n FROM {table} WHERE {column} = '{id}'"
    ))
    .await
}

/// Waits until the sweep has deleted the rows of `table` with `column = id`.
async fn swept(app: &TestApp, table: &str, column: &str, id: &str) {
    let gone = wait_until(WAIT, || async {
        (rows(app, table, column, id).await == 0).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the sweep did not delete {table} {id}");
}

/// Moves the clock `by` and waits until a sweep has run at the new now:
/// the one that deletes the `sentinel` event.
async fn swept_after(app: &TestApp, by: Duration, sentinel: &str) {
    app.advance(by);
    swept(app, "outbox_event", "event_id", sentinel).await;
}

/// Asserts that the row of `table` with `column = id` is still there; `why`
/// it should be.
async fn kept(app: &TestApp, table: &str, column: &str, id: &str, why: &str) {
    assert_eq!(rows(app, table, column, id).await, 1, "{table} {id}: {why}");
}

/// Publishes an `a.b` event and waits until it is delivered to `endpoint`:
/// (event, delivery).
async fn delivered_event(app: &TestApp, endpoint: &str) -> (String, String) {
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, endpoint, "delivered", WAIT)
        .await;
    let delivery = delivery_id(app, &event, endpoint).await;
    (event, delivery)
}

/// Publishes an event no endpoint takes (so it has no deliveries) and waits
/// until it is published: once past `retention.events` it is swept, which
/// tells a test that a sweep has run at the clock's now.
async fn sentinel(app: &TestApp) -> String {
    let event = app.publish("c.d", json!({})).await;
    let published = wait_until(WAIT, || async {
        let sql = format!(
            "SELECT COUNT(*) AS n FROM outbox_event WHERE event_id = '{event}' AND published_at IS NOT NULL"
        );
        (app.count(&sql).await == 1).then_some(())
    })
    .await;
    assert!(published.is_some(), "the sentinel event is published");
    event
}

#[both_backends]
async fn finished_rows_younger_than_their_retention_are_kept(backend: Backend) {
    let (app, _receiver, endpoint) = sweeping(backend, "1d", "1d", &[]).await;
    let old = sentinel(&app).await;
    app.advance(2 * HOUR);
    let (young, delivery) = delivered_event(&app, &endpoint).await;

    swept_after(&app, 23 * HOUR, &old).await;
    kept(
        &app,
        "delivery",
        "id",
        &delivery,
        "a delivery finished 23 h ago is kept under a 1 d retention",
    )
    .await;
    kept(
        &app,
        "attempt",
        "delivery_id",
        &delivery,
        "so is its attempt",
    )
    .await;
    kept(&app, "outbox_event", "event_id", &young, "and its event").await;
}

/// Under a 1 d retention and a one-attempt schedule: a delivered and a dead
/// delivery, each with its attempt, and a third (delivered) with a replay
/// waiting because its endpoint is disabled; then the clock two days on.
struct PastRetention {
    app: TestApp,
    /// Answers the replay once the endpoint is enabled again.
    receiver: Receiver,
    endpoint: String,
    /// (event, delivery) of the delivered one.
    delivered: (String, String),
    /// (event, delivery) of the dead one.
    dead: (String, String),
    /// (event, delivery) of the one with a replay waiting.
    replayed: (String, String),
}

async fn past_retention(backend: Backend) -> PastRetention {
    let schedule = [("HOOKD_DELIVERY__SCHEDULE", r#"["0s"]"#)];
    let (app, receiver, endpoint) = sweeping(backend, "1d", "1d", &schedule).await;
    receiver.script([Reply::status(200), Reply::status(500), Reply::status(200)]);
    let mut finished = Vec::new();
    for state in ["delivered", "dead", "delivered"] {
        let event = app.publish("a.b", json!({})).await;
        app.wait_for_state(&event, &endpoint, state, WAIT).await;
        let delivery = delivery_id(&app, &event, &endpoint).await;
        assert_eq!(rows(&app, "attempt", "delivery_id", &delivery).await, 1);
        finished.push((event, delivery));
    }
    let key = app.partner_key().await;
    let disable = format!("/v1/endpoints/{endpoint}/disable");
    let (status, body, _) = app.request("POST", &disable, &key, None).await;
    assert_eq!(status, 200, "{body}");
    let replayed = finished.pop().expect("the replayed one");
    let replay = format!("/v1/deliveries/{}/replay", replayed.1);
    let (status, body, _) = app.request("POST", &replay, &key, None).await;
    assert_eq!(status, 202, "{body}");
    kept(
        &app,
        "replay",
        "delivery_id",
        &replayed.1,
        "the replay waits for the endpoint",
    )
    .await;
    app.advance(2 * DAY);
    let dead = finished.pop().expect("the dead one");
    let delivered = finished.pop().expect("the delivered one");
    PastRetention {
        app,
        receiver,
        endpoint,
        delivered,
        dead,
        replayed,
    }
}

/// Waits until the sweep has deleted `delivery`, and checks that its
/// attempts went with it.
async fn swept_with_its_attempts(app: &TestApp, delivery: &str) {
    swept(app, "delivery", "id", delivery).await;
    assert_eq!(
        rows(app, "attempt", "delivery_id", delivery).await,
        0,
        "the attempts of {delivery} go with it"
    );
}

#[both_backends]
async fn a_delivered_delivery_past_retention_is_swept_with_its_attempts(backend: Backend) {
    let past = past_retention(backend).await;
    swept_with_its_attempts(&past.app, &past.delivered.1).await;
}

#[both_backends]
async fn a_dead_delivery_past_retention_is_swept_with_its_attempts(backend: Backend) {
    let past = past_retention(backend).await;
    swept_with_its_attempts(&past.app, &past.dead.1).await;
}

#[both_backends]
async fn a_delivery_with_a_waiting_replay_is_kept_past_retention_until_the_replay_has_gone(
    backend: Backend,
) {
    let past = past_retention(backend).await;
    let app = &past.app;
    let replayed = &past.replayed.1;
    // The sweep has run at the new now: it took the other two.
    swept(app, "delivery", "id", &past.delivered.1).await;
    swept(app, "delivery", "id", &past.dead.1).await;
    kept(
        app,
        "delivery",
        "id",
        replayed,
        "a partner asked for its replay",
    )
    .await;
    kept(app, "replay", "delivery_id", replayed, "it still waits").await;

    let key = app.partner_key().await;
    let enable = format!("/v1/endpoints/{}/enable", past.endpoint);
    let (status, body, _) = app.request("POST", &enable, &key, None).await;
    assert_eq!(status, 200, "{body}");
    swept(app, "replay", "delivery_id", replayed).await;
    assert_eq!(
        past.receiver.received().len(),
        4,
        "the replay reached the receiver"
    );
    assert_eq!(
        rows(app, "attempt", "delivery_id", replayed).await,
        2,
        "the replay was attempted once the endpoint took it"
    );
    app.advance(2 * DAY);
    swept(app, "delivery", "id", replayed).await;
}

#[both_backends]
async fn an_event_past_retention_is_swept_once_its_deliveries_are(backend: Backend) {
    let past = past_retention(backend).await;
    for (event, _) in [&past.delivered, &past.dead] {
        swept(&past.app, "outbox_event", "event_id", event).await;
    }
}

#[both_backends]
async fn an_event_outlives_its_swept_deliveries_until_its_own_retention(backend: Backend) {
    let (app, _receiver, endpoint) = sweeping(backend, "1d", "3d", &[]).await;
    let (event, delivery) = delivered_event(&app, &endpoint).await;

    app.advance(2 * DAY);
    swept(&app, "delivery", "id", &delivery).await;
    stays_quiet(QUIET, || async {
        (rows(&app, "outbox_event", "event_id", &event).await == 0)
            .then(|| "the 2-day-old event went under a 3 d retention".to_string())
    })
    .await;

    app.advance(DAY + HOUR);
    swept(&app, "outbox_event", "event_id", &event).await;
}

#[both_backends]
async fn an_event_is_kept_while_it_has_deliveries(backend: Backend) {
    let past = past_retention(backend).await;
    let app = &past.app;
    // The sweep has run at the new now: it took the other two events.
    swept(app, "outbox_event", "event_id", &past.delivered.0).await;
    swept(app, "outbox_event", "event_id", &past.dead.0).await;
    kept(
        app,
        "outbox_event",
        "event_id",
        &past.replayed.0,
        "a 2-day-old event is kept (1 d retention) while its delivery waits for a replay",
    )
    .await;
}

/// Under the default retentions (events 90 d, deliveries 30 d), 31 days
/// after it was delivered: the delivery is gone, and the event is still in
/// the feed and the export, where a partner reconciles from; at 91 days it
/// goes too.
#[both_backends]
async fn an_event_whose_deliveries_were_swept_is_still_in_the_feed_and_the_export(
    backend: Backend,
) {
    let app = spawn_app_with(backend, &[("HOOKD_RETENTION__SWEEP_INTERVAL", "100ms")]).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 8)
        .await;
    let created = app.clock.now_ms();
    let (event, delivery) = delivered_event(&app, &endpoint).await;

    app.advance(31 * DAY);
    swept(&app, "delivery", "id", &delivery).await;
    let key = app.partner_key().await;
    let since = at("since", created);
    let feed = expect_status(
        &app.request("GET", &format!("/v1/events?{since}"), &key, None)
            .await,
        200,
    );
    assert_eq!(
        ids(feed["data"].as_array().expect("data")),
        vec![event.clone()],
        "the feed still holds the event whose delivery was swept"
    );
    let exported = export(&app, &key, &since).await;
    assert_eq!(
        ids(&exported.events),
        vec![event.clone()],
        "so does the export"
    );
    assert_eq!(exported.events[0], feed["data"][0], "the same envelope");

    app.advance(60 * DAY);
    swept(&app, "outbox_event", "event_id", &event).await;
}

/// A delivery that failed two days ago and retries in ten (the schedule is
/// one attempt, then ten days), under a 1 d retention, after a sweep has
/// run: (app, its event, its delivery).
async fn unfinished_past_retention(backend: Backend) -> (TestApp, String, String) {
    let slow_retry = [
        ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "10d"]"#),
        ("HOOKD_DELIVERY__MAX_AGE", "30d"),
    ];
    let (app, receiver, endpoint) = sweeping(backend, "1d", "1d", &slow_retry).await;
    receiver.set_default(Reply::status(500));
    let old = sentinel(&app).await;
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    let delivery = delivery_id(&app, &event, &endpoint).await;
    swept_after(&app, 2 * DAY, &old).await;
    (app, event, delivery)
}

#[both_backends]
async fn an_unfinished_delivery_is_never_swept(backend: Backend) {
    let (app, _, delivery) = unfinished_past_retention(backend).await;
    let failed =
        format!("SELECT COUNT(*) AS n FROM delivery WHERE id = '{delivery}' AND state = 'failed'");
    assert_eq!(
        app.count(&failed).await,
        1,
        "a failed delivery still retrying is kept however old"
    );
    kept(
        &app,
        "attempt",
        "delivery_id",
        &delivery,
        "with its attempt",
    )
    .await;
}

#[both_backends]
async fn an_event_with_an_unfinished_delivery_is_kept(backend: Backend) {
    let (app, event, _) = unfinished_past_retention(backend).await;
    kept(
        &app,
        "outbox_event",
        "event_id",
        &event,
        "its event stays while the delivery is unfinished",
    )
    .await;
}
