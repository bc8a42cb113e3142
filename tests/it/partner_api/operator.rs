//! The operator's routes: partners created (with an id chosen at most once)
//! and listed, partner keys issued and revoked, revocation taking effect on
//! the next request.

use serde_json::{Value, json};

use super::{
    Body::*, Caller::*, Callers, Case, create_endpoint, expect_problems, expect_status, get_ok,
    ids_of,
};
use crate::harness::{TestApp, receiver::Receiver};
use hookd_test_macros::both_backends;

/// `POST /v1/admin/partners` with `body`; returns the 201's body.
async fn create_partner(app: &TestApp, operator: &str, body: Value) -> Value {
    expect_status(
        &app.request("POST", "/v1/admin/partners", operator, Some(&body))
            .await,
        201,
    )
}

/// Issues a partner key for `partner`; returns the 201's body.
async fn issue_key(app: &TestApp, operator: &str, partner: &str) -> Value {
    let path = format!("/v1/admin/partners/{partner}/keys");
    expect_status(&app.request("POST", &path, operator, None).await, 201)
}

/// An operator key and, created with it, the partner "Globex": (key, Globex's id).
async fn operator_and_globex(app: &TestApp) -> (String, String) {
    let op = app.operator_key().await;
    let globex = create_partner(app, &op, json!({"name": "Globex"})).await;
    let id = text(&globex, "id");
    (op, id)
}

/// The text field `name` of `v`, which must be there.
fn text(v: &Value, name: &str) -> String {
    v[name]
        .as_str()
        .unwrap_or_else(|| panic!("`{name}` in {v}"))
        .to_string()
}

#[both_backends]
async fn an_operator_creates_a_partner_that_starts_active(app: TestApp) {
    let op = app.operator_key().await;
    let globex = create_partner(&app, &op, json!({"name": "Globex"})).await;
    assert_eq!(globex["name"], "Globex");
    assert_eq!(globex["status"], "active");
    assert!(
        globex["id"].as_str().is_some_and(|id| !id.is_empty()),
        "hookd gives it an id: {globex}"
    );
}

#[both_backends]
async fn a_partner_id_can_be_chosen_and_taken_once(app: TestApp) {
    let callers = Callers::of(&app).await;
    let named = create_partner(
        &app,
        &callers.operator,
        json!({"name": "Initech", "id": "initech"}),
    )
    .await;
    assert_eq!(named["id"], "initech");
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("POST", "/v1/admin/partners", Operator, Json(json!({"name": "Initech", "id": "initech"})), 409, "conflict", None),
        ];
    expect_problems(&app, &callers, &cases).await;
}

problem_table! {
    a_partner_without_a_name_or_with_an_unknown_field_is_refused,
    writing no "partner" in "partner",
    [
        ("POST", "/v1/admin/partners", Operator, Json(json!({"name": ""})),               422, "out-of-range",  Some("name")),
        ("POST", "/v1/admin/partners", Operator, Json(json!({"name": "X", "colour": 1})), 422, "unknown-field", Some("colour")),
    ]
}

#[both_backends]
async fn every_partner_is_listed_for_the_operator(app: TestApp) {
    let (op, globex) = operator_and_globex(&app).await;
    create_partner(&app, &op, json!({"name": "Initech", "id": "initech"})).await;
    let listed = get_ok(&app, &op, "/v1/admin/partners").await;
    let ids = ids_of(&listed);
    for id in [app.partner_id.as_str(), globex.as_str(), "initech"] {
        assert!(ids.iter().any(|i| i == id), "{id} is listed: {listed}");
    }
}

#[both_backends]
async fn a_key_issued_for_a_partner_works_on_that_partners_routes_only(app: TestApp) {
    let (op, globex) = operator_and_globex(&app).await;
    let issued = issue_key(&app, &op, &globex).await;
    assert_eq!(issued["role"], "partner");
    assert_eq!(issued["partner_id"], globex.as_str());
    let globex_key = text(&issued, "key");

    let receiver = Receiver::start().await;
    let (endpoint, _) = create_endpoint(&app, &globex_key, json!({"url": receiver.url()})).await;
    let theirs = get_ok(&app, &globex_key, "/v1/endpoints").await;
    assert_eq!(
        ids_of(&theirs),
        vec![endpoint],
        "the new key works on partner routes"
    );
    let acme = app.partner_key().await;
    let ours = get_ok(&app, &acme, "/v1/endpoints").await;
    assert_eq!(
        ids_of(&ours),
        Vec::<String>::new(),
        "Globex's endpoint is not Acme's"
    );
}

problem_table! {
    no_key_is_issued_for_a_partner_that_does_not_exist,
    writing no "key" in "api_key",
    [
        ("POST", "/v1/admin/partners/ptn_nope/keys", Operator, Empty, 404, "not-found", None),
    ]
}

#[both_backends]
async fn a_revoked_key_is_refused_on_the_next_request_and_cannot_be_revoked_twice(app: TestApp) {
    let (op, globex) = operator_and_globex(&app).await;
    let issued = issue_key(&app, &op, &globex).await;
    let (globex_key, key_id) = (text(&issued, "key"), text(&issued, "id"));
    let works = app.request("GET", "/v1/endpoints", &globex_key, None).await;
    assert_eq!(
        works.0, 200,
        "the key works before it is revoked: {}",
        works.1
    );

    let path = format!("/v1/admin/keys/{key_id}");
    let revoked = app.request("DELETE", &path, &op, None).await;
    assert_eq!(revoked.0, 204, "revoking answers 204: {}", revoked.1);
    // Globex is the other partner here: its key is the one revoked.
    let callers = Callers {
        stranger: globex_key,
        stranger_id: globex,
        ..Callers::of(&app).await
    };
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("GET",    "/v1/endpoints", Stranger, Empty, 401, "unauthorized", None),
            ("DELETE", path.as_str(),   Operator, Empty, 404, "not-found",    None),
        ];
    expect_problems(&app, &callers, &cases).await;
}
