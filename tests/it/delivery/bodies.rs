//! The receiver's response body: read up to `delivery.max_response_bytes`
//! (64 KiB) and no further, and kept as an excerpt of at most 1 KiB with
//! credentials redacted.

use super::{assert_ended_within, first_attempt_against};
use crate::harness::{Backend, WAIT, receiver::Reply, spawn_app};
use hookd_test_macros::both_backends;

/// A 400 whose body opens with a webhook secret and runs on for 5000 bytes:
/// the excerpt stored with its attempt.
async fn excerpt_of_a_long_body_with_a_secret(backend: Backend) -> String {
    let app = spawn_app(backend).await;
    let body = format!(
        "error: token whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw rejected {}",
        "x".repeat(5000)
    );
    let (_, _, _, attempt) = first_attempt_against(&app, Reply::with_body(400, body)).await;
    attempt.response_excerpt.expect("an excerpt")
}

#[both_backends]
async fn a_response_excerpt_is_at_most_1_kib(backend: Backend) {
    let excerpt = excerpt_of_a_long_body_with_a_secret(backend).await;
    assert!(excerpt.len() <= 1024, "excerpt of {} bytes", excerpt.len());
    assert!(
        excerpt.len() >= 512,
        "the excerpt keeps the start of a long body, not {} bytes",
        excerpt.len()
    );
}

#[both_backends]
async fn a_response_excerpt_is_redacted(backend: Backend) {
    let excerpt = excerpt_of_a_long_body_with_a_secret(backend).await;
    assert!(
        excerpt.starts_with("error: token [redacted] rejected"),
        "{excerpt:.80}"
    );
}

#[both_backends]
async fn a_response_body_is_read_only_up_to_the_cap(app: TestApp) {
    // A 200 that announces 100 MiB and sends 256 KiB of it, then nothing:
    // a client reading past the 64 KiB cap would wait for the rest until
    // the request timeout and record a timeout instead of the answer.
    let announces_more = Reply::Status {
        code: 200,
        headers: vec![("Content-Length".into(), (100 << 20).to_string())],
        body: vec![b'x'; 256 << 10],
    };
    let (_receiver, endpoint, event, a) = first_attempt_against(&app, announces_more).await;
    assert_eq!(
        (a.status_code, a.error_category.as_deref()),
        (Some(200), None),
        "a 2xx is a success however long its body (read past the cap, it times out): {:?}",
        a.error_detail
    );
    assert_ended_within(
        &a,
        1000,
        "the attempt ends at the cap, not at the 2 s request timeout",
    );
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    let excerpt = a.response_excerpt.clone().unwrap_or_default();
    assert!(
        excerpt.len() <= 1024 && excerpt.starts_with("xxxx"),
        "at most 1 KiB of the body is stored: {} bytes",
        excerpt.len()
    );
}
