//! Static headers: sent with every delivery, beside (never instead of) the
//! signature headers; stored sealed; shown only as `[redacted]`.

use serde_json::json;

use super::{endpoint_at_receiver, expect_status};
use crate::harness::{WAIT, spawn_app};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_configured_authorization_header_reaches_the_receiver_and_is_never_shown(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let (receiver, id, key) = endpoint_at_receiver(&app).await;
    let path = format!("/v1/endpoints/{id}/auth/headers");
    let body = json!({"headers": {"Authorization": "Bearer gw-s3cret-token", "X-Tenant": "acme"}});
    let set = expect_status(&app.request("PUT", &path, &key, Some(&body)).await, 200);
    assert_eq!(
        set["headers"],
        json!({"authorization": "[redacted]", "x-tenant": "[redacted]"}),
        "{set}"
    );

    app.publish("a.b", json!({})).await;
    let got = receiver.wait_for(1, WAIT).await.expect("a delivery");
    assert_eq!(
        got[0].header("authorization"),
        Some("Bearer gw-s3cret-token")
    );
    assert_eq!(got[0].header("x-tenant"), Some("acme"));
    assert!(got[0].header("webhook-signature").is_some(), "still signed");

    let shown = app
        .request("GET", &format!("/v1/endpoints/{id}/auth"), &key, None)
        .await;
    assert!(!shown.1.to_string().contains("gw-s3cret"), "{}", shown.1);
    let stored = app
        .count("SELECT COUNT(*) AS n FROM endpoint_auth WHERE headers_sealed LIKE '%gw-s3cret%' OR header_names LIKE '%gw-s3cret%'")
        .await;
    assert_eq!(stored, 0, "the value is not stored in the clear");

    expect_status(&app.request("DELETE", &path, &key, None).await, 200);
    app.publish("a.b", json!({})).await;
    let got = receiver.wait_for(2, WAIT).await.expect("a second delivery");
    assert_eq!(
        got[1].header("authorization"),
        None,
        "removed headers are not sent"
    );
}

#[both_backends]
async fn headers_hookd_or_http_own_are_refused_with_the_name(backend: Backend) {
    let app = spawn_app(backend).await;
    let (_receiver, id, key) = endpoint_at_receiver(&app).await;
    let path = format!("/v1/endpoints/{id}/auth/headers");
    for (name, value) in [
        ("Host", "evil.test"),
        ("Content-Length", "0"),
        ("webhook-signature", "v1,forged"),
        ("Transfer-Encoding", "chunked"),
        ("X-Split", "a\r\nX-Evil: 1"),
    ] {
        let answer = app
            .request("PUT", &path, &key, Some(&json!({"headers": {name: value}})))
            .await;
        assert_eq!(answer.0, 422, "{name}: {}", answer.1);
        let field = answer.1["field"].as_str().unwrap_or("");
        assert!(field.starts_with("headers"), "{}", answer.1);
        assert!(
            answer.1["detail"].as_str().unwrap_or("").contains(name),
            "{}",
            answer.1
        );
    }
}
