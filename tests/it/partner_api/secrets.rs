//! Rotating an endpoint's secret without downtime: during the overlap each
//! delivery is signed with both secrets (newest first), `expire-previous`
//! ends the overlap early, and an overlap also ends by itself.

use std::time::Duration;

use hookd::{
    domain::{clock::Clock as _, event::format_time},
    secret::Secret,
    signing,
};
use serde_json::{Value, json};

use super::{
    Body::*, Caller::*, Callers, Case, endpoint_at_receiver, expect_problems, expect_status,
};
use crate::harness::{
    TestApp, WAIT,
    receiver::{Received, Receiver},
    rows::rows_where,
    signatures::{signature_entries, timestamp, verifies},
    until_none,
};
use hookd_test_macros::both_backends;

/// Rotates `endpoint`'s secret (with `body`, if any); returns the 200's body and the new secret.
async fn rotate(app: &TestApp, key: &str, endpoint: &str, body: Option<&Value>) -> (Value, Secret) {
    let path = format!("/v1/endpoints/{endpoint}/secret/rotate");
    let rotated = expect_status(&app.request("POST", &path, key, body).await, 200);
    let secret = Secret::parse(rotated["secret"].as_str().expect("the new secret"))
        .expect("a whsec_ secret");
    (rotated, secret)
}

/// An endpoint of the test partner at a receiver, its secret rotated (the
/// default overlap) a second after it was made: secrets are ordered by
/// creation time.
struct Rotated {
    key: String,
    receiver: Receiver,
    endpoint: String,
    old: Secret,
    new: Secret,
}

/// Makes a `Rotated` endpoint.
async fn rotated_a_second_later(app: &TestApp) -> Rotated {
    let key = app.partner_key().await;
    let (receiver, endpoint, old) = endpoint_at_receiver(app, &key).await;
    app.advance(Duration::from_secs(1));
    let (_, new) = rotate(app, &key, &endpoint, None).await;
    Rotated {
        key,
        receiver,
        endpoint,
        old,
        new,
    }
}

/// Publishes the `n`th event (`a.b`) and returns the request `receiver` got
/// for it, checked to be that event's: (event id, request). Returns once the
/// delivery is recorded: a clock step taken while its record is on the way
/// would end its lease, and it would be claimed and sent again.
async fn publish_and_receive(app: &TestApp, receiver: &Receiver, n: usize) -> (String, Received) {
    let event = app.publish("a.b", json!({"n": n})).await;
    let got = receiver.wait_for(n, WAIT).await;
    let r = got.unwrap_or_else(|e| panic!("event {n} did not arrive: {e}"))[n - 1].clone();
    assert_eq!(r.header("webhook-id"), Some(event.as_str()));
    let sending = "SELECT COUNT(*) AS n FROM delivery WHERE state <> 'delivered'";
    let recorded = until_none(app, sending, WAIT).await;
    assert!(recorded, "event {n}'s delivery is recorded");
    (event, r)
}

/// At `now_ms`, `r` verifies with the `new` secret and no longer with the
/// `old` one, which `when` (the overlap has ended).
fn assert_overlap_ended(old: &Secret, new: &Secret, r: &Received, now_ms: i64, when: &str) {
    assert!(verifies(new, r, now_ms), "the new secret verifies");
    assert!(
        !verifies(old, r, now_ms),
        "{when} the old secret must no longer verify: {:?}",
        signature_entries(r)
    );
}

#[both_backends]
async fn rotating_makes_a_new_secret_whose_overlap_is_a_day_by_default(app: TestApp) {
    let key = app.partner_key().await;
    let (_receiver, endpoint, old) = endpoint_at_receiver(&app, &key).await;
    let (rotated, new) = rotate(&app, &key, &endpoint, None).await;
    assert_ne!(new.key(), old.key(), "rotation makes a new secret");
    assert_eq!(
        rotated["previous_expires_at"],
        format_time(app.clock.now_ms() + 86_400_000),
        "the default overlap is a day"
    );
}

#[both_backends]
async fn during_the_overlap_a_receiver_with_either_secret_verifies_and_the_newest_signs_first(
    app: TestApp,
) {
    let Rotated {
        receiver, old, new, ..
    } = rotated_a_second_later(&app).await;
    let (event, r) = publish_and_receive(&app, &receiver, 1).await;
    let entries = signature_entries(&r);
    assert_eq!(
        entries.len(),
        2,
        "both secrets sign during the overlap: {entries:?}"
    );
    assert!(entries.iter().all(|e| e.starts_with("v1,")), "{entries:?}");
    let now = app.clock.now_ms();
    assert!(
        verifies(&old, &r, now),
        "a receiver with only the old secret still verifies"
    );
    assert!(
        verifies(&new, &r, now),
        "a receiver with the new secret verifies"
    );
    assert_eq!(
        entries[0],
        signing::sign(&new, &event, timestamp(&r), &r.body),
        "the newest secret signs first"
    );
}

#[both_backends]
async fn after_expire_previous_the_old_secret_no_longer_verifies(app: TestApp) {
    let Rotated {
        key,
        receiver,
        endpoint,
        old,
        new,
    } = rotated_a_second_later(&app).await;
    let path = format!("/v1/endpoints/{endpoint}/secret/expire-previous");
    let expired = expect_status(&app.request("POST", &path, &key, None).await, 200);
    assert_eq!(
        expired["expired"], 1,
        "one previous secret ended: {expired}"
    );

    let (_, r) = publish_and_receive(&app, &receiver, 1).await;
    let now = app.clock.now_ms();
    assert_overlap_ended(&old, &new, &r, now, "after expire-previous");
    assert_eq!(signature_entries(&r).len(), 1);
}

#[both_backends]
async fn an_overlap_ends_by_itself_when_its_time_is_up(app: TestApp) {
    let key = app.partner_key().await;
    let (receiver, endpoint, old) = endpoint_at_receiver(&app, &key).await;
    let (rotated, new) = rotate(&app, &key, &endpoint, Some(&json!({"overlap_seconds": 60}))).await;
    assert_eq!(
        rotated["previous_expires_at"],
        format_time(app.clock.now_ms() + 60_000)
    );

    let (_, r) = publish_and_receive(&app, &receiver, 1).await;
    let now = app.clock.now_ms();
    assert!(
        verifies(&old, &r, now) && verifies(&new, &r, now),
        "within the overlap both verify"
    );

    app.advance(Duration::from_secs(120));
    let (_, r) = publish_and_receive(&app, &receiver, 2).await;
    let now = app.clock.now_ms();
    assert_overlap_ended(&old, &new, &r, now, "60 s after a 60 s overlap");
}

#[both_backends]
async fn a_refused_rotation_makes_no_secret(app: TestApp) {
    let callers = Callers::of(&app).await;
    let (_receiver, endpoint, _) = endpoint_at_receiver(&app, &callers.partner).await;
    let path = format!("/v1/endpoints/{endpoint}/secret/rotate");
    let p = path.as_str();
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("POST", p, Partner, Json(json!({"overlap_seconds": 604_801})),         422, "out-of-range",  Some("overlap_seconds")),
            ("POST", p, Partner, Json(json!({"overlap_seconds": 60, "colour": 1})), 422, "unknown-field", Some("colour")),
            ("POST", p, Stranger, Empty,                                            404, "not-found",     None),
            ("POST", "/v1/endpoints/ep_nope/secret/rotate", Partner, Empty,         404, "not-found",     None),
        ];
    expect_problems(&app, &callers, &cases).await;
    let of_endpoint = format!("endpoint_id = '{endpoint}'");
    let secrets = rows_where(&app, "endpoint_secret", &of_endpoint).await;
    assert_eq!(secrets, 1, "a refused rotation makes no secret");
}
