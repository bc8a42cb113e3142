//! Mutual TLS: a receiver that requires a client certificate accepts the
//! endpoint's, and refuses an endpoint without one (the attempt fails as
//! `tls`); the certificate's subject and expiry are shown, its key never.

use serde_json::json;

use super::{endpoint_at_receiver, endpoint_at_receiver_url, expect_status};
use crate::harness::{
    Backend, TestApp, WAIT, receiver::Receiver, spawn_app_with, tls::TestCa, wait_until,
};
use hookd_test_macros::both_backends;

/// hookd trusting `server_ca`, and a TLS receiver on 127.0.0.1 with a
/// certificate of it that requires a client certificate of `client_ca`.
pub(crate) async fn app_and_receiver(
    backend: Backend,
    server_ca: &TestCa,
    client_ca: &TestCa,
) -> (TestApp, Receiver, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, server_ca.ca_pem()).expect("the CA file is written");
    let ca_path = ca_file.display().to_string();
    let app = spawn_app_with(
        backend,
        &[("HOOKD_EGRESS__EXTRA_CA_FILE", ca_path.as_str())],
    )
    .await;
    let receiver = Receiver::start_tls(
        "127.0.0.1:0".parse().unwrap(),
        server_ca.server_config_requiring_clients_of(&["127.0.0.1"], client_ca),
    )
    .await
    .expect("a TLS receiver");
    (app, receiver, dir)
}

#[both_backends]
async fn a_receiver_requiring_a_client_certificate_accepts_the_endpoints_and_refuses_none(
    backend: Backend,
) {
    let (server_ca, client_ca) = (TestCa::new(), TestCa::new());
    let (app, receiver, _dir) = app_and_receiver(backend, &server_ca, &client_ca).await;
    let url = format!("https://127.0.0.1:{}/hook", receiver.addr().port());
    let (with, key) = endpoint_at_receiver_url(&app, &url).await;
    let (without, _) = endpoint_at_receiver_url(&app, &url).await;

    let (cert, private_key) = client_ca.client_cert("hookd.partner.test");
    let path = format!("/v1/endpoints/{with}/auth/client-certificate");
    let body = json!({"certificate": cert, "private_key": private_key});
    let set = expect_status(&app.request("PUT", &path, &key, Some(&body)).await, 200);
    assert_eq!(
        set["client_certificate"]["subject"], "CN=hookd.partner.test",
        "{set}"
    );
    assert!(set["client_certificate"]["expires_at"].is_string(), "{set}");
    assert!(!set.to_string().contains("PRIVATE KEY"), "{set}");

    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &with, "delivered", WAIT).await;
    let refused = wait_until(WAIT, || async {
        app.attempts(&event, &without).await.into_iter().next()
    })
    .await
    .expect("an attempt without a certificate");
    assert_eq!(
        refused.error_category.as_deref(),
        Some("tls"),
        "{:?}",
        refused.error_detail
    );
    assert_eq!(
        receiver.count(),
        1,
        "only the endpoint with the certificate got through"
    );
}

#[both_backends]
async fn a_key_that_does_not_match_the_certificate_is_refused(backend: Backend) {
    let ca = TestCa::new();
    let app = crate::harness::spawn_app(backend).await;
    let (_receiver, id, key) = endpoint_at_receiver(&app).await;
    let (cert, _) = ca.client_cert("one.test");
    let (_, other_key) = ca.client_cert("two.test");
    let path = format!("/v1/endpoints/{id}/auth/client-certificate");
    let answer = app
        .request(
            "PUT",
            &path,
            &key,
            Some(&json!({"certificate": cert, "private_key": other_key})),
        )
        .await;
    assert_eq!(answer.0, 422, "{}", answer.1);
    assert_eq!(answer.1["field"], "private_key", "{}", answer.1);
    let answer = app
        .request(
            "PUT",
            &path,
            &key,
            Some(&json!({"certificate": "not a certificate", "private_key": other_key})),
        )
        .await;
    assert_eq!(answer.0, 422, "{}", answer.1);
}

#[both_backends]
async fn the_owner_hears_once_when_a_client_certificate_comes_within_14_days_of_expiring(
    backend: Backend,
) {
    use chrono::Datelike as _;
    use hookd::domain::clock::Clock as _;
    let app = spawn_app_with(backend, &[("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms")]).await;
    let (_receiver, id, key) = endpoint_at_receiver(&app).await;
    let day = 86_400_000;
    let expiry = chrono::DateTime::from_timestamp_millis(app.clock.now_ms() + 20 * day).unwrap();
    let until = (expiry.year(), expiry.month() as u8, expiry.day() as u8);
    let (cert, private_key) = TestCa::new().client_cert_until("soon.partner.test", Some(until));
    let path = format!("/v1/endpoints/{id}/auth/client-certificate");
    let body = json!({"certificate": cert, "private_key": private_key});
    expect_status(&app.request("PUT", &path, &key, Some(&body)).await, 200);
    let announced = || async {
        app.count(
            "SELECT COUNT(*) AS n FROM outbox_event WHERE type = 'endpoint.certificate_expiring'",
        )
        .await
    };
    crate::harness::stays_quiet(crate::harness::QUIET, || async {
        let n = announced().await;
        (n > 0).then(|| format!("warned {n} times 19 days ahead"))
    })
    .await;

    app.advance(std::time::Duration::from_secs(7 * 86_400));
    wait_until(WAIT, || async { (announced().await == 1).then_some(()) })
        .await
        .expect("one warning 12 to 13 days ahead");
    crate::harness::stays_quiet(crate::harness::QUIET, || async {
        let n = announced().await;
        (n != 1).then(|| format!("warned {n} times"))
    })
    .await;
    use sea_orm::ConnectionTrait as _;
    let backend = app.db().get_database_backend();
    let sql = "SELECT payload FROM outbox_event WHERE type = 'endpoint.certificate_expiring'";
    let payload: String = app
        .db()
        .query_one_raw(sea_orm::Statement::from_string(backend, sql))
        .await
        .expect("the query runs")
        .expect("the warning")
        .try_get("", "payload")
        .expect("its payload");
    let data: serde_json::Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(data["endpoint_id"], id.as_str(), "{data}");
    assert_eq!(data["subject"], "CN=soon.partner.test", "{data}");
}
