//! The egress boundary, attacked on the real delivery path: every spelling of
//! a loopback literal is refused at registration and never contacted at
//! delivery, even when the endpoint row was written straight into the database.

use std::time::Duration;

use actix::Actor as _;
use hookd::{
    config::Config,
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, RegistrationError, UrlError, check_registration},
    },
};
use serde_json::json;

use crate::harness::{Backend, receiver::Receiver, spawn_app_with};
use crate::on_both_backends;

/// Spellings of 127.0.0.1 that a system resolver would accept.
fn loopback_spellings(port: u16) -> Vec<String> {
    [
        "127.0.0.1",
        "127.1",
        "127.0.1",
        "2130706433",
        "0x7f000001",
        "0x7f.1",
        "017700000001",
        "0177.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "%31%32%37.0.0.1",
        "127.0.0.1.",
        "[::1]",
        "[::127.0.0.1]",
        "[64:ff9b::7f00:1]",
    ]
    .iter()
    .map(|host| format!("http://{host}:{port}/hook"))
    .collect()
}

fn strict_rules() -> (Config, EgressRules) {
    let env = [
        ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
        ("HOOKD_EGRESS__ALLOWED_PORTS", "[]"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let config = Config::load(None, env).expect("valid");
    let rules = EgressRules::from_config(&config.egress);
    (config, rules)
}

#[actix_rt::test]
async fn every_loopback_spelling_is_refused_at_registration() {
    let (config, rules) = strict_rules();
    let resolver = ResolverActor::new(&config.egress, rules.policy.clone())
        .expect("a resolver")
        .start();
    for url in loopback_spellings(8443) {
        match check_registration(&url, &rules, &resolver).await {
            Err(RegistrationError::Url(UrlError::Forbidden(_))) => {}
            other => panic!("{url} must be refused as a forbidden address, got {other:?}"),
        }
    }
}

#[actix_rt::test]
async fn private_metadata_and_special_addresses_are_refused_at_registration() {
    let (config, rules) = strict_rules();
    let resolver = ResolverActor::new(&config.egress, rules.policy.clone())
        .expect("a resolver")
        .start();
    for host in [
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "169.254.169.254",
        "168.63.129.16",
        "[fd00:ec2::254]",
        "0.0.0.0",
        "[fe80::1]",
        "224.0.0.1",
        "198.18.0.1",
    ] {
        let url = format!("https://{host}/hook");
        let refused = check_registration(&url, &rules, &resolver).await;
        assert!(
            matches!(refused, Err(RegistrationError::Url(UrlError::Forbidden(_)))),
            "{url}: {refused:?}"
        );
    }
    let refused = check_registration("https://user:pw@example.com/", &rules, &resolver).await;
    assert!(
        matches!(refused, Err(RegistrationError::Url(UrlError::UserInfo))),
        "{refused:?}"
    );
}

on_both_backends!(
    a_stored_loopback_url_in_any_spelling_is_never_contacted,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_EGRESS__ALLOW_CIDRS", "[]")]).await;
        let receiver = Receiver::start().await;
        let mut endpoints = Vec::new();
        for url in loopback_spellings(receiver.addr().port()) {
            // Written straight into the store, as if registration had been bypassed.
            let (id, _) = app.endpoint(&url).await;
            endpoints.push((id, url));
        }
        let event = app.publish("a.b", json!({})).await;
        for (endpoint, url) in &endpoints {
            let attempts = crate::harness::wait_until(Duration::from_secs(10), || async {
                let a = app.attempts(&event, endpoint).await;
                (!a.is_empty()).then_some(a)
            })
            .await
            .unwrap_or_else(|| panic!("no attempt recorded for {url}"));
            assert_eq!(
                attempts[0].error_category.as_deref(),
                Some("blocked"),
                "{url}: {:?}",
                attempts[0].error_detail
            );
            assert!(attempts[0].remote_addr.is_none(), "{url} was dialled");
        }
        actix_rt::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            receiver.connections(),
            0,
            "nothing connected to the loopback receiver"
        );
    }
);

use crate::harness::{TestApp, dns::FakeDns, receiver::Reply, tls::TestCa};

/// hookd resolving names through a fake DNS server, with `allow` as the only
/// loopback addresses it may contact.
async fn app_with_dns(
    backend: Backend,
    dns: &FakeDns,
    allow: &str,
    extra: &[(&str, &str)],
) -> TestApp {
    let ns = format!("[\"{}\"]", dns.addr());
    let mut env = vec![
        ("HOOKD_EGRESS__NAMESERVERS", ns.as_str()),
        ("HOOKD_EGRESS__ALLOW_CIDRS", allow),
    ];
    env.extend_from_slice(extra);
    spawn_app_with(backend, &env).await
}

async fn first_attempt(
    app: &TestApp,
    event: &str,
    endpoint: &str,
) -> hookd::store::entity::attempt::Model {
    crate::harness::wait_until(Duration::from_secs(10), || async {
        app.attempts(event, endpoint).await.into_iter().next()
    })
    .await
    .unwrap_or_else(|| panic!("no attempt recorded for {event}"))
}

on_both_backends!(
    dns_rebinding_never_reaches_a_forbidden_address,
    |backend: Backend| async move {
        let dns = FakeDns::start().await;
        let app = app_with_dns(backend, &dns, r#"["127.0.0.1/32", "127.0.0.3/32"]"#, &[]).await;
        let good = Receiver::start().await;
        let port = good.addr().port();
        let evil = Receiver::start_on(format!("127.0.0.2:{port}").parse().unwrap())
            .await
            .expect("127.0.0.2 binds");
        let moved = Receiver::start_on(format!("127.0.0.3:{port}").parse().unwrap())
            .await
            .expect("127.0.0.3 binds");

        dns.answer("rebind.test", vec!["127.0.0.1".parse().unwrap()]);
        let url = format!("http://rebind.test:{port}/hook");
        check_registration(
            &url,
            &app.running.shared.rules,
            &app.running.engine.resolver,
        )
        .await
        .expect("the name resolves to an allowed address at registration");
        let (endpoint, _) = app.endpoint(&url).await;
        app.publish("a.b", json!({"n": 1})).await;
        good.wait_for(1, Duration::from_secs(10))
            .await
            .expect("delivered to the address checked at registration");

        // The name now points inside: the next delivery is refused before any connection.
        dns.answer("rebind.test", vec!["127.0.0.2".parse().unwrap()]);
        let second = app.publish("a.b", json!({"n": 2})).await;
        let attempt = first_attempt(&app, &second, &endpoint).await;
        assert_eq!(
            attempt.error_category.as_deref(),
            Some("blocked"),
            "{:?}",
            attempt.error_detail
        );
        assert!(
            attempt
                .error_detail
                .as_deref()
                .is_some_and(|d| d.contains("127.0.0.2")),
            "{:?}",
            attempt.error_detail
        );
        assert_eq!(
            evil.connections(),
            0,
            "the rebound address was never connected to"
        );

        // It moves to another allowed address: the retry dials it, not the
        // kept-alive connection to the old one.
        dns.answer("rebind.test", vec!["127.0.0.3".parse().unwrap()]);
        app.advance(Duration::from_secs(10));
        moved
            .wait_for(1, Duration::from_secs(10))
            .await
            .expect("the retry reaches the new address");
        assert_eq!(
            good.count(),
            1,
            "no request went over the old pooled connection"
        );
        assert_eq!(evil.connections(), 0);
        assert!(
            dns.queries("rebind.test") >= 3,
            "every delivery resolved the name again"
        );
    }
);

on_both_backends!(
    a_name_with_any_forbidden_address_is_refused,
    |backend: Backend| async move {
        let dns = FakeDns::start().await;
        let app = app_with_dns(backend, &dns, r#"["127.0.0.1/32"]"#, &[]).await;
        let receiver = Receiver::start().await;
        dns.answer(
            "mixed.test",
            vec!["127.0.0.1".parse().unwrap(), "10.0.0.1".parse().unwrap()],
        );
        let url = format!("http://mixed.test:{}/hook", receiver.addr().port());
        let refused = check_registration(
            &url,
            &app.running.shared.rules,
            &app.running.engine.resolver,
        )
        .await;
        assert!(
            matches!(refused, Err(RegistrationError::Resolve(_))),
            "{refused:?}"
        );

        let (endpoint, _) = app.endpoint(&url).await;
        let event = app.publish("a.b", json!({})).await;
        let attempt = first_attempt(&app, &event, &endpoint).await;
        assert_eq!(attempt.error_category.as_deref(), Some("blocked"));
        assert!(
            attempt
                .error_detail
                .as_deref()
                .is_some_and(|d| d.contains("10.0.0.1")),
            "{:?}",
            attempt.error_detail
        );
        assert_eq!(
            receiver.connections(),
            0,
            "not even the allowed address of a refused name is contacted"
        );
    }
);

on_both_backends!(
    an_unknown_name_fails_as_dns_and_is_retried,
    |backend: Backend| async move {
        let dns = FakeDns::start().await;
        let app = app_with_dns(backend, &dns, r#"["127.0.0.1/32"]"#, &[]).await;
        let (endpoint, _) = app.endpoint("http://nowhere.test:8443/hook").await;
        let event = app.publish("a.b", json!({})).await;
        let attempt = first_attempt(&app, &event, &endpoint).await;
        assert_eq!(
            attempt.error_category.as_deref(),
            Some("dns"),
            "{:?}",
            attempt.error_detail
        );
        app.wait_for_state(&event, &endpoint, "failed", Duration::from_secs(10))
            .await;
    }
);

on_both_backends!(
    https_verifies_the_hostname_while_dialling_the_pinned_address,
    |backend: Backend| async move {
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
        right
            .wait_for(1, Duration::from_secs(10))
            .await
            .expect("delivered over TLS");
        assert_eq!(
            right.sni(),
            vec![Some("hooks.test".to_string())],
            "SNI carries the URL's hostname, not the address"
        );
        app.wait_for_state(&event, &endpoint, "delivered", Duration::from_secs(10))
            .await;

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
        let attempt = crate::harness::wait_until(Duration::from_secs(10), || async {
            app.attempts(&event, &endpoint).await.into_iter().next()
        })
        .await
        .expect("an attempt");
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

on_both_backends!(
    a_redirect_to_an_internal_address_is_not_followed,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.1/32"]"#)],
        )
        .await;
        let redirecting = Receiver::start().await;
        let port = redirecting.addr().port();
        let internal = Receiver::start_on(format!("127.0.0.2:{port}").parse().unwrap())
            .await
            .expect("binds");
        let location = format!("http://127.0.0.2:{port}/admin");
        redirecting.set_default(Reply::Status {
            code: 302,
            headers: vec![("location".into(), location.clone())],
            body: vec![],
        });
        let (endpoint, _) = app.endpoint(&redirecting.url()).await;
        let event = app.publish("a.b", json!({})).await;
        let attempt = first_attempt(&app, &event, &endpoint).await;
        assert_eq!(attempt.error_category.as_deref(), Some("redirect"));
        assert!(
            attempt
                .error_detail
                .as_deref()
                .is_some_and(|d| d.contains(&location)),
            "the Location is shown to the partner"
        );
        actix_rt::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            internal.connections(),
            0,
            "the redirect target was never contacted"
        );
    }
);
