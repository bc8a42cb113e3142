//! https to a name: the connection goes to the address the name resolved
//! to, and the certificate is verified for the name (SNI too).

use serde_json::json;

use super::{app_with_dns, assert_failed_as, first_attempt};
use crate::harness::{Backend, TestApp, WAIT, dns::FakeDns, receiver::Receiver, tls::TestCa};
use hookd_test_macros::both_backends;

/// An event published to `https://hooks.test:<port>/hook`, with hookd
/// trusting a test CA and `hooks.test` resolving to 127.0.0.1, where a TLS
/// receiver shows a certificate of that CA for other names or its own.
struct OverTls {
    app: TestApp,
    receiver: Receiver,
    endpoint: String,
    event: String,
    /// The DNS server and the CA file, which must live as long as the app.
    _keep: (FakeDns, tempfile::TempDir),
}

/// Publishes one event to `hooks.test`, whose receiver's certificate is
/// for `certificate_names`.
async fn published_over_tls(backend: Backend, certificate_names: &[&str]) -> OverTls {
    let dns = FakeDns::start().await;
    let ca = TestCa::new();
    let (dir, ca_path) = ca.ca_file();
    let app = app_with_dns(
        backend,
        &dns,
        r#"["127.0.0.1/32"]"#,
        &[("HOOKD_EGRESS__EXTRA_CA_FILE", ca_path.as_str())],
    )
    .await;
    dns.answer("hooks.test", vec!["127.0.0.1".parse().unwrap()]);
    let receiver = Receiver::start_tls(
        "127.0.0.1:0".parse().unwrap(),
        ca.server_config(certificate_names),
    )
    .await
    .expect("tls");
    let url = format!("https://hooks.test:{}/hook", receiver.addr().port());
    let (endpoint, _) = app.endpoint(&url).await;
    let event = app.publish("a.b", json!({})).await;
    OverTls {
        app,
        receiver,
        endpoint,
        event,
        _keep: (dns, dir),
    }
}

#[both_backends]
async fn https_dials_the_pinned_address_with_the_urls_hostname_as_sni(backend: Backend) {
    let right = published_over_tls(backend, &["hooks.test"]).await;
    right
        .app
        .wait_for_state(&right.event, &right.endpoint, "delivered", WAIT)
        .await;
    assert_eq!(
        right.receiver.sni(),
        vec![Some("hooks.test".to_string())],
        "SNI carries the URL's hostname, not the address"
    );
}

#[both_backends]
async fn https_refuses_a_certificate_for_another_name(backend: Backend) {
    let wrong = published_over_tls(backend, &["other.test"]).await;
    let attempt = first_attempt(&wrong.app, &wrong.event, &wrong.endpoint).await;
    assert_failed_as(&attempt, "tls");
    assert_eq!(
        wrong.receiver.count(),
        0,
        "no request crossed a certificate for another name"
    );
}
