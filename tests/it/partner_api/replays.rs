//! Replaying one delivery: it goes again at once as a `manual` attempt with
//! the original `webhook-id` and a fresh timestamp and signature; a failed
//! replay leaves the delivery's state and schedule as they were.

use std::time::Duration;

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::json;

use super::{
    Callers, delivery_id, delivery_with_attempts, endpoint_at_receiver,
    expect_hidden_from_strangers, expect_status,
};
use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Receiver, Reply},
    schedule::exact_schedule,
    signatures::{timestamp, verifies},
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// One attempt and no retries: a failing delivery is dead at once.
const ONE_ATTEMPT: [(&str, &str); 1] = [("HOOKD_DELIVERY__SCHEDULE", r#"["0s"]"#)];

/// Asks for a replay of delivery `id`; returns the 202's body.
async fn replay(app: &TestApp, key: &str, id: &str) -> serde_json::Value {
    expect_status(
        &app.request("POST", &format!("/v1/deliveries/{id}/replay"), key, None)
            .await,
        202,
    )
}

#[both_backends]
async fn a_replay_arrives_with_the_original_id_and_a_fresh_signature(backend: Backend) {
    let app = spawn_app_with(backend, &ONE_ATTEMPT).await;
    let key = app.partner_key().await;
    let (receiver, endpoint, secret) = endpoint_at_receiver(&app, &key).await;
    let event = app.publish("ok.x", json!({"n": 1})).await;
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    let original = receiver.wait_for(1, WAIT).await.expect("the original")[0].clone();
    app.advance(Duration::from_secs(60));

    let id = delivery_id(&app, &key, &event, &endpoint).await;
    let queued = replay(&app, &key, &id).await;
    assert_eq!(queued["delivery_id"], id.as_str());
    assert_eq!(queued["event_id"], event.as_str());
    assert!(queued["replay_id"].is_string(), "{queued}");
    let replayed = receiver
        .wait_for(2, WAIT)
        .await
        .expect("the replay arrives")[1]
        .clone();
    assert_eq!(
        replayed.header("webhook-id"),
        Some(event.as_str()),
        "a replay keeps the original webhook-id"
    );
    assert_eq!(replayed.body, original.body, "a replay sends the same body");
    assert_eq!(
        timestamp(&replayed),
        timestamp(&original) + 60,
        "a replay is stamped with the time it is sent"
    );
    assert_ne!(
        replayed.header("webhook-signature"),
        original.header("webhook-signature")
    );
    assert!(
        verifies(&secret, &replayed, app.clock.now_ms()),
        "the replay's fresh signature verifies now"
    );

    let detail = delivery_with_attempts(&app, &key, &id, 2).await;
    let attempts = detail["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 2, "{detail}");
    assert_eq!(attempts[0]["trigger"], "scheduled");
    assert_eq!(
        attempts[1]["trigger"], "manual",
        "the replay is a manual attempt"
    );
    assert_eq!(attempts[1]["status_code"], 200);
    assert_eq!(detail["state"], "delivered");
}

/// A delivery that died on a 500 (its one attempt), replayed a minute later
/// with the receiver answering `status`. Checks what every such replay
/// does: it arrives with the original `webhook-id`, stamped with the time it
/// is sent and signed afresh with the endpoint's secret, and is recorded as
/// the delivery's second attempt, `manual`, with `status`; after it the
/// delivery is in `state`, which is `why`. Returns the app and the receiver.
async fn replay_a_dead_delivery(
    backend: Backend,
    status: u16,
    state: &str,
    why: &str,
) -> (TestApp, Receiver) {
    let app = spawn_app_with(backend, &ONE_ATTEMPT).await;
    let key = app.partner_key().await;
    let (receiver, endpoint, secret) = endpoint_at_receiver(&app, &key).await;
    receiver.set_default(Reply::status(500));
    let event = app.publish("dead.x", json!({"status": status})).await;
    assert_eq!(app.wait_for_state(&event, &endpoint, "dead", WAIT).await, 1);
    receiver.set_default(Reply::status(status));
    app.advance(Duration::from_secs(60));

    let id = delivery_id(&app, &key, &event, &endpoint).await;
    replay(&app, &key, &id).await;
    let got = receiver
        .wait_for(2, WAIT)
        .await
        .expect("the replay of a dead delivery arrives");
    assert_eq!(got[1].header("webhook-id"), Some(event.as_str()));
    assert_eq!(timestamp(&got[1]), timestamp(&got[0]) + 60);
    assert!(verifies(&secret, &got[1], app.clock.now_ms()));
    let detail = delivery_with_attempts(&app, &key, &id, 2).await;
    assert_eq!(detail["attempts"][1]["trigger"], "manual");
    assert_eq!(detail["attempts"][1]["status_code"], status);
    assert_eq!(detail["state"], state, "{why}: {detail}");
    (app, receiver)
}

#[both_backends]
async fn a_failed_replay_leaves_a_dead_delivery_dead(backend: Backend) {
    let why = "a failed manual attempt leaves a dead delivery dead";
    let (_app, receiver) = replay_a_dead_delivery(backend, 500, "dead", why).await;
    receiver.stays_at(2).await;
}

#[both_backends]
async fn a_dead_delivery_replayed_once_its_receiver_is_back_is_delivered(backend: Backend) {
    let why = "a good manual attempt delivers a dead delivery";
    replay_a_dead_delivery(backend, 200, "delivered", why).await;
}

#[both_backends]
async fn no_one_replays_another_partners_delivery_or_one_that_does_not_exist(backend: Backend) {
    let app = spawn_app_with(backend, &ONE_ATTEMPT).await;
    let callers = Callers::of(&app).await;
    let (receiver, endpoint, _) = endpoint_at_receiver(&app, &callers.partner).await;
    receiver.set_default(Reply::status(500));
    let event = app.publish("dead.x", json!({})).await;
    app.wait_for_state(&event, &endpoint, "dead", WAIT).await;
    let id = delivery_id(&app, &callers.partner, &event, &endpoint).await;
    let path = format!("/v1/deliveries/{id}/replay");
    let unknown = "/v1/deliveries/dlv_nope/replay";
    expect_hidden_from_strangers(&app, &callers, "POST", &path, unknown).await;
    receiver.stays_at(1).await;
}

#[both_backends]
async fn a_failed_replay_of_a_retrying_delivery_costs_it_none_of_its_scheduled_attempts(
    backend: Backend,
) {
    let app = spawn_app_with(backend, &exact_schedule(r#"["0s", "5s", "5m"]"#)).await;
    let key = app.partner_key().await;
    let (receiver, endpoint, _) = endpoint_at_receiver(&app, &key).await;
    receiver.set_default(Reply::status(500));
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    let id = delivery_id(&app, &key, &event, &endpoint).await;
    let before = delivery_with_attempts(&app, &key, &id, 1).await;

    replay(&app, &key, &id).await;
    let after = delivery_with_attempts(&app, &key, &id, 2).await;
    assert_eq!(after["attempts"][1]["trigger"], "manual");
    assert_eq!(
        after["state"], "failed",
        "a failed replay leaves the delivery failed"
    );
    assert_eq!(
        after["next_attempt_at"], before["next_attempt_at"],
        "a failed replay leaves the next scheduled attempt where it was"
    );

    // The schedule's second attempt (after 5 s) fails: the third (after
    // 5 min) must still come, as if there had been no replay.
    app.advance(Duration::from_secs(6));
    let detail = delivery_with_attempts(&app, &key, &id, 3).await;
    assert_eq!(detail["attempts"][2]["trigger"], "scheduled");
    assert_eq!(
        detail["state"], "failed",
        "after 2 of its 3 scheduled attempts the delivery must still be retrying, \
             the manual attempt must not count against its schedule: {detail}"
    );
    assert_eq!(
        detail["next_attempt_at"],
        format_time(app.clock.now_ms() + 300_000),
        "the third scheduled attempt follows the 5 min step"
    );
    app.advance(Duration::from_secs(301));
    assert_eq!(
        app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
        4,
        "dead after its three scheduled attempts and the manual one"
    );
}
