//! Every admin route refuses a partner key with 403, and an unknown id is
//! a 404 problem; neither writes an audit entry. A list parameter it
//! cannot take is a 422 problem naming it.

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::json;

use super::{audit_count, call, endpoint_status, kind, refused_naming};
use crate::harness::TestApp;
use hookd_test_macros::both_backends;

/// Every operator route of the API, with an id in those that take one.
fn admin_routes(id: &str) -> Vec<(&'static str, String)> {
    let mut routes: Vec<(&'static str, String)> = [
        "/v1/admin/deliveries",
        "/v1/admin/events",
        "/v1/admin/events?state=rejected",
        "/v1/admin/endpoints",
        "/v1/admin/audit",
        "/v1/admin/partners",
    ]
    .into_iter()
    .map(|p| ("GET", p.to_string()))
    .collect();
    for (method, path) in [
        ("GET", "deliveries/{id}"),
        ("POST", "deliveries/{id}/replay"),
        ("GET", "events/{id}"),
        ("GET", "endpoints/{id}"),
        ("POST", "endpoints/{id}/recover"),
        ("POST", "endpoints/{id}/enable"),
        ("POST", "endpoints/{id}/disable"),
    ] {
        routes.push((method, format!("/v1/admin/{}", path.replace("{id}", id))));
    }
    routes
}

#[both_backends]
async fn a_partner_key_gets_403_on_every_admin_route(app: TestApp) {
    let key = app.partner_key().await;
    let (endpoint, _) = app.endpoint("http://127.0.0.1:9/hook").await;
    for (method, path) in admin_routes(&endpoint) {
        let p = call(&app, (method, &path), &key, None, 403).await;
        assert_eq!(kind(&p), "forbidden", "{method} {path}: {p}");
    }
    assert_nothing_done(&app, &endpoint).await;
}

#[both_backends]
async fn an_admin_action_without_a_key_gets_401_and_does_nothing(app: TestApp) {
    let (endpoint, _) = app.endpoint("http://127.0.0.1:9/hook").await;
    let path = format!("/v1/admin/endpoints/{endpoint}/disable");
    let p = call(&app, ("POST", &path), "", None, 401).await;
    assert_eq!(kind(&p), "unauthorized", "{p}");
    assert_nothing_done(&app, &endpoint).await;
}

/// No audit entry, and `endpoint` still active.
async fn assert_nothing_done(app: &TestApp, endpoint: &str) {
    assert_eq!(audit_count(app).await, 0, "nothing was done");
    let status = endpoint_status(app, endpoint).await;
    assert_eq!(status, "active", "the endpoint is still active");
}

#[both_backends]
async fn an_unknown_id_is_a_404_problem_on_every_admin_route_that_takes_one(app: TestApp) {
    let operator = app.operator_key().await;
    let since = json!({"since": format_time(app.clock.now_ms() - 1000)});
    for (method, path) in admin_routes("nope_0123") {
        if !path.contains("nope_0123") {
            continue;
        }
        let body = path.ends_with("/recover").then(|| since.clone());
        let p = call(&app, (method, &path), &operator, body, 404).await;
        assert_eq!(kind(&p), "not-found", "{method} {path}: {p}");
    }
    assert_eq!(audit_count(&app).await, 0, "nothing was done");
}

world_test!(
    a_list_parameter_it_cannot_take_is_refused_naming_it,
    |w: World| async move {
        #[rustfmt::skip]
        let cases = [
            // list                  query                        names          problem
            ("/v1/admin/deliveries", "colour=red",                "colour",      "unknown-field"),
            ("/v1/admin/deliveries", "category=lost",             "category",    "out-of-range"),
            ("/v1/admin/deliveries", "state=lost",                "state",       "out-of-range"),
            ("/v1/admin/deliveries", "status_code=x",             "status_code", "invalid-type"),
            ("/v1/admin/endpoints",  "status=broken",             "status",      "out-of-range"),
            ("/v1/admin/endpoints",  "failing=maybe",             "failing",     "invalid-type"),
            ("/v1/admin/endpoints",  "colour=red",                "colour",      "unknown-field"),
            ("/v1/admin/events",     "state=published",           "state",       "out-of-range"),
            ("/v1/admin/events",     "state=rejected&type=b.two", "type",        "validation"),
            ("/v1/admin/events",     "colour=red",                "colour",      "unknown-field"),
        ];
        for (list, query, field, problem) in cases {
            let refused = refused_naming(&w, list, &[(query, field)]).await;
            let p = &refused[0];
            assert_eq!(kind(p), problem, "{list}?{query}: {p}");
        }
    }
);
