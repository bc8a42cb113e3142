//! Attempt records say what the receiver did: an answer with an oversized head
//! is the receiver's `http_status` failure, not a `connect` one, and response
//! excerpts keep no credentials.

use std::time::Duration;

use hookd::store::entity::attempt;
use serde_json::json;

use crate::harness::{
    Backend, TestApp, WAIT,
    outcome::assert_state_after,
    receiver::{Receiver, Reply},
    spawn_app,
};
use hookd_test_macros::both_backends;

/// A `code` answer whose head carries `headers`.
fn with_headers(code: u16, headers: Vec<(String, String)>) -> Reply {
    Reply::Status {
        code,
        headers,
        body: Vec::new(),
    }
}

fn assert_head_too_large(a: &attempt::Model, what: &str) {
    assert_eq!(
        a.error_category.as_deref(),
        Some("http_status"),
        "{what}: the receiver answered, so the failure is not `connect`"
    );
    assert_eq!(
        a.error_detail.as_deref(),
        Some("response head too large"),
        "{what}"
    );
    assert_eq!(a.status_code, None, "{what}: no status could be read");
    assert_eq!(a.response_excerpt, None, "{what}: no body was read");
}

/// A receiver whose first answer has 120 headers, its second one header
/// of 160 KiB, and its third is a plain 200; an event to it, its first
/// attempt made: (app, receiver, event, endpoint).
async fn oversized_heads(backend: Backend) -> (TestApp, Receiver, String, String) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    let many: Vec<(String, String)> = (0..120)
        .map(|i| (format!("X-Filler-{i}"), "x".to_string()))
        .collect();
    let huge = vec![("X-Huge".to_string(), "y".repeat(160 * 1024))];
    receiver.script([
        with_headers(200, many),
        with_headers(200, huge),
        Reply::status(200),
    ]);
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({"n": 1})).await;
    receiver.wait_for(1, WAIT).await.expect("the first attempt");
    (app, receiver, event, endpoint)
}

#[both_backends]
async fn an_answer_with_too_many_headers_is_recorded_as_the_receivers_failure(backend: Backend) {
    let (app, _receiver, event, endpoint) = oversized_heads(backend).await;
    let attempts = app.attempts_when(&event, &endpoint, 1).await;
    assert_head_too_large(&attempts[0], "120 headers");
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    let d = app.delivery_row(&event, &endpoint).await;
    assert_eq!(d.last_error_category.as_deref(), Some("http_status"));
    assert_eq!(d.last_status, None, "the delivery shows no status either");
}

#[both_backends]
async fn an_answer_with_one_huge_header_is_recorded_as_the_receivers_failure(backend: Backend) {
    let (app, _receiver, event, endpoint) = oversized_heads(backend).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    app.advance(Duration::from_secs(7));
    let attempts = app.attempts_when(&event, &endpoint, 2).await;
    assert_head_too_large(&attempts[1], "a 160 KiB header");
}

#[both_backends]
async fn an_oversized_head_is_retried_on_the_schedule_like_a_5xx(backend: Backend) {
    let (app, receiver, event, endpoint) = oversized_heads(backend).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    receiver.stays_at(1).await;
    app.advance(Duration::from_secs(7));
    app.attempts_when(&event, &endpoint, 2).await;
    app.advance(Duration::from_secs(400));
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "delivered",
        3,
        "an oversized head is retried on the schedule like a 5xx",
    )
    .await;
}

#[both_backends]
async fn a_server_error_excerpt_keeps_no_credentials(app: TestApp) {
    let receiver = Receiver::start().await;
    receiver.script([Reply::with_body(
        500,
        r#"password=hunter2 token=abcdefghijklmnop {"secret":"s3"}"#,
    )]);
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({"n": 1})).await;

    let attempts = app.attempts_when(&event, &endpoint, 1).await;
    assert_eq!(attempts[0].status_code, Some(500));
    assert_eq!(attempts[0].error_category.as_deref(), Some("http_status"));
    let excerpt = attempts[0]
        .response_excerpt
        .as_deref()
        .expect("an excerpt of the body");
    for leaked in ["hunter2", "abcdefghijklmnop", "s3"] {
        assert!(!excerpt.contains(leaked), "{leaked} leaked: {excerpt}");
    }
    assert_eq!(
        excerpt, r#"password=[redacted] token=[redacted] {"secret":"[redacted]"}"#,
        "the keys stay visible"
    );
}
