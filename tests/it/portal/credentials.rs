//! Receiver credentials in the portal, in a real browser: an endpoint
//! created with `v1a` shows its public key; static headers and OAuth2
//! client credentials set from their forms reach the receiver with the
//! next delivery; a client certificate set from its form gets a delivery
//! through a receiver that requires one; rotating to `v1a` lists the new
//! public key. After each, the page shows the credential redacted and
//! never the secret typed into the form.

use hookd_test_macros::both_backends;
use serde_json::json;

use super::{SignedIn, open, signed_in_page, signed_in_portal, submit, text};
use crate::harness::{
    SLOW,
    browser::{Browser, Page, skip_browser},
    receiver::{Receiver, Reply},
    tls::TestCa,
};

/// The whole page as the browser holds it, form fields included.
async fn html_of(page: &mut Page) -> String {
    let html = page.eval("document.documentElement.outerHTML").await;
    html.as_str().unwrap_or_default().to_string()
}

/// Asserts the page says `done` and holds none of `secrets`.
async fn done_and_redacted(page: &mut Page, done: &str, secrets: &[&str]) {
    assert_eq!(text(page, "[role=status]").await, done);
    let html = html_of(page).await;
    for secret in secrets {
        assert!(!html.contains(secret), "the page shows `{secret}`");
    }
}

#[both_backends]
async fn headers_and_oauth2_set_in_the_portal_reach_the_receiver_of_a_v1a_endpoint_and_stay_redacted(
    backend: Backend,
) {
    let Some(SignedIn {
        app: _app,
        mut page,
        browser: _browser,
        ..
    }) = signed_in_portal(backend).await
    else {
        return;
    };
    let receiver = Receiver::start().await;
    page.navigate_by(&submit(
        "form[action='/portal/endpoints']",
        &[("url", &receiver.url()), ("signature_scheme", "v1a")],
    ))
    .await;
    let public_key = text(&mut page, "#secret").await;
    assert!(
        public_key.starts_with("whpk_"),
        "the v1a public key is shown: {public_key}"
    );
    assert_eq!(
        text(&mut page, "#public-keys code").await,
        public_key,
        "and listed"
    );

    page.navigate_by(&submit(
        "#headers-form",
        &[
            ("header_name_0", "X-Gateway-Key"),
            ("header_value_0", "gw-portal-s3cret"),
            ("header_name_1", "X-Tenant"),
            ("header_value_1", "acme"),
        ],
    ))
    .await;
    done_and_redacted(&mut page, "Headers set.", &["gw-portal-s3cret", "acme"]).await;
    assert_eq!(
        text(&mut page, "#auth-headers").await,
        "x-gateway-key: [redacted] x-tenant: [redacted] "
    );

    let issuer = Receiver::start().await;
    let token = json!({"access_token": "portal-token", "token_type": "Bearer", "expires_in": 3600});
    issuer.set_default(Reply::with_body(200, token.to_string()));
    let token_url = format!("{}/token", issuer.url());
    page.navigate_by(&submit(
        "#oauth2-form",
        &[
            ("token_url", &token_url),
            ("client_id", "portal-client"),
            ("client_secret", "oauth-portal-s3cret"),
            ("scope", "hooks"),
        ],
    ))
    .await;
    done_and_redacted(
        &mut page,
        "OAuth2 client credentials set.",
        &["oauth-portal-s3cret"],
    )
    .await;
    let oauth2 = text(&mut page, "#auth-oauth2").await;
    for shown in [token_url.as_str(), "portal-client", "[redacted]"] {
        assert!(oauth2.contains(shown), "`{shown}` in {oauth2}");
    }

    page.navigate_by("document.querySelector(\"form[action$='/test']\").submit()")
        .await;
    let got = receiver
        .wait_for(1, SLOW)
        .await
        .expect("the test event arrives");
    assert_eq!(got[0].header("x-gateway-key"), Some("gw-portal-s3cret"));
    assert_eq!(got[0].header("x-tenant"), Some("acme"));
    assert_eq!(got[0].header("authorization"), Some("Bearer portal-token"));
    let signature = got[0].header("webhook-signature").unwrap_or_default();
    assert!(
        signature.starts_with("v1a,"),
        "signed with v1a: {signature}"
    );

    page.navigate_by("document.querySelector(\"form[action$='/auth/headers/remove']\").submit()")
        .await;
    assert_eq!(text(&mut page, "#auth-headers").await, "none");
}

#[both_backends]
async fn a_client_certificate_set_in_the_portal_gets_a_delivery_through_a_receiver_requiring_one(
    backend: Backend,
) {
    if skip_browser() {
        return;
    }
    let (server_ca, client_ca) = (TestCa::new(), TestCa::new());
    let (app, receiver, _dir) =
        crate::receiver_auth::mtls::app_and_receiver(backend, &server_ca, &client_ca).await;
    let key = app.partner_key().await;
    let url = format!("https://127.0.0.1:{}/hook", receiver.addr().port());
    let created = app
        .request("POST", "/v1/endpoints", &key, Some(&json!({"url": url})))
        .await;
    let id = created.1["id"].as_str().expect("an endpoint").to_string();
    let browser = Browser::launch().await;
    let mut page = signed_in_page(&app, &browser, &key).await;
    open(&mut page, &app, &format!("/portal/endpoints/{id}")).await;
    assert_eq!(text(&mut page, "#auth-certificate").await, "none");

    let (cert, private_key) = client_ca.client_cert("portal.partner.test");
    page.navigate_by(&submit(
        "#certificate-form",
        &[("certificate", &cert), ("private_key", &private_key)],
    ))
    .await;
    done_and_redacted(
        &mut page,
        "Client certificate set.",
        &["PRIVATE KEY", "BEGIN CERTIFICATE"],
    )
    .await;
    let shown = text(&mut page, "#auth-certificate").await;
    assert!(
        shown.starts_with("CN=portal.partner.test, expires "),
        "{shown}"
    );

    page.navigate_by("document.querySelector(\"form[action$='/test']\").submit()")
        .await;
    receiver
        .wait_for(1, SLOW)
        .await
        .expect("the receiver takes the certificate");

    page.navigate_by(&submit(
        "form[action$='/rotate']",
        &[("rotate_scheme", "v1a")],
    ))
    .await;
    let public_key = text(&mut page, "#secret").await;
    assert!(public_key.starts_with("whpk_"), "{public_key}");
    assert_eq!(text(&mut page, "#public-keys code").await, public_key);
}
