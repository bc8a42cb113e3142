//! What a disabled endpoint holds is `paused`: not counted as waiting,
//! resumed at once when the endpoint is enabled, dead at its maximum age.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    Backend, QUIET, TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with, stays_quiet, wait_until,
};
use hookd_test_macros::both_backends;

const SWEEPING: [(&str, &str); 2] = [
    ("HOOKD_RETENTION__SWEEP_INTERVAL", "50ms"),
    ("HOOKD_DELIVERY__JITTER", "0"),
];

/// The delivery's state and reason.
async fn state(app: &TestApp, event: &str) -> (String, Option<String>) {
    let reason = sea_orm::ConnectionTrait::query_one_raw(
        app.db(),
        sea_orm::Statement::from_string(
            app.db().get_database_backend(),
            format!("SELECT state, reason FROM delivery WHERE event_id = '{event}'"),
        ),
    )
    .await
    .expect("the query runs")
    .expect("the delivery exists");
    (
        reason.try_get("", "state").expect("state"),
        reason.try_get("", "reason").expect("reason"),
    )
}

async fn comes_to(app: &TestApp, event: &str, wanted: &str) -> (String, Option<String>) {
    wait_until(WAIT, || async {
        let s = state(app, event).await;
        (s.0 == wanted).then_some(s)
    })
    .await
    .unwrap_or_else(|| panic!("the delivery of {event} did not become {wanted}"))
}

/// A failing endpoint with one delivery that failed once: (receiver, endpoint, event).
async fn a_failed_delivery(app: &TestApp) -> (Receiver, String, String) {
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(500));
    let (id, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    comes_to(app, &event, "failed").await;
    (receiver, id, event)
}

/// A delivery that failed once, then its endpoint disabled by the partner
/// and the delivery paused: (app, partner key, receiver, endpoint, event).
async fn paused_by_a_disable(backend: Backend) -> (TestApp, String, Receiver, String, String) {
    let app = spawn_app_with(backend, &SWEEPING).await;
    let key = app.partner_key().await;
    let (receiver, id, event) = a_failed_delivery(&app).await;
    let (status, disabled, _) = app
        .request("POST", &format!("/v1/endpoints/{id}/disable"), &key, None)
        .await;
    assert_eq!(status, 200, "{disabled}");
    comes_to(&app, &event, "paused").await;
    (app, key, receiver, id, event)
}

#[both_backends]
async fn a_paused_delivery_is_not_counted_as_waiting_and_is_listed_as_paused(backend: Backend) {
    let (app, key, _receiver, _id, event) = paused_by_a_disable(backend).await;
    let operator = app.operator_key().await;
    assert_eq!(
        app.metric(&operator, "hookd_deliveries_waiting{state=\"failed\"}")
            .await,
        0
    );
    assert_eq!(app.metric(&operator, "hookd_deliveries_paused").await, 1);
    let (_, listed, _) = app
        .request("GET", "/v1/deliveries?state=paused", &key, None)
        .await;
    assert_eq!(listed["data"][0]["event_id"], event.as_str(), "{listed}");
}

#[both_backends]
async fn a_paused_delivery_resumes_at_once_when_its_endpoint_is_enabled(backend: Backend) {
    let (app, key, receiver, id, event) = paused_by_a_disable(backend).await;
    receiver.set_default(Reply::status(200));
    let (status, enabled, _) = app
        .request("POST", &format!("/v1/endpoints/{id}/enable"), &key, None)
        .await;
    assert_eq!(status, 200, "{enabled}");
    // Due at once: no clock moves, yet it is delivered.
    comes_to(&app, &event, "delivered").await;
}

#[both_backends]
async fn a_delivery_paused_past_its_maximum_age_is_dead_with_the_reason(backend: Backend) {
    let (app, _key, _receiver, _id, event) = paused_by_a_disable(backend).await;
    app.advance(Duration::from_secs(72 * 3600 - 60));
    stays_quiet(QUIET, || async {
        let (state, _) = state(&app, &event).await;
        (state != "paused").then(|| format!("within its maximum age it became {state}"))
    })
    .await;
    assert_eq!(
        state(&app, &event).await.0,
        "paused",
        "still paused within its maximum age"
    );
    app.advance(Duration::from_secs(120));
    let (_, reason) = comes_to(&app, &event, "dead").await;
    assert_eq!(reason.as_deref(), Some("paused-past-max-age"));
}

#[both_backends]
async fn a_410_disables_the_endpoint_and_pauses_every_delivery_it_holds(backend: Backend) {
    let app = spawn_app_with(backend, &SWEEPING).await;
    let (receiver, _id, first) = a_failed_delivery(&app).await;
    receiver.set_default(Reply::status(410));
    let second = app.publish("a.b", json!({})).await;
    // The delivery that met the 410 waits with the others for the
    // endpoint to be enabled.
    comes_to(&app, &second, "paused").await;
    comes_to(&app, &first, "paused").await;
    assert_eq!(
        app.count("SELECT COUNT(*) AS n FROM endpoint WHERE status = 'disabled'")
            .await,
        1
    );
}
