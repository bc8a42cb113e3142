//! A manual replay goes now (issue 13, item 8): through an open circuit it
//! is the circuit's probe, and a good answer lets what waited behind the
//! circuit go too; a bad one reopens it with a doubled cool-down. A replay
//! that must wait says for what.

use std::time::Duration;

use serde_json::{Value, json};

use hookd_test_macros::both_backends;

use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};

/// One failure opens the circuit for 10 minutes (on the injected clock:
/// nothing in these tests moves it unless it says so).
const ONE_FAILURE_OPENS_FOR_10_MIN: [(&str, &str); 3] = [
    ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1"),
    ("HOOKD_CIRCUIT__COOLDOWN_INITIAL", "10m"),
    ("HOOKD_CIRCUIT__COOLDOWN_MAX", "1h"),
];

/// An endpoint whose receiver answered 500 to one event, so its circuit is
/// open: (app, partner key, receiver, endpoint id, that event).
async fn an_open_circuit(backend: Backend) -> (TestApp, String, Receiver, String, String) {
    let app = spawn_app_with(backend, &ONE_FAILURE_OPENS_FOR_10_MIN).await;
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(500));
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let first = app.publish("a.b", json!({"n": 1})).await;
    receiver.wait_for(1, WAIT).await.expect("the first attempt");
    app.wait_for_state(&first, &endpoint, "failed", WAIT).await;
    (app, key, receiver, endpoint, first)
}

async fn replay(app: &TestApp, key: &str, event: &str) -> Value {
    let (_, page, _) = app
        .request(
            "GET",
            &format!("/v1/deliveries?event_id={event}"),
            key,
            None,
        )
        .await;
    let delivery = page["data"][0]["id"].as_str().expect("the delivery");
    let path = format!("/v1/deliveries/{delivery}/replay");
    let (status, queued, _) = app.request("POST", &path, key, None).await;
    assert_eq!(status, 202, "{queued}");
    queued
}

fn webhook_ids(receiver: &Receiver) -> Vec<String> {
    receiver
        .received()
        .iter()
        .map(|r| r.header("webhook-id").unwrap_or_default().to_string())
        .collect()
}

/// The webhook-id of the `n`th request to reach `receiver`, once it has
/// (within `WAIT`; `why` says what that request is).
async fn nth_webhook_id(receiver: &Receiver, n: usize, why: &str) -> String {
    let got = receiver.wait_for(n, WAIT).await;
    let got = got.unwrap_or_else(|e| panic!("{why}: {e}"));
    got[n - 1]
        .header("webhook-id")
        .unwrap_or_default()
        .to_string()
}

/// An open circuit with a second event held behind it, and the first
/// event replayed while the receiver answers 200 again: (app, receiver,
/// the first event, the held one, what the replay answered).
async fn replayed_through_an_open_circuit(
    backend: Backend,
) -> (TestApp, Receiver, String, String, Value) {
    let (app, key, receiver, _, first) = an_open_circuit(backend).await;
    let held = app.publish("a.b", json!({"n": 2})).await;
    receiver.stays_at(1).await;
    receiver.set_default(Reply::status(200));
    let queued = replay(&app, &key, &first).await;
    (app, receiver, first, held, queued)
}

#[both_backends]
async fn a_replay_goes_at_once_through_an_open_circuit(backend: Backend) {
    let (_app, receiver, first, _, queued) = replayed_through_an_open_circuit(backend).await;
    assert_eq!(queued["sends"], "now", "{queued}");
    assert!(queued.get("waiting_for").is_none(), "{queued}");
    let why = "the replay goes 10 minutes before the cool-down ends";
    assert_eq!(nth_webhook_id(&receiver, 2, why).await, first);
}

#[both_backends]
async fn a_replay_answered_well_closes_the_circuit_and_releases_what_waited_behind_it(
    backend: Backend,
) {
    let (_app, receiver, _, held, _) = replayed_through_an_open_circuit(backend).await;
    let why = "the replay closed the circuit: what waited behind it goes now";
    assert_eq!(nth_webhook_id(&receiver, 3, why).await, held);
}

#[both_backends]
async fn a_failed_replay_reopens_the_circuit_for_twice_the_cool_down(backend: Backend) {
    let (app, key, receiver, endpoint, first) = an_open_circuit(backend).await;
    let held = app.publish("a.b", json!({"n": 2})).await;
    replay(&app, &key, &first).await;
    receiver.wait_for(2, WAIT).await.expect("the replay goes");
    receiver.stays_at(2).await;

    receiver.set_default(Reply::status(200));
    app.advance(Duration::from_secs(11 * 60));
    receiver.stays_at(2).await;
    app.advance(Duration::from_secs(10 * 60));
    let sent = wait_until(WAIT, || async {
        webhook_ids(&receiver).contains(&held).then_some(())
    })
    .await;
    assert!(
        sent.is_some(),
        "after 20 minutes the probe goes, and the held delivery with it or after it: {:?}",
        webhook_ids(&receiver)
    );
    app.wait_for_state(&held, &endpoint, "delivered", WAIT)
        .await;
}

/// An open circuit whose endpoint the partner disabled, its receiver
/// answering 200 again, and the first event replayed: (app, partner key,
/// receiver, endpoint, first event, what the replay answered).
async fn replayed_to_a_disabled_endpoint(
    backend: Backend,
) -> (TestApp, String, Receiver, String, String, Value) {
    let (app, key, receiver, endpoint, first) = an_open_circuit(backend).await;
    let disable = format!("/v1/endpoints/{endpoint}/disable");
    let (status, body, _) = app.request("POST", &disable, &key, None).await;
    assert_eq!(status, 200, "{body}");
    receiver.set_default(Reply::status(200));
    let queued = replay(&app, &key, &first).await;
    (app, key, receiver, endpoint, first, queued)
}

#[both_backends]
async fn a_replay_to_a_disabled_endpoint_says_it_waits_until_the_endpoint_is_enabled(
    backend: Backend,
) {
    let (_app, _key, receiver, endpoint, _, queued) =
        replayed_to_a_disabled_endpoint(backend).await;
    assert_eq!(queued["sends"], "when-enabled", "{queued}");
    let why = queued["waiting_for"].as_str().expect("what it waits for");
    assert!(
        why.contains(&format!("/v1/endpoints/{endpoint}/enable")),
        "{why}"
    );
    receiver.stays_at(1).await;
}

#[both_backends]
async fn a_replay_waiting_for_a_disabled_endpoint_goes_once_it_is_enabled(backend: Backend) {
    let (app, key, receiver, endpoint, first, _) = replayed_to_a_disabled_endpoint(backend).await;
    receiver.stays_at(1).await;
    let enable = format!("/v1/endpoints/{endpoint}/enable");
    let (status, body, _) = app.request("POST", &enable, &key, None).await;
    assert_eq!(status, 200, "{body}");
    let replayed = wait_until(WAIT, || async {
        let attempts = app.attempts(&first, &endpoint).await;
        attempts.iter().any(|a| a.trigger == "manual").then_some(())
    })
    .await;
    assert!(replayed.is_some(), "enabled, the replay goes");
}
