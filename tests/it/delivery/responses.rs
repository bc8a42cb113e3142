//! What the receiver's status does to a delivery: a server error is retried
//! as an `http_status` failure, a redirect is a `redirect` failure and never
//! followed, and 410 Gone disables the endpoint and tells the partner.

use std::time::Duration;

use hookd::store::endpoints::{self, EndpointStatus};
use serde_json::json;

use super::first_attempt_against;
use crate::harness::{
    Backend, TestApp, WAIT,
    outcome::{assert_mentions, assert_state_after},
    receiver::{Receiver, Reply},
    spawn_app,
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_server_error_is_retried_as_an_http_status_failure(app: TestApp) {
    let receiver = Receiver::start().await;
    receiver.script([Reply::status(503)]);
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    let attempts = app.attempts(&event, &endpoint).await;
    assert_eq!(attempts[0].status_code, Some(503));
    assert_eq!(attempts[0].error_category.as_deref(), Some("http_status"));
    // A second later than the first retry's 5 s and its 20 % jitter.
    app.advance(Duration::from_secs(7));
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "delivered",
        2,
        "delivered by the retry",
    )
    .await;
}

#[both_backends]
async fn redirects_are_never_followed(app: TestApp) {
    let target = Receiver::start().await;
    let redirect = Reply::Status {
        code: 302,
        headers: vec![("location".into(), target.url())],
        body: vec![],
    };
    let (_redirecting, _, _, attempt) = first_attempt_against(&app, redirect).await;
    assert_eq!(attempt.error_category.as_deref(), Some("redirect"));
    assert_mentions(
        attempt.error_detail.as_deref(),
        &target.url(),
        "the Location is shown",
    );
    target.stays_at(0).await;
}

/// An endpoint answering 410 (all types) beside another that subscribes to
/// `endpoint.*`, after one event went to the first.
struct Gone {
    app: TestApp,
    gone: Receiver,
    other: Receiver,
    gone_id: String,
    event: String,
}

async fn gone(backend: Backend) -> Gone {
    let app = spawn_app(backend).await;
    let gone = Receiver::start().await;
    gone.set_default(Reply::status(410));
    let other = Receiver::start().await;
    let (gone_id, _) = app
        .endpoint_for(&app.partner_id, &gone.url(), &["a.b"], 8)
        .await;
    app.endpoint_for(&app.partner_id, &other.url(), &["endpoint.*"], 8)
        .await;
    let event = app.publish("a.b", json!({})).await;
    gone.wait_for(1, WAIT).await.expect("the attempt");
    Gone {
        app,
        gone,
        other,
        gone_id,
        event,
    }
}

#[both_backends]
async fn gone_disables_the_endpoint_with_the_status_as_its_reason(backend: Backend) {
    let Gone {
        app,
        gone_id,
        event,
        ..
    } = gone(backend).await;
    // Held by the endpoint the 410 disabled: paused, not waiting.
    app.wait_for_state(&event, &gone_id, "paused", WAIT).await;
    let disabled = crate::harness::wait_until(WAIT, || async {
        let e = endpoints::find_for_delivery(app.db(), &gone_id)
            .await
            .expect("query")
            .expect("endpoint");
        (e.status == EndpointStatus::Disabled).then_some(e)
    })
    .await
    .expect("the endpoint is disabled after 410");
    assert_mentions(
        disabled.disabled_reason.as_deref(),
        "410",
        "the reason names the status",
    );
}

#[both_backends]
async fn gone_is_told_to_the_partner_on_another_endpoint(backend: Backend) {
    let Gone { other, gone_id, .. } = gone(backend).await;
    let notice = other
        .wait_for(1, WAIT)
        .await
        .expect("the partner hears of it on another endpoint");
    let body: serde_json::Value = serde_json::from_slice(&notice[0].body).expect("json");
    assert_eq!(body["type"], "endpoint.disabled");
    assert_eq!(body["data"]["endpoint_id"], gone_id.as_str());
}

#[both_backends]
async fn a_gone_endpoint_is_sent_nothing_more(backend: Backend) {
    let Gone {
        app,
        gone,
        gone_id,
        event,
        ..
    } = gone(backend).await;
    app.wait_for_state(&event, &gone_id, "paused", WAIT).await;
    app.publish("a.b", json!({})).await;
    app.advance(Duration::from_secs(600));
    gone.stays_at(1).await;
}
