//! Exact data: what the producer sent is what the receiver gets, digit for
//! digit (`numbers`); a key given twice (`duplicate_keys`) and text with
//! control characters (`control_characters`) are refused.

mod control_characters;
mod duplicate_keys;
mod numbers;

use crate::harness::{ApiAnswer, TestApp, answer::header};

/// The answer is a `status` problem+json of type `…/kind` naming `field`.
#[track_caller]
pub fn assert_problem(answer: &ApiAnswer, status: u16, kind: &str, field: &str, what: &str) {
    let (got, body, headers) = answer;
    assert_eq!(
        *got, status,
        "{what}: expected {status} `{kind}`, got {body}"
    );
    let content_type = header(headers, "content-type").unwrap_or("");
    assert_eq!(
        content_type, "application/problem+json",
        "{what}: the refusal should be problem+json: {body}"
    );
    assert_eq!(
        body["type"],
        format!("https://hookd.dev/problems/{kind}"),
        "{what}: wrong problem type: {body}"
    );
    assert_eq!(
        body["field"], field,
        "{what}: the problem should name the field: {body}"
    );
}

pub async fn events(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM outbox_event").await
}

async fn endpoints(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM endpoint").await
}

pub async fn partners(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM partner").await
}

/// A partner key, and an endpoint of the test partner (straight in the
/// store) with an empty description: (key, its path in the API).
pub async fn an_endpoint(app: &TestApp) -> (String, String) {
    let key = app.partner_key().await;
    let (id, _) = app.endpoint("http://127.0.0.1:9/hooks").await;
    (key, format!("/v1/endpoints/{id}"))
}

/// Creates an endpoint of the test partner with `body` (sent as written),
/// which must be refused as a `status` `kind` problem naming `field` (see
/// `assert_problem`), and checks that no endpoint was created.
pub async fn assert_endpoint_refused(
    app: &TestApp,
    body: &str,
    (status, kind): (u16, &str),
    field: &str,
    what: &str,
) {
    let key = app.partner_key().await;
    let answer = app.request_raw("POST", "/v1/endpoints", &key, body).await;
    assert_problem(&answer, status, kind, field, what);
    assert_eq!(
        endpoints(app).await,
        0,
        "{what}: no endpoint should be created"
    );
}

/// Patches the description of a new endpoint with `patch` (sent as
/// written), which must be refused as a `status` `kind` problem naming
/// `description` (see `assert_problem`), and checks it changed nothing.
pub async fn assert_description_patch_refused(
    app: &TestApp,
    patch: &str,
    (status, kind): (u16, &str),
    what: &str,
) {
    let (key, path) = an_endpoint(app).await;
    let answer = app.request_raw("PATCH", &path, &key, patch).await;
    assert_problem(&answer, status, kind, "description", what);
    assert_eq!(
        description(app, &key, &path).await,
        "",
        "{what}: the refused patch should change nothing"
    );
}

/// The description the partner reads for the endpoint at `path`.
pub async fn description(app: &TestApp, key: &str, path: &str) -> serde_json::Value {
    let (status, now, _) = app.request("GET", path, key, None).await;
    assert_eq!(status, 200, "{now}");
    now["description"].clone()
}
