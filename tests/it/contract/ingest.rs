//! `POST /v1/events` against the bundled catalog: an unknown type, `data`
//! that fails its schema and an unknown version are refused with 422, each
//! naming the field (with JSON pointers into the request), and nothing of
//! the request is stored.

use serde_json::{Value, json};

use super::STRICT;
use crate::harness::{TestApp, rows::assert_stored_events, spawn_app_with};
use hookd_test_macros::both_backends;

fn usage(app: &TestApp, data: Value) -> Value {
    json!({"type": "usage.finalized", "schema_version": 1, "partner_id": app.partner_id, "data": data})
}

/// Posts an event of `made.up`, a type the catalog does not have.
async fn post_made_up(app: &TestApp) -> (u16, Value) {
    let made_up = json!({"type": "made.up", "partner_id": app.partner_id, "data": {}});
    app.post_events(&made_up).await
}

async fn stored(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM outbox_event").await
}

#[both_backends]
async fn empty_data_for_a_known_type_is_refused_with_every_missing_field(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let (status, body) = app.post_events(&usage(&app, json!({}))).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["type"], "https://hookd.dev/problems/invalid-data");
    assert_eq!(body["field"], "data");
    let errors = body["errors"].as_array().expect("an errors list");
    assert!(!errors.is_empty() && errors.len() <= 10, "{body}");
    assert!(
        errors.iter().all(|e| e["pointer"] == "/data"),
        "missing properties are reported at the object that lacks them: {body}"
    );
    let detail = body["detail"].as_str().expect("a detail");
    for field in ["customer_id", "currency", "final_cost"] {
        assert!(detail.contains(field), "{field} should be named: {detail}");
    }
    assert_eq!(stored(&app).await, 0);
}

#[both_backends]
async fn a_float_amount_and_a_made_up_currency_are_each_refused_by_pointer(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let fine = json!({"type": "balance.updated", "partner_id": app.partner_id,
                          "data": {"customer_id": "cus_1", "currency": "USD", "balance": "10.50"}});
    let bad = json!({"type": "balance.updated", "partner_id": app.partner_id,
                         "data": {"customer_id": "cus_1", "currency": "dollars", "balance": 10.5}});
    let (status, body) = app.post_events(&json!([fine, bad])).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["field"], "events[1].data");
    let mut pointers: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["pointer"].as_str())
        .collect();
    pointers.sort_unstable();
    assert_eq!(
        pointers,
        ["/events/1/data/balance", "/events/1/data/currency"]
    );
    let why = "all or nothing: the valid event is not stored either";
    assert_stored_events(&app, 0, why).await;
}

#[both_backends]
async fn a_strict_catalog_refuses_an_invented_type_and_stores_nothing(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let (status, body) = post_made_up(&app).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["type"],
        "https://hookd.dev/problems/unknown-event-type"
    );
    assert_eq!(body["field"], "type");
    assert_eq!(stored(&app).await, 0);
}

/// The catalog set lenient: unknown types are taken.
const LENIENT: (&str, &str) = ("HOOKD_CATALOG__STRICT", "false");

#[both_backends]
async fn a_lenient_catalog_takes_an_invented_type(backend: Backend) {
    let lenient = spawn_app_with(backend, &[LENIENT]).await;
    let (status, body) = post_made_up(&lenient).await;
    assert_eq!(status, 201, "a lenient catalog takes unknown types: {body}");
}

#[both_backends]
async fn a_lenient_catalog_still_checks_the_types_it_knows(backend: Backend) {
    let lenient = spawn_app_with(backend, &[LENIENT]).await;
    let (status, body) = lenient.post_events(&usage(&lenient, json!({}))).await;
    assert_eq!(status, 422, "known types are still checked: {body}");
}

/// The data `usage.finalized` version 1 requires.
fn v1() -> Value {
    json!({"customer_id": "cus_1", "currency": "USD", "final_cost": "1.00"})
}

#[both_backends]
async fn a_version_the_type_does_not_have_is_refused(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let mut event = usage(&app, v1());
    event["schema_version"] = json!(99);
    let (status, body) = app.post_events(&event).await;
    assert_eq!(
        (status, body["field"].as_str()),
        (422, Some("schema_version")),
        "{body}"
    );
    assert_eq!(stored(&app).await, 0);
}

#[both_backends]
async fn an_event_without_a_version_is_checked_against_the_latest(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    // v1's data is not enough for version 2.
    let mut unversioned = usage(&app, v1());
    unversioned
        .as_object_mut()
        .map(|o| o.remove("schema_version"));
    let (status, body) = app.post_events(&unversioned).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("version 2")),
        "{body}"
    );
}

#[both_backends]
async fn an_accepted_envelope_carries_its_version_as_an_integer(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let (status, body) = app.post_events(&usage(&app, v1())).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body["schema_version"], 1,
        "the envelope carries the version as an integer"
    );
}

#[both_backends]
async fn the_rust_outbox_refuses_what_ingest_refuses(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let bad =
        hookd::outbox::Event::new("usage.finalized", &app.partner_id, json!({})).schema_version(1);
    let err = hookd::outbox::enqueue(app.db(), bad)
        .await
        .expect_err("invalid data is refused");
    assert!(err.to_string().contains("data"), "{err}");
    let made_up = hookd::outbox::Event::new("made.up", &app.partner_id, json!({}));
    assert!(hookd::outbox::enqueue(app.db(), made_up).await.is_err());
    let good = hookd::outbox::Event::new(
        "usage.finalized",
        &app.partner_id,
        json!({"customer_id": "cus_1", "currency": "USD", "final_cost": "1.00"}),
    )
    .schema_version(1);
    hookd::outbox::enqueue(app.db(), good)
        .await
        .expect("valid data is written");
    assert_eq!(stored(&app).await, 1);
}
