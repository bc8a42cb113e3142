//! When retries go: the Standard Webhooks schedule to the second (jitter
//! off), `delivery.max_age`, and a retry due soon going in its time whatever
//! else the endpoint holds (a long lease, another delivery's later retry).

use std::time::Duration;

use serde_json::json;

use super::{endpoint_on, jitterless_endpoint, usage};
use crate::harness::{
    Backend, TestApp, WAIT,
    outcome::assert_state_after,
    receiver::{Receiver, Reply},
};
use hookd_test_macros::both_backends;

/// Waits for each attempt of the delivery of `event` to `endpoint` in turn,
/// and after the n-th moves the clock on by the n-th of `steps` seconds.
async fn advance_after_each_attempt(app: &TestApp, event: &str, endpoint: &str, steps: &[u64]) {
    for (i, step) in steps.iter().enumerate() {
        app.attempts_when(event, endpoint, i + 1).await;
        app.advance(Duration::from_secs(*step));
    }
}

/// hookd without jitter (and `extra`), a receiver that always answers 500,
/// and one event published to it: (app, receiver, endpoint, event).
async fn always_failing(
    backend: Backend,
    extra: &[(&str, &str)],
) -> (TestApp, Receiver, String, String) {
    let (app, receiver, endpoint) = jitterless_endpoint(backend, extra).await;
    receiver.set_default(Reply::status(500));
    let event = app.publish("a.b", json!({})).await;
    (app, receiver, endpoint, event)
}

#[both_backends]
async fn a_receiver_that_always_fails_gets_the_whole_schedule_then_dead(backend: Backend) {
    let (app, receiver, endpoint, event) =
        always_failing(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100")]).await;
    let schedule = [5u64, 300, 1800, 7200, 18000, 36000, 43200, 50400, 57600];
    advance_after_each_attempt(&app, &event, &endpoint, &schedule).await;
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "dead",
        10,
        "ten attempts, then dead",
    )
    .await;
    let attempts = app.attempts(&event, &endpoint).await;
    let gaps: Vec<i64> = attempts
        .windows(2)
        .map(|w| (w[1].started_at - w[0].started_at) / 1000)
        .collect();
    assert_eq!(
        gaps,
        schedule.iter().map(|s| *s as i64).collect::<Vec<_>>(),
        "attempts follow the default schedule"
    );
    assert_eq!(receiver.count(), 10);
}

#[both_backends]
async fn a_delivery_past_its_maximum_age_is_dead(backend: Backend) {
    let (app, _receiver, endpoint, event) =
        always_failing(backend, &[("HOOKD_DELIVERY__MAX_AGE", "1h")]).await;
    advance_after_each_attempt(&app, &event, &endpoint, &[5, 300, 1800]).await;
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "dead",
        4,
        "the 2 h retry would pass the 1 h maximum age",
    )
    .await;
}

/// hookd with the production lease (60 s, far longer than the first retry
/// delay), and an endpoint whose receiver answers `replies`, then 200:
/// (app, receiver, endpoint).
async fn with_the_production_lease(
    backend: Backend,
    replies: impl IntoIterator<Item = Reply>,
) -> (TestApp, Receiver, String) {
    let (app, receiver, endpoint) = endpoint_on(backend, &[("HOOKD_DELIVERY__LEASE", "60s")]).await;
    receiver.script(replies);
    (app, receiver, endpoint)
}

#[both_backends]
async fn a_retry_goes_when_it_is_due_not_when_the_claims_lease_ends(backend: Backend) {
    // The production lease (60 s) is far longer than the first retry delay
    // (5 s, ±20 % jitter): the retry must not wait for the lease.
    // A slow delivery is still in flight when a second claim, a second
    // later, takes the next event; that one is refused.
    let (app, receiver, endpoint) = with_the_production_lease(
        backend,
        [
            Reply::Delay(Duration::from_millis(1_500), Box::new(Reply::status(200))),
            Reply::status(503),
        ],
    )
    .await;
    let slow = app.publish("usage.finalized", usage(1)).await;
    receiver
        .wait_for(1, WAIT)
        .await
        .expect("the slow attempt starts");
    app.advance(Duration::from_secs(1));
    let refused = app.publish("usage.finalized", usage(2)).await;
    app.wait_for_state(&refused, &endpoint, "failed", WAIT)
        .await;
    app.wait_for_state(&slow, &endpoint, "delivered", WAIT)
        .await;
    receiver.stays_at(2).await;

    app.advance(Duration::from_millis(6_100));
    receiver
        .wait_for(3, WAIT)
        .await
        .expect("the retry is sent once its 5 s (+20 %) are up");
    assert_state_after(
        &app,
        &refused,
        &endpoint,
        "delivered",
        2,
        "delivered on the second attempt",
    )
    .await;
}

#[both_backends]
async fn a_retry_is_not_held_back_by_another_deliverys_later_retry(backend: Backend) {
    let (app, receiver, endpoint) =
        with_the_production_lease(backend, vec![Reply::status(503); 3]).await;
    // One delivery backs off to its third attempt, about 5 min away.
    let later = app.publish("usage.finalized", usage(1)).await;
    app.attempts_when(&later, &endpoint, 1).await;
    app.advance(Duration::from_millis(6_100));
    app.attempts_when(&later, &endpoint, 2).await;
    app.wait_for_state(&later, &endpoint, "failed", WAIT).await;

    // Another fails its first attempt: its retry is due in 5 s.
    let soon = app.publish("usage.finalized", usage(2)).await;
    app.attempts_when(&soon, &endpoint, 1).await;
    app.wait_for_state(&soon, &endpoint, "failed", WAIT).await;
    receiver.stays_at(3).await;

    app.advance(Duration::from_millis(6_100));
    assert_state_after(
        &app,
        &soon,
        &endpoint,
        "delivered",
        2,
        "the 5 s retry goes in its time, not with the 5 min one",
    )
    .await;
    assert_eq!(receiver.count(), 4, "the later delivery is not sent early");
}
