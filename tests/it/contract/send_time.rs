//! Before every attempt the delivery must still qualify: the endpoint belongs
//! to the event's partner and subscribes to its type. A pending retry of a
//! type the endpoint stopped subscribing to is cancelled, never sent, and
//! the partner sees why.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app,
};
use hookd_test_macros::both_backends;

/// Patches the endpoint, through the partner API, to take only `event_type`.
async fn subscribe_only(app: &TestApp, key: &str, endpoint: &str, event_type: &str) {
    let (status, body, _) = app
        .request(
            "PATCH",
            &format!("/v1/endpoints/{endpoint}"),
            key,
            Some(&json!({"event_types": [event_type]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

/// An endpoint of `app` for `a.b` and `c.d` whose receiver answered 503
/// once to the first attempt of an `a.b` event, now `failed` and due for a
/// retry: (receiver, endpoint, the event).
async fn a_failed_first_attempt(app: &TestApp) -> (Receiver, String, String) {
    let receiver = Receiver::start().await;
    receiver.script([Reply::status(503)]);
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b", "c.d"], 8)
        .await;
    let event = app.publish("a.b", json!({"n": 1})).await;
    receiver.wait_for(1, WAIT).await.expect("the first attempt");
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    (receiver, endpoint, event)
}

/// An endpoint for `a.b` and `c.d` whose receiver answered 503 once to an
/// `a.b` event; the partner then subscribed it to `c.d` only and the
/// retry came due: (app, receiver, endpoint, partner key, the event).
async fn a_retry_no_longer_subscribed_to(
    backend: Backend,
) -> (TestApp, Receiver, String, String, String) {
    let app = spawn_app(backend).await;
    let (receiver, endpoint, event) = a_failed_first_attempt(&app).await;
    let key = app.partner_key().await;
    subscribe_only(&app, &key, &endpoint, "c.d").await;
    app.advance(Duration::from_secs(7));
    app.wait_for_state(&event, &endpoint, "cancelled", WAIT)
        .await;
    (app, receiver, endpoint, key, event)
}

#[both_backends]
async fn a_retry_of_a_type_the_endpoint_no_longer_subscribes_to_is_cancelled_unsent(
    backend: Backend,
) {
    let (app, receiver, endpoint, _, _) = a_retry_no_longer_subscribed_to(backend).await;
    // A still-subscribed type goes through, after the cancelled one.
    let other = app.publish("c.d", json!({"n": 2})).await;
    app.wait_for_state(&other, &endpoint, "delivered", WAIT)
        .await;
    let got = receiver.received();
    assert_eq!(got.len(), 2, "the retry of a.b was never sent");
    assert!(
        got[1].body.windows(5).any(|w| w == b"\"c.d\""),
        "the second request is c.d"
    );
}

#[both_backends]
async fn the_partner_sees_a_cancelled_retry_with_its_reason_and_only_its_first_attempt(
    backend: Backend,
) {
    let (app, _receiver, _, key, event) = a_retry_no_longer_subscribed_to(backend).await;
    let path = format!("/v1/deliveries?event_id={event}");
    let (status, list, _) = app.request("GET", &path, &key, None).await;
    assert_eq!(status, 200, "{list}");
    let d = &list["data"][0];
    assert_eq!(d["state"], "cancelled", "{list}");
    assert_eq!(d["reason"], "endpoint-unsubscribed", "{list}");
    assert_eq!(d["attempt_count"], 1, "only the first attempt was made");
}

#[both_backends]
async fn a_cancelled_retry_is_counted_with_its_reason(backend: Backend) {
    let (app, _receiver, _, _, _) = a_retry_no_longer_subscribed_to(backend).await;
    let operator = app.operator_key().await;
    let cancelled = app
        .metric(
            &operator,
            "hookd_deliveries_cancelled_total{reason=\"endpoint-unsubscribed\"}",
        )
        .await;
    assert_eq!(cancelled, 1);
}

#[both_backends]
async fn a_test_event_reaches_an_endpoint_whatever_types_it_takes(app: TestApp) {
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["usage.*"], 8)
        .await;
    let key = app.partner_key().await;
    let path = format!("/v1/endpoints/{endpoint}/test");
    let (status, sent, _) = app.request("POST", &path, &key, None).await;
    assert_eq!(status, 202, "{sent}");
    let event = sent["event_id"].as_str().expect("an event id").to_string();
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    assert_eq!(receiver.count(), 1);
}

#[both_backends]
async fn a_cancelled_delivery_never_uses_up_the_circuits_probe(backend: Backend) {
    let app = crate::harness::spawn_app_with(
        backend,
        &[
            ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1"),
            ("HOOKD_CIRCUIT__COOLDOWN_INITIAL", "1s"),
        ],
    )
    .await;
    let (_receiver, endpoint, old) = a_failed_first_attempt(&app).await;
    let key = app.partner_key().await;
    subscribe_only(&app, &key, &endpoint, "c.d").await;
    // The circuit's cool-down and the retry are both over: the retry is
    // the first job, and it no longer qualifies.
    app.advance(Duration::from_secs(7));
    app.wait_for_state(&old, &endpoint, "cancelled", WAIT).await;
    let new = app.publish("c.d", json!({"n": 2})).await;
    app.wait_for_state(&new, &endpoint, "delivered", WAIT).await;
}
