//! Attempt records say what the receiver did: an answer with an oversized head
//! is the receiver's `http_status` failure, not a `connect` one, and response
//! excerpts keep no credentials.

use std::time::Duration;

use hookd::store::entity::{attempt, delivery};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::harness::{
    Backend, TestApp,
    receiver::{Receiver, Reply},
    spawn_app,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

async fn attempts_when(
    app: &TestApp,
    event: &str,
    endpoint: &str,
    n: usize,
) -> Vec<attempt::Model> {
    crate::harness::wait_until(WAIT, || async {
        let a = app.attempts(event, endpoint).await;
        (a.len() >= n).then_some(a)
    })
    .await
    .unwrap_or_else(|| panic!("{n} attempts were not recorded"))
}

/// The delivery row of `event` to `endpoint`.
async fn delivery_row(app: &TestApp, event: &str, endpoint: &str) -> delivery::Model {
    delivery::Entity::find()
        .filter(delivery::Column::EventId.eq(event))
        .filter(delivery::Column::EndpointId.eq(endpoint))
        .one(app.db())
        .await
        .expect("the delivery query runs")
        .expect("the delivery exists")
}

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

on_both_backends!(
    an_answer_with_an_oversized_head_is_recorded_as_the_receivers_failure_and_retried,
    |backend: Backend| async move {
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
        let attempts = attempts_when(&app, &event, &endpoint, 1).await;
        assert_head_too_large(&attempts[0], "120 headers");
        app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
        let d = delivery_row(&app, &event, &endpoint).await;
        assert_eq!(d.last_error_category.as_deref(), Some("http_status"));
        assert_eq!(d.last_status, None, "the delivery shows no status either");

        app.advance(Duration::from_secs(7));
        let attempts = attempts_when(&app, &event, &endpoint, 2).await;
        assert_head_too_large(&attempts[1], "a 160 KiB header");

        app.advance(Duration::from_secs(400));
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "delivered", WAIT)
                .await,
            3,
            "an oversized head is retried on the schedule like a 5xx"
        );
    }
);

on_both_backends!(
    a_server_error_excerpt_keeps_no_credentials,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        receiver.script([Reply::with_body(
            500,
            r#"password=hunter2 token=abcdefghijklmnop {"secret":"s3"}"#,
        )]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({"n": 1})).await;

        let attempts = attempts_when(&app, &event, &endpoint, 1).await;
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
);
