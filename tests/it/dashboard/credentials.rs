//! The endpoint page shows what an endpoint presents to its receiver
//! (header names, the OAuth2 token URL and client id, the client
//! certificate's subject and expiry, the schemes it signs with and its
//! public key) and never a secret: no header value, client secret, private
//! key or signing secret.

use hookd_test_macros::both_backends;
use serde_json::json;

use super::{
    part_of,
    sign_in::{assert_signed_in, client, sign_in},
};
use crate::harness::{expect_status, read_text, receiver::Receiver, spawn_app, tls::TestCa};

#[both_backends]
async fn the_endpoint_page_shows_every_credential_by_name_and_never_a_secret(backend: Backend) {
    let app = spawn_app(backend).await;
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let body = json!({"url": receiver.url()});
    let created = expect_status(
        &app.request("POST", "/v1/endpoints", &key, Some(&body))
            .await,
        201,
    );
    let id = created["id"].as_str().expect("an id").to_string();
    let whsec = created["secret"].as_str().expect("a v1 secret").to_string();
    let put = |part: &str| format!("/v1/endpoints/{id}/auth/{part}");
    let headers = json!({"headers": {"Authorization": "Bearer hdr-s3cret-value"}});
    expect_status(
        &app.request("PUT", &put("headers"), &key, Some(&headers))
            .await,
        200,
    );
    let token_url = format!("{}/token", receiver.url());
    let oauth2 = json!({"token_url": token_url, "client_id": "dash-client", "client_secret": "oauth-s3cret-value"});
    expect_status(
        &app.request("PUT", &put("oauth2"), &key, Some(&oauth2))
            .await,
        200,
    );
    let (cert, private_key) = TestCa::new().client_cert("dash.partner.test");
    let pem = json!({"certificate": cert, "private_key": private_key});
    expect_status(
        &app.request("PUT", &put("client-certificate"), &key, Some(&pem))
            .await,
        200,
    );
    let rotate = format!("/v1/endpoints/{id}/secret/rotate");
    let rotated = app
        .request("POST", &rotate, &key, Some(&json!({"scheme": "v1a"})))
        .await;
    let public_key = expect_status(&rotated, 200)["public_key"]
        .as_str()
        .expect("a public key")
        .to_string();

    let operator = app.operator_key().await;
    let signed = sign_in(&app, &operator, &[]).await;
    assert_signed_in(&signed, "the operator");
    let res = client()
        .get(format!("{}/dashboard/endpoints/{id}", app.base_url))
        .insert_header((
            "cookie",
            format!("hookd_session={}", signed.session.unwrap()),
        ))
        .send()
        .await
        .expect("the page loads");
    let (status, page, _) = read_text(res).await;
    assert_eq!(status, 200, "{page}");
    let credentials = part_of(&page, "id=\"credentials\"", "</dl>");
    for shown in [
        "authorization: [redacted]",
        token_url.as_str(),
        "dash-client",
        "CN=dash.partner.test",
        "<b>v1a</b>",
        public_key.as_str(),
        "<b>v1</b> (previous, signs until",
    ] {
        assert!(credentials.contains(shown), "`{shown}` in {credentials}");
    }
    for secret in [
        "hdr-s3cret-value",
        "oauth-s3cret-value",
        "PRIVATE KEY",
        whsec.as_str(),
        &whsec["whsec_".len()..],
    ] {
        assert!(
            !page.contains(secret),
            "the page shows the secret `{secret}`"
        );
    }
}
