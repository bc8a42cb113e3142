//! An endpoint over the Partner API: created (showing its secret this once),
//! read, listed, changed, paused, disabled and enabled, deleted; and a
//! callback URL the egress policy refuses is never written.

use std::time::Duration;

use hookd::secret::Secret;
use serde_json::{Value, json};

use super::{
    Body::*, Caller::*, Callers, Case, create_endpoint, endpoint_count, expect_problems,
    expect_problems_writing_nothing, expect_status, get_ok, ids_of,
};
use crate::harness::{
    TestApp, WAIT,
    receiver::Receiver,
    rows::{rows, rows_where},
};
use hookd_test_macros::both_backends;

/// Creates an endpoint with every setting given; returns the 201's body.
async fn billing(app: &TestApp, key: &str, receiver: &Receiver) -> Value {
    let body = json!({"url": format!("{}/hooks", receiver.url()), "description": "billing",
        "event_types": ["usage.*", "balance.updated"], "schema_version": "1",
        "concurrency": 4, "rate_limit": 20});
    expect_status(
        &app.request("POST", "/v1/endpoints", key, Some(&body)).await,
        201,
    )
}

/// Creates an endpoint with `status: paused` and nothing else but its URL.
async fn paused(app: &TestApp, key: &str, receiver: &Receiver) -> Value {
    let body = json!({"url": receiver.url(), "status": "paused"});
    expect_status(
        &app.request("POST", "/v1/endpoints", key, Some(&body)).await,
        201,
    )
}

fn id(endpoint: &Value) -> String {
    endpoint["id"].as_str().expect("an endpoint id").to_string()
}

#[both_backends]
async fn creating_an_endpoint_answers_its_settings_and_its_secret(app: TestApp) {
    let receiver = Receiver::start().await;
    let endpoint = billing(&app, &app.partner_key().await, &receiver).await;
    let secret = endpoint["secret"].as_str().expect("the secret, this once");
    assert!(
        secret.starts_with("whsec_") && Secret::parse(secret).is_ok(),
        "the secret is a whsec_ string: {secret}"
    );
    assert_eq!(endpoint["url"], format!("{}/hooks", receiver.url()));
    assert_eq!(endpoint["description"], "billing");
    assert_eq!(
        endpoint["event_types"],
        json!(["usage.*", "balance.updated"])
    );
    assert_eq!(endpoint["schema_version"], "1");
    assert_eq!(endpoint["concurrency"], 4);
    assert_eq!(endpoint["rate_limit"], 20);
    assert_eq!(endpoint["status"], "active", "an endpoint starts active");
}

#[both_backends]
async fn an_endpoint_created_paused_starts_paused_with_the_configured_concurrency(app: TestApp) {
    let endpoint = paused(&app, &app.partner_key().await, &Receiver::start().await).await;
    assert_eq!(
        endpoint["status"], "paused",
        "`status: paused` creates it paused"
    );
    assert_eq!(
        endpoint["concurrency"], 8,
        "the concurrency defaults from the configuration"
    );
}

#[both_backends]
async fn an_endpoint_is_read_by_its_id_and_the_list_holds_them_oldest_first(app: TestApp) {
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let first = id(&billing(&app, &key, &receiver).await);
    app.advance(Duration::from_secs(1));
    let second = id(&paused(&app, &key, &receiver).await);

    let one = get_ok(&app, &key, &format!("/v1/endpoints/{first}")).await;
    assert_eq!(one["id"], first.as_str());
    assert_eq!(one["description"], "billing");
    let list = get_ok(&app, &key, "/v1/endpoints").await;
    assert_eq!(
        ids_of(&list),
        vec![first, second],
        "the list holds both, oldest first"
    );
}

#[both_backends]
async fn a_patch_changes_what_it_names_and_leaves_the_rest(app: TestApp) {
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let endpoint = id(&billing(&app, &key, &receiver).await);
    let change = json!({"description": "billing v2", "concurrency": 2, "event_types": []});
    let patched = app
        .request(
            "PATCH",
            &format!("/v1/endpoints/{endpoint}"),
            &key,
            Some(&change),
        )
        .await;
    let body = expect_status(&patched, 200);
    assert_eq!(body["description"], "billing v2");
    assert_eq!(body["concurrency"], 2);
    assert_eq!(body["event_types"], json!([]));
    assert_eq!(
        body["url"],
        format!("{}/hooks", receiver.url()),
        "what the patch leaves out stays"
    );
    assert_eq!(body["rate_limit"], 20, "what the patch leaves out stays");
    let again = get_ok(&app, &key, &format!("/v1/endpoints/{endpoint}")).await;
    assert_eq!(
        again["description"], "billing v2",
        "the change is stored: {again}"
    );
}

/// `POST /v1/endpoints/{endpoint}/{action}` (`disable`, `enable`): the
/// answer shows the endpoint in `status`, and so does reading it again.
async fn expect_action_sets_status(
    app: &TestApp,
    key: &str,
    endpoint: &str,
    action: &str,
    status: &str,
) {
    let path = format!("/v1/endpoints/{endpoint}/{action}");
    let answered = expect_status(&app.request("POST", &path, key, None).await, 200);
    assert_eq!(answered["status"], status, "{action} answers: {answered}");
    let again = get_ok(app, key, &format!("/v1/endpoints/{endpoint}")).await;
    assert_eq!(again["status"], status, "the change is stored: {again}");
}

#[both_backends]
async fn a_disabled_endpoint_reads_as_disabled(app: TestApp) {
    let key = app.partner_key().await;
    let endpoint = id(&billing(&app, &key, &Receiver::start().await).await);
    expect_action_sets_status(&app, &key, &endpoint, "disable", "disabled").await;
}

#[both_backends]
async fn enabling_a_paused_endpoint_makes_it_active(app: TestApp) {
    let key = app.partner_key().await;
    let endpoint = id(&paused(&app, &key, &Receiver::start().await).await);
    expect_action_sets_status(&app, &key, &endpoint, "enable", "active").await;
}

#[both_backends]
async fn no_answer_but_the_creation_shows_an_endpoints_secret(app: TestApp) {
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let active = id(&billing(&app, &key, &receiver).await);
    let paused = id(&paused(&app, &key, &receiver).await);
    let shown = [
        app.request("GET", &format!("/v1/endpoints/{active}"), &key, None)
            .await,
        app.request("GET", "/v1/endpoints", &key, None).await,
        app.request(
            "PATCH",
            &format!("/v1/endpoints/{active}"),
            &key,
            Some(&json!({"description": "x"})),
        )
        .await,
        app.request(
            "POST",
            &format!("/v1/endpoints/{active}/disable"),
            &key,
            None,
        )
        .await,
        app.request(
            "POST",
            &format!("/v1/endpoints/{paused}/enable"),
            &key,
            None,
        )
        .await,
    ];
    for (status, body, _) in &shown {
        assert_eq!(*status, 200, "{body}");
        assert!(
            !body.to_string().contains("whsec_"),
            "only the creation may show a secret: {body}"
        );
    }
}

#[both_backends]
async fn a_deleted_endpoint_is_no_longer_found_nor_listed(app: TestApp) {
    let callers = Callers::of(&app).await;
    let key = &callers.partner;
    let receiver = Receiver::start().await;
    let gone = id(&billing(&app, key, &receiver).await);
    let kept = id(&paused(&app, key, &receiver).await);
    let path = format!("/v1/endpoints/{gone}");
    let deleted = app.request("DELETE", &path, key, None).await;
    assert_eq!(deleted.0, 204, "delete answers 204: {}", deleted.1);

    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("GET",    path.as_str(), Partner, Empty, 404, "not-found", None),
            ("DELETE", path.as_str(), Partner, Empty, 404, "not-found", None),
        ];
    expect_problems(&app, &callers, &cases).await;
    let list = get_ok(&app, key, "/v1/endpoints").await;
    assert_eq!(ids_of(&list), vec![kept]);
}

#[both_backends]
async fn an_endpoint_with_deliveries_can_be_deleted(app: TestApp) {
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let (id, _) = create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &id, "delivered", WAIT).await;
    let orphans = "delivery_id NOT IN (SELECT id FROM delivery)";
    assert_eq!(rows(&app, "attempt").await, 1, "its attempt");
    let deleted = app
        .request("DELETE", &format!("/v1/endpoints/{id}"), &key, None)
        .await;
    assert_eq!(
        deleted.0, 204,
        "deleting an endpoint with deliveries works: {}",
        deleted.1
    );
    let left = rows_where(&app, "delivery", &format!("endpoint_id = '{id}'")).await;
    assert_eq!(left, 0, "its deliveries go with it");
    let left = rows_where(&app, "attempt", orphans).await;
    assert_eq!(left, 0, "and their attempts with them");
    assert_eq!(rows(&app, "attempt").await, 0);
}

#[both_backends]
async fn a_callback_url_outside_the_egress_policy_is_refused(app: TestApp) {
    let callers = Callers::of(&app).await;
    let e = "/v1/endpoints";
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("POST", e, Partner, Json(json!({"url": "https://10.0.0.1/x"})),             422, "invalid-url", Some("url")),
            ("POST", e, Partner, Json(json!({"url": "ftp://x"})),                        422, "invalid-url", Some("url")),
            ("POST", e, Partner, Json(json!({"url": "http://169.254.169.254/latest"})),  422, "invalid-url", Some("url")),
            ("POST", e, Partner, Json(json!({"url": "not a url"})),                      422, "invalid-url", Some("url")),
        ];
    expect_problems_writing_nothing(&app, &callers, &cases, "endpoint", "endpoint").await;
    assert_eq!(endpoint_count(&app).await, 0, "no endpoint at all");
}
