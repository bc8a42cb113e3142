//! A 4xx other than 408, 410, 425 and 429 is a `client_error`, a persistent
//! receiver error: recorded apart from a 5xx, retried on the whole schedule
//! (its `Retry-After` ignored) within the window, then dead; shown by the
//! API and found by the operator's category filter.

use std::time::Duration;

use serde_json::{Value, json};

use super::jitterless_endpoint;
use crate::harness::{TestApp, answer::expect_status, receiver::Receiver};
use hookd_test_macros::both_backends;

/// The delays of the default schedule after the first attempt, in seconds.
const RETRIES: [u64; 9] = [5, 300, 1800, 7200, 18000, 36000, 43200, 50400, 57600];

/// A receiver that always answers `status`, asking (in vain) to come back
/// in an hour, behind a new endpoint of `app`: (receiver, endpoint).
async fn refusing(app: &TestApp, status: u16) -> (Receiver, String) {
    use crate::harness::receiver::Reply;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Status {
        code: status,
        headers: vec![("retry-after".into(), "3600".into())],
        body: br#"{"error":"refused"}"#.to_vec(),
    });
    // `a.b` only: the others' `endpoint.*` notices go elsewhere.
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 8)
        .await;
    (receiver, endpoint)
}

#[both_backends]
async fn a_400_401_404_and_422_are_client_errors_retried_on_the_whole_schedule_then_dead(
    backend: crate::harness::Backend,
) {
    let (app, _spare, _) =
        jitterless_endpoint(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100")]).await;
    let mut refusals = Vec::new();
    for status in [400u16, 401, 404, 422] {
        let (receiver, endpoint) = refusing(&app, status).await;
        refusals.push((status, receiver, endpoint));
    }
    let event = app.publish("a.b", json!({})).await;
    for (i, step) in RETRIES.iter().enumerate() {
        for (_, _, endpoint) in &refusals {
            app.attempts_when(&event, endpoint, i + 1).await;
        }
        app.advance(Duration::from_secs(*step));
    }
    for (status, receiver, endpoint) in &refusals {
        let made = app
            .wait_for_state(&event, endpoint, "dead", crate::harness::WAIT)
            .await;
        assert_eq!(made, 10, "{status}: ten attempts, then dead");
        assert_eq!(receiver.count(), 10, "{status}: each attempt was sent");
        let attempts = app.attempts(&event, endpoint).await;
        for a in &attempts {
            assert_eq!(a.status_code, Some(i32::from(*status)));
            assert_eq!(
                a.error_category.as_deref(),
                Some("client_error"),
                "{status} is a persistent receiver error, not an http_status"
            );
        }
        let gaps: Vec<u64> = attempts
            .windows(2)
            .map(|w| ((w[1].started_at - w[0].started_at) / 1000) as u64)
            .collect();
        assert_eq!(
            gaps, RETRIES,
            "{status}: retried on the schedule, its Retry-After of an hour ignored"
        );
        for w in attempts.windows(2) {
            assert_eq!(
                w[0].next_attempt_at,
                Some(w[1].started_at),
                "{status}: each attempt keeps the retry it scheduled"
            );
        }
        assert_eq!(
            attempts.last().and_then(|a| a.next_attempt_at),
            None,
            "{status}: the last attempt scheduled nothing"
        );
    }

    // The operator's search finds them by their category; the partner API
    // shows it on each attempt.
    let operator = app.operator_key().await;
    let found = expect_status(
        &app.request(
            "GET",
            "/v1/admin/deliveries?category=client_error&state=dead",
            &operator,
            None,
        )
        .await,
        200,
    );
    let found: Vec<&str> = found["data"]
        .as_array()
        .expect("a page")
        .iter()
        .filter_map(|d| d["endpoint_id"].as_str())
        .collect();
    for (status, _, endpoint) in &refusals {
        assert!(
            found.contains(&endpoint.as_str()),
            "{status}: the delivery is found by category: {found:?}"
        );
    }
    let (_, _, endpoint) = &refusals[0];
    let id = app.delivery_row(&event, endpoint).await.id;
    let detail = expect_status(
        &app.request(
            "GET",
            &format!("/v1/deliveries/{id}"),
            &app.partner_key().await,
            None,
        )
        .await,
        200,
    );
    let categories: Vec<&Value> = detail["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .map(|a| &a["error_category"])
        .collect();
    assert!(
        categories.iter().all(|c| *c == "client_error"),
        "{categories:?}"
    );
}

#[both_backends]
async fn the_limits_publish_how_a_client_error_is_retried(app: TestApp) {
    let limits = expect_status(
        &app.request("GET", "/v1/limits", &app.partner_key().await, None)
            .await,
        200,
    );
    assert_eq!(
        limits["client_error"],
        json!({"other_4xx": [408, 410, 425, 429], "retries": "schedule",
               "max_attempts": 10, "honours_retry_after": false}),
        "{limits}"
    );
    assert_eq!(limits["max_delivery_age_seconds"], json!(72 * 3600));
    assert_eq!(limits["delivery_window_from"], json!("event_created"));
}
