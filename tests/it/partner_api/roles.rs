//! Keys and roles: each role reaches only its own routes, and a revoked key
//! is told no more than an unknown one.

use serde_json::json;

use super::{Body::*, Caller::*, Callers, Case, expect_problems, expect_problems_writing_nothing};
use crate::harness::answer;
use hookd_test_macros::both_backends;

#[both_backends]
async fn each_role_is_kept_to_its_own_routes(app: TestApp) {
    let callers = Callers::of(&app).await;
    let keys = format!("/v1/admin/partners/{}/keys", app.partner_id);
    let evil = || Json(json!({"name": "Evil"}));
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("GET",    "/v1/admin/partners",      Partner,  Empty,  403, "forbidden", None),
            ("POST",   "/v1/admin/partners",      Partner,  evil(), 403, "forbidden", None),
            ("POST",   keys.as_str(),             Partner,  evil(), 403, "forbidden", None),
            ("DELETE", "/v1/admin/keys/key_nope", Partner,  Empty,  403, "forbidden", None),
            ("GET",    "/v1/endpoints",           Operator, Empty,  403, "forbidden", None),
            ("GET",    "/v1/deliveries",          Operator, Empty,  403, "forbidden", None),
            ("GET",    "/v1/events",              Operator, Empty,  403, "forbidden", None),
            ("GET",    "/v1/limits",              Operator, Empty,  403, "forbidden", None),
            ("GET",    "/v1/endpoints",           Service,  Empty,  403, "forbidden", None),
            ("GET",    "/v1/deliveries",          Service,  Empty,  403, "forbidden", None),
            ("GET",    "/v1/events",              Service,  Empty,  403, "forbidden", None),
            ("GET",    "/v1/limits",              Service,  Empty,  403, "forbidden", None),
        ];
    // A partner key must not create a partner.
    expect_problems_writing_nothing(&app, &callers, &cases, "partner", "partner").await;
}

#[both_backends]
async fn a_revoked_or_unknown_key_gets_the_same_401(app: TestApp) {
    let callers = Callers::of(&app).await;
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("GET", "/v1/endpoints", Unknown,   Empty, 401, "unauthorized", None),
            ("GET", "/v1/endpoints", Revoked,   Empty, 401, "unauthorized", None),
            ("GET", "/v1/endpoints", Anonymous, Empty, 401, "unauthorized", None),
        ];
    let answers = expect_problems(&app, &callers, &cases).await;
    let (unknown, revoked) = (&answers[0], &answers[1]);
    assert_eq!(
        unknown.1, revoked.1,
        "a revoked key's 401 must not differ from an unknown key's"
    );
    let content_type =
        |a: &crate::harness::ApiAnswer| answer::header(&a.2, "content-type").map(str::to_string);
    assert_eq!(content_type(unknown), content_type(revoked));
}
