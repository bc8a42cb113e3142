//! Deliveries held by an endpoint that is not active: they wait without
//! spending attempts, resume when it is active again, and only within their
//! maximum age.

use std::time::Duration;

use serde_json::json;

use super::{jitterless_endpoint, set_status};
use crate::harness::{WAIT, outcome::assert_state_after, receiver::Reply};
use hookd_test_macros::both_backends;

#[both_backends]
async fn deliveries_held_by_a_disabled_endpoint_resume_only_within_their_maximum_age(
    backend: Backend,
) {
    let (app, receiver, endpoint) =
        jitterless_endpoint(backend, &[("HOOKD_DELIVERY__MAX_AGE", "1h")]).await;
    receiver.script([Reply::status(500), Reply::status(500)]);
    for n in 0..2 {
        let event = app.publish("a.b", json!({"n": n})).await;
        app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    }

    set_status(&app, &endpoint, "disabled").await;
    app.advance(Duration::from_secs(600));
    receiver.stays_at(2).await;
    set_status(&app, &endpoint, "active").await;
    receiver
        .wait_for(4, WAIT)
        .await
        .expect("both held deliveries resume within their maximum age");
}

#[both_backends]
async fn a_delivery_held_past_its_maximum_age_is_dead_without_another_attempt(backend: Backend) {
    let (app, receiver, endpoint) =
        jitterless_endpoint(backend, &[("HOOKD_DELIVERY__MAX_AGE", "1h")]).await;
    receiver.script([Reply::status(500)]);
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    set_status(&app, &endpoint, "disabled").await;
    app.advance(Duration::from_secs(2 * 3600));
    set_status(&app, &endpoint, "active").await;
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "dead",
        1,
        "dead, with its one attempt",
    )
    .await;
    assert_eq!(receiver.count(), 1, "no attempt after the maximum age");
}
