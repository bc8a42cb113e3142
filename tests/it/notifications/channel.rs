//! The partner's notification channel: set and read back (the URL's secret
//! shown once), checked, removed with its endpoint; an operator sets it for
//! any partner, a partner key only for its own.

use serde_json::{Value, json};

use super::{Scene, hookd_with_every_channel, set_channel};
use crate::harness::{Backend, TestApp, receiver::Receiver};
use hookd_test_macros::both_backends;

/// The scene with the partner's notification URL set (to a receiver's,
/// with a trailing slash), then its email: the scene, the URL, and what
/// the two answers were.
async fn with_a_channel(backend: Backend) -> (Scene, String, Value, Value) {
    let scene = hookd_with_every_channel(backend).await;
    let url = format!("{}/", Receiver::start().await.url());
    let key = &scene.partner_key;
    let first = set_channel(&scene.app, key, json!({"notification_url": url})).await;
    let again = set_channel(
        &scene.app,
        key,
        json!({"notification_email": "a@b.example"}),
    )
    .await;
    (scene, url, first, again)
}

/// `PATCH path` with `key` and `body`: status and answer.
async fn patch(app: &TestApp, path: &str, key: &str, body: Value) -> (u16, Value) {
    let (status, answer, _) = app.request("PATCH", path, key, Some(&body)).await;
    (status, answer)
}

/// The partner as `GET /v1/partner` shows it to its own key.
async fn read_partner(scene: &Scene) -> Value {
    let (app, key) = (&scene.app, &scene.partner_key);
    let (status, read, _) = app.request("GET", "/v1/partner", key, None).await;
    assert_eq!(status, 200, "{read}");
    read
}

/// The scene with a channel set (as `with_a_channel`), and the id of the
/// partner's notification endpoint, as `GET /v1/partner` shows it.
async fn with_a_notification_endpoint(backend: Backend) -> (Scene, String) {
    let (scene, _, _, _) = with_a_channel(backend).await;
    let read = read_partner(&scene).await;
    let id = read["notification_endpoint_id"].as_str();
    let id = id
        .unwrap_or_else(|| panic!("no notification endpoint: {read}"))
        .to_string();
    (scene, id)
}

#[both_backends]
async fn a_notification_urls_secret_is_shown_once(backend: Backend) {
    let (_scene, _url, first, again) = with_a_channel(backend).await;
    assert!(
        first["notification_secret"]
            .as_str()
            .is_some_and(|s| s.starts_with("whsec_"))
    );
    assert!(
        again.get("notification_secret").is_none(),
        "the secret is shown once: {again}"
    );
}

#[both_backends]
async fn the_notification_channel_is_read_back_as_set(backend: Backend) {
    let (scene, url, _, _) = with_a_channel(backend).await;
    let read = read_partner(&scene).await;
    assert_eq!(read["notification_email"], "a@b.example");
    assert_eq!(read["notification_url"], url.as_str());
    assert_eq!(read["id"], scene.app.partner_id.as_str());
    assert!(read["notification_endpoint_id"].is_string(), "{read}");
}

#[both_backends]
async fn the_notification_endpoint_cannot_be_changed_as_an_endpoint(backend: Backend) {
    let (scene, endpoint_id) = with_a_notification_endpoint(backend).await;
    let (app, key) = (&scene.app, &scene.partner_key);
    let path = format!("/v1/endpoints/{endpoint_id}");
    let (status, answer) = patch(app, &path, key, json!({"description": "x"})).await;
    assert_eq!(status, 409, "{answer}");
}

#[both_backends]
async fn a_notification_email_or_url_that_is_not_one_is_refused(backend: Backend) {
    let Scene {
        app, partner_key, ..
    } = hookd_with_every_channel(backend).await;
    let email = json!({"notification_email": "not an address"});
    let (status, bad_email) = patch(&app, "/v1/partner", &partner_key, email).await;
    assert_eq!(status, 422, "{bad_email}");
    assert_eq!(bad_email["field"], "notification_email");
    let url = json!({"notification_url": "http://10.0.0.1/x"});
    let (status, bad_url) = patch(&app, "/v1/partner", &partner_key, url).await;
    assert_eq!(status, 422, "{bad_url}");
}

#[both_backends]
async fn removing_the_notification_channel_deletes_its_endpoint(backend: Backend) {
    let (scene, endpoint_id) = with_a_notification_endpoint(backend).await;
    let (app, key) = (&scene.app, &scene.partner_key);
    let count = format!("SELECT COUNT(*) AS n FROM endpoint WHERE id = '{endpoint_id}'");
    assert_eq!(app.count(&count).await, 1, "its endpoint exists");
    let removed = set_channel(
        app,
        key,
        json!({"notification_email": null, "notification_url": null}),
    )
    .await;
    assert!(
        removed["notification_email"].is_null() && removed["notification_url"].is_null(),
        "{removed}"
    );
    assert_eq!(app.count(&count).await, 0);
}

#[both_backends]
async fn an_operator_sets_a_partners_channel_and_a_partner_key_may_not(backend: Backend) {
    let Scene {
        app, partner_key, ..
    } = hookd_with_every_channel(backend).await;
    let operator = app.operator_key().await;
    let path = format!("/v1/admin/partners/{}", app.partner_id);
    let email = json!({"notification_email": "x@y.example"});
    let (status, by_operator) = patch(&app, &path, &operator, email).await;
    assert_eq!(status, 200, "{by_operator}");
    assert_eq!(
        app.request("GET", &path, &operator, None).await.1["notification_email"],
        "x@y.example"
    );
    assert_eq!(patch(&app, &path, &partner_key, json!({})).await.0, 403);
}

#[both_backends]
async fn the_operators_own_partner_is_not_listed_as_a_tenant(backend: Backend) {
    let Scene { app, .. } = hookd_with_every_channel(backend).await;
    let operator = app.operator_key().await;
    let (_, listed, _) = app
        .request("GET", "/v1/admin/partners", &operator, None)
        .await;
    assert!(
        listed["data"].as_array().is_some_and(|d| !d.is_empty()),
        "the test's partner is listed: {listed}"
    );
    assert!(
        !listed.to_string().contains("hookd:operator"),
        "the operator's own partner is not a tenant: {listed}"
    );
}
