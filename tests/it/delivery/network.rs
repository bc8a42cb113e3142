//! Failures without an answer: a receiver that never answers, one that stalls
//! mid-body, one that drops the connection, and a destination the egress
//! policy blocks. Each is a failure of its own category, left to be retried.

use std::time::Duration;

use serde_json::json;

use super::{assert_ended_within, endpoint_on, first_attempt_against};
use crate::harness::{Backend, WAIT, outcome::assert_mentions, receiver::Reply, spawn_app};
use hookd_test_macros::both_backends;

/// Sends one event to a receiver answering `reply` and checks the attempt
/// fails as `category`, cut off by the test's 2 s request timeout (not the
/// receiver's 8 s stall), with the delivery left to be retried.
async fn fails_as(backend: Backend, reply: Reply, category: &str) {
    let app = spawn_app(backend).await;
    let (_receiver, endpoint, event, a) = first_attempt_against(&app, reply.clone()).await;
    assert_eq!(
        a.error_category.as_deref(),
        Some(category),
        "{reply:?}: {:?}",
        a.error_detail
    );
    let cut_off = format!("{reply:?} is cut off by the 2 s request timeout");
    assert_ended_within(&a, 4000, &cut_off);
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
}

#[both_backends]
async fn a_receiver_that_never_answers_times_out(backend: Backend) {
    fails_as(
        backend,
        Reply::StallHeaders(Duration::from_secs(8)),
        "timeout",
    )
    .await;
}

#[both_backends]
async fn a_receiver_that_stalls_mid_body_times_out(backend: Backend) {
    fails_as(backend, Reply::StallBody(Duration::from_secs(8)), "timeout").await;
}

#[both_backends]
async fn a_dropped_connection_is_a_connect_failure(backend: Backend) {
    fails_as(backend, Reply::Drop, "connect").await;
}

#[both_backends]
async fn a_loopback_destination_is_blocked_unless_allowed(backend: Backend) {
    let (app, receiver, endpoint) =
        endpoint_on(backend, &[("HOOKD_EGRESS__ALLOW_CIDRS", "[]")]).await;
    let event = app.publish("a.b", json!({})).await;
    let a = app.attempts_when(&event, &endpoint, 1).await;
    assert_eq!(a[0].error_category.as_deref(), Some("blocked"));
    assert_mentions(
        a[0].error_detail.as_deref(),
        "127.0.0.1",
        "the refusal names the address",
    );
    receiver.stays_at(0).await;
}
