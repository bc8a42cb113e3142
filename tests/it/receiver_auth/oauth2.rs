//! OAuth2 client credentials against a real token endpoint (a harness
//! receiver answering token responses): one token request per token
//! lifetime for all attempts, a fresh token once when the receiver answers
//! 401, a failing token endpoint failing the attempt as `auth`, and the
//! token URL held to the egress policy.

use std::time::Duration;

use base64::Engine as _;
use serde_json::json;

use super::{endpoint_at_receiver, expect_status};
use crate::harness::{
    TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app, wait_until,
};
use hookd_test_macros::both_backends;

fn token(value: &str, expires_in: u64) -> Reply {
    Reply::with_body(
        200,
        json!({"access_token": value, "token_type": "Bearer", "expires_in": expires_in})
            .to_string(),
    )
}

/// Sets OAuth2 on `endpoint` with `token_url`; returns the answer.
async fn set_oauth2(
    app: &TestApp,
    key: &str,
    endpoint: &str,
    token_url: &str,
) -> crate::harness::ApiAnswer {
    let body = json!({
        "token_url": token_url,
        "client_id": "hookd-client",
        "client_secret": "cl!ent s3cret",
        "scope": "webhooks:write",
        "audience": "https://api.partner.test",
    });
    app.request(
        "PUT",
        &format!("/v1/endpoints/{endpoint}/auth/oauth2"),
        key,
        Some(&body),
    )
    .await
}

#[both_backends]
async fn one_token_serves_every_attempt_of_its_lifetime_and_a_401_fetches_one_fresh_token(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let (receiver, id, key) = endpoint_at_receiver(&app).await;
    let issuer = Receiver::start().await;
    issuer.script([
        token("first", 3600),
        token("second", 3600),
        token("third", 3600),
    ]);
    let set = expect_status(
        &set_oauth2(&app, &key, &id, &format!("{}/token", issuer.url())).await,
        200,
    );
    assert_eq!(set["oauth2"]["client_secret"], "[redacted]", "{set}");
    assert!(!set.to_string().contains("s3cret"), "{set}");

    for _ in 0..5 {
        app.publish("a.b", json!({})).await;
    }
    let got = receiver.wait_for(5, WAIT).await.expect("five deliveries");
    assert!(
        got.iter()
            .all(|r| r.header("authorization") == Some("Bearer first")),
        "every attempt carries the one token"
    );
    assert_eq!(issuer.count(), 1, "one token request for five attempts");
    let asked = &issuer.received()[0];
    let basic = base64::engine::general_purpose::STANDARD.encode("hookd-client:cl%21ent+s3cret");
    assert_eq!(
        asked.header("authorization"),
        Some(format!("Basic {basic}").as_str())
    );
    let form = String::from_utf8_lossy(&asked.body);
    assert!(form.contains("grant_type=client_credentials"), "{form}");
    assert!(form.contains("scope=webhooks%3Awrite"), "{form}");
    assert!(
        form.contains("audience=https%3A%2F%2Fapi.partner.test"),
        "{form}"
    );

    // The receiver refuses the token once: one fresh token, the same attempt.
    receiver.script([Reply::status(401)]);
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &id, "delivered", WAIT).await;
    let got = receiver.received();
    assert_eq!(
        got.last().unwrap().header("authorization"),
        Some("Bearer second")
    );
    assert_eq!(issuer.count(), 2, "refreshed once on the 401");
    assert_eq!(
        app.attempts(&event, &id).await.len(),
        1,
        "within one attempt"
    );

    // Past its lifetime (less the margin) the token is fetched again.
    app.advance(Duration::from_secs(3600));
    app.publish("a.b", json!({})).await;
    let got = receiver
        .wait_for(8, WAIT)
        .await
        .expect("an eighth delivery");
    assert_eq!(got[7].header("authorization"), Some("Bearer third"));
    assert_eq!(issuer.count(), 3);
}

#[both_backends]
async fn a_token_endpoint_that_refuses_the_client_fails_the_attempt_as_auth(backend: Backend) {
    let app = spawn_app(backend).await;
    let (receiver, id, key) = endpoint_at_receiver(&app).await;
    let issuer = Receiver::start().await;
    issuer.set_default(Reply::with_body(
        401,
        json!({"error": "invalid_client", "error_description": "unknown client"}).to_string(),
    ));
    expect_status(
        &set_oauth2(&app, &key, &id, &format!("{}/token", issuer.url())).await,
        200,
    );
    let event = app.publish("a.b", json!({})).await;
    let attempt = wait_until(WAIT, || async {
        app.attempts(&event, &id).await.into_iter().next()
    })
    .await
    .expect("an attempt");
    assert_eq!(
        attempt.error_category.as_deref(),
        Some("auth"),
        "{attempt:?}"
    );
    let detail = attempt.error_detail.unwrap_or_default();
    assert!(detail.contains("invalid_client"), "{detail}");
    assert_eq!(receiver.count(), 0, "nothing was sent without a token");
    let (state, _) = app.delivery(&event, &id).await.expect("the delivery");
    assert_eq!(state, "failed", "retried on the schedule");
}

#[both_backends]
async fn a_token_url_at_a_forbidden_address_is_refused_and_never_contacted(backend: Backend) {
    let app = spawn_app(backend).await;
    let (_receiver, id, key) = endpoint_at_receiver(&app).await;
    for url in [
        "http://169.254.169.254/latest/meta-data/iam",
        "http://10.0.0.1/token",
        "http://[::1]:9/token",
    ] {
        let answer = set_oauth2(&app, &key, &id, url).await;
        assert_eq!(answer.0, 422, "{url}: {}", answer.1);
        assert_eq!(answer.1["field"], "token_url", "{}", answer.1);
    }
}

#[both_backends]
async fn a_token_host_that_rebinds_to_a_forbidden_address_is_never_contacted(backend: Backend) {
    let dns = crate::harness::dns::FakeDns::start().await;
    let ns = format!("[\"{}\"]", dns.addr());
    let app = crate::harness::spawn_app_with(
        backend,
        &[
            ("HOOKD_EGRESS__NAMESERVERS", ns.as_str()),
            ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.1/32"]"#),
        ],
    )
    .await;
    let (receiver, id, key) = endpoint_at_receiver(&app).await;
    let issuer = Receiver::start().await;
    issuer.set_default(token("never", 3600));
    let port = issuer.addr().port();
    // Allowed when registered; forbidden (127.0.0.3 is outside the allowed
    // CIDR) when the token is fetched, where a listener would count a contact.
    let forbidden = Receiver::start_on(format!("127.0.0.3:{port}").parse().unwrap())
        .await
        .expect("a listener on 127.0.0.3");
    forbidden.set_default(token("stolen", 3600));
    dns.answer("tokens.test", vec!["127.0.0.1".parse().unwrap()]);
    let url = format!("http://tokens.test:{port}/token");
    expect_status(&set_oauth2(&app, &key, &id, &url).await, 200);
    dns.answer("tokens.test", vec!["127.0.0.3".parse().unwrap()]);

    let event = app.publish("a.b", json!({})).await;
    let attempt = wait_until(WAIT, || async {
        app.attempts(&event, &id).await.into_iter().next()
    })
    .await
    .expect("an attempt");
    assert_eq!(
        attempt.error_category.as_deref(),
        Some("auth"),
        "{attempt:?}"
    );
    let detail = attempt.error_detail.unwrap_or_default();
    assert!(detail.contains("forbidden"), "{detail}");
    assert_eq!(
        forbidden.connections(),
        0,
        "the forbidden address was never contacted"
    );
    assert_eq!(issuer.count(), 0);
    assert_eq!(receiver.count(), 0, "nothing was sent without a token");
}
