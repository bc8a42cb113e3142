//! The metrics an operator alerts on (config/alerts.yml): endpoints by
//! status, the dead-letter backlog, deliveries on their last attempts, and
//! the time from an event's fanout to its 2xx.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// Four scheduled attempts, a second apart.
const FOUR_ATTEMPTS: [(&str, &str); 2] = [
    ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1s", "1s", "1s"]"#),
    ("HOOKD_DELIVERY__JITTER", "0"),
];

/// hookd with an operator key, and an endpoint whose receiver answers 500
/// (for `c.d` events): (app, operator key, failing endpoint, its receiver).
async fn one_failing_endpoint(backend: Backend) -> (TestApp, String, String, Receiver) {
    let app = spawn_app_with(backend, &FOUR_ATTEMPTS).await;
    let operator = app.operator_key().await;
    let broken = Receiver::start().await;
    broken.set_default(Reply::status(500));
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &broken.url(), &["c.d"], 8)
        .await;
    (app, operator, endpoint, broken)
}

/// An endpoint whose receiver answers 2xx (for `a.b` events): its id, and
/// the receiver.
async fn fine_endpoint(app: &TestApp) -> (String, Receiver) {
    let fine = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &fine.url(), &["a.b"], 8)
        .await;
    (endpoint, fine)
}

/// Publishes a `c.d` event, bound to fail at `broken`, and waits for its
/// first attempt: its id.
async fn doomed_event(app: &TestApp, broken: &str) -> String {
    let doomed = app.publish("c.d", json!({})).await;
    app.attempts_when(&doomed, broken, 1).await;
    doomed
}

/// Moves the clock past each retry (a second apart) until the delivery has
/// `n` attempts.
async fn retried_until(app: &TestApp, event: &str, endpoint: &str, n: usize) {
    let made = app.attempts(event, endpoint).await.len();
    for done in made + 1..=n {
        app.advance(Duration::from_secs(2));
        app.attempts_when(event, endpoint, done).await;
    }
}

/// `hookd_endpoints{status="<status>"}` in a scrape.
async fn endpoints_by(app: &TestApp, operator: &str, status: &str) -> i64 {
    app.metric(operator, &format!("hookd_endpoints{{status=\"{status}\"}}"))
        .await
}

#[both_backends]
async fn endpoints_are_scraped_by_status_a_failing_one_apart_from_the_active_ones(
    backend: Backend,
) {
    let (app, operator, broken, _receiver) = one_failing_endpoint(backend).await;
    let (fine_ep, _fine) = fine_endpoint(&app).await;
    let metric = |status: &'static str| endpoints_by(&app, &operator, status);
    assert_eq!(metric("active").await, 2, "neither has failed yet");
    assert_eq!(metric("failing").await, 0);

    let ok = app.publish("a.b", json!({"n": 1})).await;
    app.wait_for_state(&ok, &fine_ep, "delivered", WAIT).await;
    let doomed = app.publish("c.d", json!({"n": 2})).await;
    app.wait_for_state(&doomed, &broken, "failed", WAIT).await;
    for (status, n, which) in [
        ("failing", 1, "the endpoint whose attempt failed"),
        ("active", 1, "the one that succeeds"),
        ("paused", 0, "none"),
        ("disabled", 0, "none"),
    ] {
        assert_eq!(metric(status).await, n, "{status}: {which}");
    }
}

#[both_backends]
async fn a_delivery_is_saturated_while_it_waits_on_its_last_two_attempts_and_not_before(
    backend: Backend,
) {
    let (app, operator, broken, _receiver) = one_failing_endpoint(backend).await;
    let saturation = || app.metric(&operator, "hookd_retry_saturation");
    let doomed = doomed_event(&app, &broken).await;
    app.wait_for_state(&doomed, &broken, "failed", WAIT).await;
    assert_eq!(
        saturation().await,
        0,
        "one attempt of four made: three remain, more than the last two"
    );
    retried_until(&app, &doomed, &broken, 2).await;
    app.wait_for_state(&doomed, &broken, "failed", WAIT).await;
    assert_eq!(
        saturation().await,
        1,
        "two of four made: the last two remain"
    );
    retried_until(&app, &doomed, &broken, 4).await;
    app.wait_for_state(&doomed, &broken, "dead", WAIT).await;
    assert_eq!(saturation().await, 0, "a dead delivery waits on nothing");
}

#[both_backends]
async fn a_delivery_out_of_attempts_is_in_the_dead_backlog_and_counted_as_died_once(
    backend: Backend,
) {
    let (app, operator, broken, _receiver) = one_failing_endpoint(backend).await;
    let metric = |name: &'static str| app.metric(&operator, name);
    let doomed = doomed_event(&app, &broken).await;
    retried_until(&app, &doomed, &broken, 3).await;
    app.wait_for_state(&doomed, &broken, "failed", WAIT).await;
    assert_eq!(
        metric("hookd_deliveries_dead").await,
        0,
        "one attempt remains"
    );
    assert_eq!(metric("hookd_deliveries_died_total").await, 0);

    retried_until(&app, &doomed, &broken, 4).await;
    app.wait_for_state(&doomed, &broken, "dead", WAIT).await;
    assert_eq!(metric("hookd_deliveries_dead").await, 1);
    assert_eq!(metric("hookd_deliveries_died_total").await, 1);
}

#[both_backends]
async fn only_a_delivered_attempt_counts_toward_delivery_latency(backend: Backend) {
    let (app, operator, broken, _receiver) = one_failing_endpoint(backend).await;
    let latency = || app.metric(&operator, "hookd_delivery_latency_seconds_count");
    let (fine_ep, _fine) = fine_endpoint(&app).await;
    let doomed = doomed_event(&app, &broken).await;
    retried_until(&app, &doomed, &broken, 4).await;
    app.wait_for_state(&doomed, &broken, "dead", WAIT).await;
    assert_eq!(
        latency().await,
        0,
        "failed attempts are not delivery latency"
    );

    let ok = app.publish("a.b", json!({})).await;
    app.wait_for_state(&ok, &fine_ep, "delivered", WAIT).await;
    assert_eq!(latency().await, 1, "the 2xx is");
}
