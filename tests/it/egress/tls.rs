//! https to a name: the connection goes to the address the name resolved
//! to, and the certificate is verified for the name (SNI too).

use serde_json::json;

use super::{app_with_dns, first_attempt};
use crate::harness::{Backend, TestApp, WAIT, dns::FakeDns, receiver::Receiver, tls::TestCa};
use crate::on_both_backends;

/// hookd trusting a test CA, with `hooks.test` resolving to 127.0.0.1; the
/// DNS server and the CA file live as long as what is returned.
async fn hooks_test_over_tls(backend: Backend) -> (TestApp, TestCa, FakeDns, tempfile::TempDir) {
    let dns = FakeDns::start().await;
    let ca = TestCa::new();
    let dir = tempfile::tempdir().expect("a temp dir");
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.ca_pem()).expect("the CA file is written");
    let ca_path = ca_file.display().to_string();
    let app = app_with_dns(
        backend,
        &dns,
        r#"["127.0.0.1/32"]"#,
        &[("HOOKD_EGRESS__EXTRA_CA_FILE", ca_path.as_str())],
    )
    .await;
    dns.answer("hooks.test", vec!["127.0.0.1".parse().unwrap()]);
    (app, ca, dns, dir)
}

on_both_backends!(
    https_dials_the_pinned_address_with_the_urls_hostname_as_sni,
    |backend: Backend| async move {
        let (app, ca, _dns, _dir) = hooks_test_over_tls(backend).await;
        let right = Receiver::start_tls(
            "127.0.0.1:0".parse().unwrap(),
            ca.server_config(&["hooks.test"]),
        )
        .await
        .expect("tls");
        let (endpoint, _) = app
            .endpoint(&format!("https://hooks.test:{}/hook", right.addr().port()))
            .await;
        let event = app.publish("a.b", json!({})).await;
        app.wait_for_state(&event, &endpoint, "delivered", WAIT)
            .await;
        assert_eq!(
            right.sni(),
            vec![Some("hooks.test".to_string())],
            "SNI carries the URL's hostname, not the address"
        );
    }
);

on_both_backends!(
    https_refuses_a_certificate_for_another_name,
    |backend: Backend| async move {
        let (app, ca, _dns, _dir) = hooks_test_over_tls(backend).await;
        let wrong = Receiver::start_tls(
            "127.0.0.1:0".parse().unwrap(),
            ca.server_config(&["other.test"]),
        )
        .await
        .expect("tls");
        let (endpoint, _) = app
            .endpoint(&format!("https://hooks.test:{}/hook", wrong.addr().port()))
            .await;
        let event = app.publish("a.b", json!({})).await;
        let attempt = first_attempt(&app, &event, &endpoint).await;
        assert_eq!(
            attempt.error_category.as_deref(),
            Some("tls"),
            "{:?}",
            attempt.error_detail
        );
        assert_eq!(
            wrong.count(),
            0,
            "no request crossed a certificate for another name"
        );
    }
);
