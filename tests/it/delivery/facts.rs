//! What each attempt keeps: the URL it was sent to (as it was then, secret
//! query values redacted), the retry it scheduled, and a redirect's
//! `Location`, redacted and capped; the partner API shows them.

use std::time::Duration;

use serde_json::json;

use super::{first_attempt_against, jitterless_endpoint};
use crate::harness::{
    WAIT, expect_status,
    outcome::assert_state_after,
    receiver::{Receiver, Reply},
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn an_attempt_keeps_the_url_it_went_to_after_the_endpoint_moves(
    backend: crate::harness::Backend,
) {
    let (app, _first_receiver, _) = jitterless_endpoint(backend, &[]).await;
    let old = Receiver::start().await;
    old.set_default(Reply::status(503));
    let new = Receiver::start().await;
    let old_url = format!("{}/in?tenant=7&token=sk_live_51Habc", old.url());
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &old_url, &["a.b"], 8)
        .await;
    let event = app.publish("a.b", json!({})).await;
    app.attempts_when(&event, &endpoint, 1).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;

    let key = app.partner_key().await;
    let moved = json!({"url": format!("{}/hooks?sig=abc123&v=2", new.url())});
    expect_status(
        &app.request(
            "PATCH",
            &format!("/v1/endpoints/{endpoint}"),
            &key,
            Some(&moved),
        )
        .await,
        200,
    );
    app.advance(Duration::from_secs(5));
    assert_state_after(
        &app,
        &event,
        &endpoint,
        "delivered",
        2,
        "the retry went to the new URL",
    )
    .await;

    let attempts = app.attempts(&event, &endpoint).await;
    assert_eq!(
        attempts[0].url.as_deref(),
        Some(format!("{}/in?tenant=7&token=redacted", old.url()).as_str()),
        "the first attempt keeps the old URL, its token redacted"
    );
    assert_eq!(
        attempts[1].url.as_deref(),
        Some(format!("{}/hooks?sig=redacted&v=2", new.url()).as_str())
    );
    assert_eq!(
        attempts[0].next_attempt_at,
        Some(attempts[1].started_at),
        "the failed attempt keeps the retry it scheduled"
    );
    assert_eq!(attempts[1].next_attempt_at, None, "delivered: no retry");

    let id = app.delivery_row(&event, &endpoint).await.id;
    let shown = expect_status(
        &app.request("GET", &format!("/v1/deliveries/{id}"), &key, None)
            .await,
        200,
    );
    let first = &shown["attempts"][0];
    assert_eq!(
        first["url"],
        json!(format!("{}/in?tenant=7&token=redacted", old.url()))
    );
    assert!(first["next_attempt_at"].is_string(), "{first}");
    assert!(shown["attempts"][1]["next_attempt_at"].is_null());
}

#[both_backends]
async fn a_redirects_location_is_kept_redacted_and_capped(app: TestApp) {
    let location = format!(
        "https://elsewhere.example/login?token=sk_live_51Habc&password=hunter2&pad={}",
        "x".repeat(3000)
    );
    let redirect = Reply::Status {
        code: 302,
        headers: vec![("location".into(), location)],
        body: vec![],
    };
    let (_receiver, _, _, attempt) = first_attempt_against(&app, redirect).await;
    let kept = attempt.location.clone().expect("the Location is kept");
    assert!(
        kept.starts_with(
            "https://elsewhere.example/login?token=redacted&password=redacted&pad=xxx"
        ),
        "{kept}"
    );
    assert!(kept.len() <= 1024, "capped: {} bytes", kept.len());
    let detail = attempt.error_detail.clone().unwrap_or_default();
    for secret in ["sk_live", "hunter2"] {
        assert!(!kept.contains(secret), "{secret} in the Location");
        assert!(!detail.contains(secret), "{secret} in the detail: {detail}");
    }
    assert!(
        detail.len() < 1200,
        "the detail is capped with it: {detail}"
    );

    let key = app.partner_key().await;
    let shown = expect_status(
        &app.request(
            "GET",
            &format!("/v1/deliveries/{}", attempt.delivery_id),
            &key,
            None,
        )
        .await,
        200,
    );
    assert_eq!(shown["attempts"][0]["location"], json!(kept));
}
