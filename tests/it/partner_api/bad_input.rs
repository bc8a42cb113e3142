//! Every kind of bad input to the endpoint routes and the lists, a row each,
//! with the problem it gets (docs/partner-api.md "## Errors": 400 when hookd cannot read
//! the request, 422 naming the `field` when a value breaks a rule); and a
//! refused request writes nothing, not even half of a change.

use serde_json::json;

use super::{
    Body::*, Caller::*, Callers, Case, create_endpoint, expect_problems,
    expect_problems_writing_nothing, get_ok,
};
use crate::harness::receiver::Receiver;
use hookd_test_macros::both_backends;

#[both_backends]
async fn each_kind_of_bad_endpoint_body_gets_its_own_problem_and_nothing_is_written(app: TestApp) {
    let callers = Callers::of(&app).await;
    let url = Receiver::start().await.url();
    let e = "/v1/endpoints";

    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("POST", e, Partner, Raw(r#"{"url": "#.into()),                        400, "malformed-json", None),
            ("POST", e, Partner, Raw("{url: 1}".into()),                            400, "malformed-json", None),
            ("POST", e, Partner, Raw("[1, 2".into()),                               400, "malformed-json", None),
            ("POST", e, Partner, Raw(format!(r#"{{"url": "{url}"}} x"#)),           400, "malformed-json", None),
            ("POST", e, Partner, Json(json!([url])),                                422, "invalid-type",   None),
            ("POST", e, Partner, Json(json!({"url": url, "colour": "red"})),        422, "unknown-field",  Some("colour")),
            ("POST", e, Partner, Json(json!({"url": 5})),                           422, "invalid-type",   Some("url")),
            ("POST", e, Partner, Json(json!({"url": url, "concurrency": "8"})),     422, "invalid-type",   Some("concurrency")),
            ("POST", e, Partner, Json(json!({"url": url, "event_types": "a.*"})),   422, "invalid-type",   Some("event_types")),
            ("POST", e, Partner, Json(json!({"url": "https://10.0.0.1/x"})),        422, "invalid-url",    Some("url")),
            ("POST", e, Partner, Json(json!({"url": "ftp://x"})),                   422, "invalid-url",    Some("url")),
            ("POST", e, Partner, Json(json!({"url": url, "concurrency": 0})),       422, "out-of-range",   Some("concurrency")),
            ("POST", e, Partner, Json(json!({"url": url, "concurrency": 257})),     422, "out-of-range",   Some("concurrency")),
            ("POST", e, Partner, Json(json!({"url": url, "rate_limit": 10001})),    422, "out-of-range",   Some("rate_limit")),
        ];
    expect_problems_writing_nothing(&app, &callers, &cases, "endpoint", "endpoint").await;
}

#[both_backends]
async fn each_kind_of_bad_change_to_an_endpoint_gets_its_own_problem_and_none_is_half_applied(
    app: TestApp,
) {
    let callers = Callers::of(&app).await;
    let url = Receiver::start().await.url();
    let (id, _) = create_endpoint(
        &app,
        &callers.partner,
        json!({"url": url, "description": "before"}),
    )
    .await;
    let path = format!("/v1/endpoints/{id}");
    let e = path.as_str();

    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("PATCH", e, Partner, Raw(r#"{"description": "#.into()),                                 400, "malformed-json", None),
            ("PATCH", e, Partner, Json(json!({"description": "after", "concurrency": 0})),          422, "out-of-range",   Some("concurrency")),
            ("PATCH", e, Partner, Json(json!({"description": "after", "url": "https://10.0.0.1/x"})), 422, "invalid-url",  Some("url")),
            ("PATCH", e, Partner, Json(json!({"description": "after", "colour": 1})),               422, "unknown-field",  Some("colour")),
            ("PATCH", e, Partner, Json(json!({"description": 7})),                                  422, "invalid-type",   Some("description")),
        ];
    expect_problems(&app, &callers, &cases).await;

    let now = get_ok(&app, &callers.partner, e).await;
    assert_eq!(
        now["description"], "before",
        "no refused change was half-applied: {now}"
    );
    assert_eq!(now["concurrency"], 8, "{now}");
    assert_eq!(
        now["url"].as_str().map(|u| u.trim_end_matches('/')),
        Some(url.as_str()),
        "{now}"
    );
}

problem_table! {
    each_kind_of_bad_query_gets_its_own_problem_naming_the_parameter,
    // The same mistake gets the same answer in a query as in a body.
    [
        ("GET", "/v1/endpoints?after=garbage",  Partner, Empty, 422, "invalid-cursor", Some("after")),
        ("GET", "/v1/deliveries?after=garbage", Partner, Empty, 422, "invalid-cursor", Some("after")),
        ("GET", "/v1/events?after=garbage",     Partner, Empty, 422, "invalid-cursor", Some("after")),
        ("GET", "/v1/endpoints?limit=10000",    Partner, Empty, 422, "out-of-range",   Some("limit")),
        ("GET", "/v1/endpoints?limit=0",        Partner, Empty, 422, "out-of-range",   Some("limit")),
        ("GET", "/v1/deliveries?limit=10000",   Partner, Empty, 422, "out-of-range",   Some("limit")),
        ("GET", "/v1/events?limit=10000",       Partner, Empty, 422, "out-of-range",   Some("limit")),
        ("GET", "/v1/endpoints?limit=ten",      Partner, Empty, 422, "invalid-type",   Some("limit")),
        ("GET", "/v1/deliveries?state=lost",    Partner, Empty, 422, "out-of-range",   Some("state")),
        ("GET", "/v1/deliveries?colour=red",    Partner, Empty, 422, "unknown-field",  Some("colour")),
        ("GET", "/v1/endpoints?colour=red",     Partner, Empty, 422, "unknown-field",  Some("colour")),
        ("GET", "/v1/events?colour=red",        Partner, Empty, 422, "unknown-field",  Some("colour")),
    ]
}
