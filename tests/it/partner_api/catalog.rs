//! What a partner can read about hookd itself: the event catalog and the
//! limits it applies, both behind a key.

use serde_json::json;

use super::{Body::*, Caller::*, get_ok};
use hookd_test_macros::both_backends;

#[both_backends]
async fn the_catalog_lists_each_event_type_with_a_description_and_a_schema(app: TestApp) {
    let key = app.partner_key().await;
    let types = get_ok(&app, &key, "/v1/event-types").await;
    let types = types["data"].as_array().expect("a data array");
    assert!(!types.is_empty(), "the catalog lists event types");
    for t in types {
        assert!(t["type"].is_string(), "each entry has a type: {t}");
        assert!(
            t["description"].as_str().is_some_and(|d| !d.is_empty()),
            "each has a description: {t}"
        );
        assert_eq!(t["schema"]["type"], "object", "each has a JSON Schema: {t}");
    }
    assert!(
        types.iter().any(|t| t["type"] == "webhook.test"),
        "the test event is listed: {types:?}"
    );
}

#[both_backends]
async fn the_limits_are_published(app: TestApp) {
    let key = app.partner_key().await;
    let limits = get_ok(&app, &key, "/v1/limits").await;
    assert_eq!(limits["retention"]["events_days"], 90, "{limits}");
    assert_eq!(limits["retention"]["deliveries_days"], 30, "{limits}");
    assert_eq!(limits["replay_window_seconds"], 30 * 86_400, "{limits}");
    assert_eq!(limits["page_size"], json!({"default": 50, "max": 500}));
    assert_eq!(
        limits["rate_limit"],
        json!({"requests_per_second": 50, "burst": 100})
    );
    assert_eq!(limits["max_secret_overlap_seconds"], 604_800, "{limits}");
}

problem_table! {
    the_catalog_and_the_limits_need_a_key,
    [
        ("GET", "/v1/event-types", Anonymous, Empty, 401, "unauthorized", None),
        ("GET", "/v1/limits",      Anonymous, Empty, 401, "unauthorized", None),
    ]
}
