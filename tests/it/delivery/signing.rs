//! What a delivery looks like on the wire: Standard Webhooks headers, a
//! signature over the exact bytes sent, the same message on every retry,
//! signed anew each time.

use std::time::Duration;

use hookd::{domain::clock::Clock as _, secret::Secret};
use serde_json::json;

use super::usage;
use crate::harness::{
    Backend, TestApp, WAIT,
    outcome::assert_state_after,
    receiver::{Received, Receiver, Reply},
    spawn_app,
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_delivery_is_signed_over_the_exact_bytes_sent(app: TestApp) {
    let receiver = Receiver::start().await;
    let (_, secret) = app.endpoint(&format!("{}/hooks", receiver.url())).await;
    let event = app.publish("usage.finalized", usage(9182)).await;

    let got = receiver.wait_for(1, WAIT).await.expect("the event arrives");
    let r = &got[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/hooks");
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("webhook-id"),
        Some(event.as_str()),
        "webhook-id is the event id"
    );
    verify(&app, &secret, &event, r).expect("the signature verifies with the endpoint's secret");
    let envelope: serde_json::Value = serde_json::from_slice(&r.body).expect("a JSON envelope");
    assert_eq!(envelope["event_id"], event.as_str());
    assert_eq!(envelope["partner_id"], app.partner_id.as_str());
    assert_eq!(envelope["data"]["final_cost"], "1.274800");
}

#[both_backends]
async fn a_delivered_attempt_records_the_dialled_address(app: TestApp) {
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "delivered",
        1,
        "a 200 at the first attempt",
    )
    .await;
    let attempts = app.attempts(&event, &endpoint).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].status_code, Some(200));
    assert_eq!(attempts[0].trigger, "scheduled");
    assert_eq!(
        attempts[0].remote_addr.as_deref(),
        Some(receiver.addr().to_string().as_str()),
        "the dialled address is recorded"
    );
}

/// A delivery refused once (503) and retried: the app, the endpoint's
/// secret, the event and the two requests.
async fn sent_twice(backend: Backend) -> (TestApp, Secret, String, Vec<Received>) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    receiver.script([Reply::status(503)]);
    let (endpoint, secret) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({"n": 1})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    // A second later than the first retry's 5 s and its 20 % jitter.
    app.advance(Duration::from_secs(7));
    let got = receiver.wait_for(2, WAIT).await.expect("the retry");
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    (app, secret, event, got)
}

#[both_backends]
async fn a_retry_sends_the_same_id_and_body(backend: Backend) {
    let (_app, _, event, got) = sent_twice(backend).await;
    assert_eq!(
        got[0].body, got[1].body,
        "the body is byte-identical across retries"
    );
    assert_eq!(got[0].header("webhook-id"), Some(event.as_str()));
    assert_eq!(got[1].header("webhook-id"), Some(event.as_str()));
}

#[both_backends]
async fn each_attempt_is_signed_anew(backend: Backend) {
    let (app, secret, event, got) = sent_twice(backend).await;
    assert_ne!(
        got[0].header("webhook-timestamp"),
        got[1].header("webhook-timestamp"),
        "the retry carries its own time"
    );
    assert_ne!(
        got[0].header("webhook-signature"),
        got[1].header("webhook-signature"),
        "and its own signature"
    );
    verify(&app, &secret, &event, &got[1]).expect("the retry's signature verifies");
}

/// Verifies `r` as a receiver would, at the manual clock's now.
fn verify(
    app: &TestApp,
    secret: &Secret,
    event: &str,
    r: &Received,
) -> Result<(), hookd::signing::VerifyError> {
    hookd::signing::verify(
        secret,
        event,
        r.header("webhook-timestamp").unwrap_or_default(),
        r.header("webhook-signature").unwrap_or_default(),
        &r.body,
        app.clock.now_ms() / 1000,
        300,
    )
}
