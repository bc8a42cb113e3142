//! The receiver-credential routes keep to their partner: another partner's
//! key gets 404 on every one of them, and nothing of the owner's changes.

use serde_json::json;

use super::{endpoint_at_receiver, expect_status};
use crate::harness::{spawn_app, tls::TestCa};
use hookd_test_macros::both_backends;

#[both_backends]
async fn another_partners_key_gets_404_on_every_credential_route(backend: Backend) {
    let app = spawn_app(backend).await;
    let (_receiver, id, key) = endpoint_at_receiver(&app).await;
    let headers = format!("/v1/endpoints/{id}/auth/headers");
    expect_status(
        &app.request(
            "PUT",
            &headers,
            &key,
            Some(&json!({"headers": {"X-A": "mine"}})),
        )
        .await,
        200,
    );
    let (_, stranger) = app.another_partner("Mallory").await;
    let (cert, private_key) = TestCa::new().client_cert("mallory.test");
    let token_url = format!(
        "{}/token",
        crate::harness::receiver::Receiver::start().await.url()
    );
    let routes = [
        ("GET", "auth", None),
        (
            "PUT",
            "auth/headers",
            Some(json!({"headers": {"X-A": "theirs"}})),
        ),
        ("DELETE", "auth/headers", None),
        (
            "PUT",
            "auth/oauth2",
            Some(json!({"token_url": token_url, "client_id": "m", "client_secret": "m"})),
        ),
        ("DELETE", "auth/oauth2", None),
        (
            "PUT",
            "auth/client-certificate",
            Some(json!({"certificate": cert, "private_key": private_key})),
        ),
        ("DELETE", "auth/client-certificate", None),
        ("POST", "secret/rotate", Some(json!({"scheme": "v1a"}))),
    ];
    for (method, tail, body) in routes {
        let path = format!("/v1/endpoints/{id}/{tail}");
        let answer = app.request(method, &path, &stranger, body.as_ref()).await;
        assert_eq!(answer.0, 404, "{method} {path}: {}", answer.1);
    }
    let shown = expect_status(
        &app.request("GET", &format!("/v1/endpoints/{id}/auth"), &key, None)
            .await,
        200,
    );
    assert_eq!(shown["headers"], json!({"x-a": "[redacted]"}), "{shown}");
    assert_eq!(shown["oauth2"], json!(null), "{shown}");
    assert_eq!(shown["client_certificate"], json!(null), "{shown}");

    let unknown = app
        .request(
            "DELETE",
            &format!("/v1/endpoints/{id}/auth/bogus"),
            &key,
            None,
        )
        .await;
    assert_eq!(unknown.0, 404, "{}", unknown.1);
    assert_eq!(
        unknown.2.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/problem+json"),
        "an unknown part is a problem like any unknown route"
    );
}
