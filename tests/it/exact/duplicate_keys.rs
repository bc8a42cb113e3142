//! A key given twice in a body is refused (400 `duplicate-key`, naming the
//! key's path) and nothing is written: at ingest, in a batch, and in the
//! partner's and the operator's own bodies.

use super::{
    assert_description_patch_refused, assert_endpoint_refused, assert_problem, events, partners,
};
use crate::harness::{ApiAnswer, TestApp, rows::assert_stored_events};
use hookd_test_macros::both_backends;

/// `body`, sent as written, to `POST /v1/events` with the service key.
async fn ingest(app: &TestApp, body: &str) -> ApiAnswer {
    app.request_raw("POST", "/v1/events", &app.service_key, body)
        .await
}

#[both_backends]
async fn an_event_with_a_key_given_twice_is_refused_and_nothing_is_written(app: TestApp) {
    let p = &app.partner_id;
    let cases = [
        (
            format!(r#"{{"type": "a.b", "type": "c.d", "partner_id": "{p}", "data": {{}}}}"#),
            "type",
            "a top-level key twice",
        ),
        (
            format!(r#"{{"type": "a.b", "typ\u0065": "c.d", "partner_id": "{p}", "data": {{}}}}"#),
            "type",
            "one key spelt once plainly and once escaped",
        ),
        (
            format!(
                r#"{{"type": "a.b", "partner_id": "{p}",
                        "data": {{"items": [{{"a": 1}}, {{"a": 1, "b": 2, "b": 3}}]}}}}"#
            ),
            "data.items[1].b",
            "a key twice deep in data",
        ),
    ];
    for (body, field, what) in cases {
        let answer = ingest(&app, &body).await;
        assert_problem(&answer, 400, "duplicate-key", field, what);
    }
    assert_eq!(events(&app).await, 0, "no refused event should be written");
}

#[both_backends]
async fn a_key_given_twice_in_a_batch_is_named_as_other_batch_problems_name_fields(app: TestApp) {
    let p = &app.partner_id;
    let batch = format!(
        r#"[{{"type": "a.b", "partner_id": "{p}", "data": {{}}}},
                {{"type": "a.b", "partner_id": "{p}", "data": {{"x": 1, "x": 2}}}}]"#
    );
    // A refused batch names fields `events[i].…` (see ingest.rs); a
    // repeated key should be named the same way.
    let answer = ingest(&app, &batch).await;
    let what = "a batch with a key twice in its second event";
    assert_problem(&answer, 400, "duplicate-key", "events[1].data.x", what);
    assert_stored_events(&app, 0, "no event of the batch should be written").await;
}

#[both_backends]
async fn an_endpoint_created_with_a_key_given_twice_is_refused_and_not_created(app: TestApp) {
    let url = "http://127.0.0.1:9/hooks";
    let twice = format!(r#"{{"url": "{url}", "url": "{url}/other"}}"#);
    let what = "an endpoint with url twice";
    assert_endpoint_refused(&app, &twice, (400, "duplicate-key"), "url", what).await;
}

#[both_backends]
async fn an_endpoint_patch_with_a_key_given_twice_is_refused_and_changes_nothing(app: TestApp) {
    let patch = r#"{"description": "first", "description": "second"}"#;
    let refusal = (400, "duplicate-key");
    let what = "a patch with description twice";
    assert_description_patch_refused(&app, patch, refusal, what).await;
}

#[both_backends]
async fn a_partner_created_with_a_key_given_twice_is_refused_and_not_created(app: TestApp) {
    let operator = app.operator_key().await;
    let partner = r#"{"name": "Globex", "name": "Initech"}"#;
    let answer = app
        .request_raw("POST", "/v1/admin/partners", &operator, partner)
        .await;
    assert_problem(
        &answer,
        400,
        "duplicate-key",
        "name",
        "a partner with name twice",
    );
    assert_eq!(
        partners(&app).await,
        1,
        "only the test's own partner should exist"
    );
}
