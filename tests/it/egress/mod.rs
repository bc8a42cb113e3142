//! The egress boundary, attacked on the real delivery path: every spelling of
//! a loopback literal is refused at registration and never contacted at
//! delivery, even when the endpoint row was written straight into the
//! database; a redirect is never followed. Names: `names` (what a name
//! resolves to, at each delivery) and `tls` (the hostname verified while the
//! pinned address is dialled).

mod names;
mod proxy;
mod tls;

use actix::Actor as _;
use hookd::{
    config::Config,
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, RegistrationError, UrlError, check_registration},
    },
};
use serde_json::json;

type Attempt = hookd::store::entity::attempt::Model;

use crate::harness::{
    Backend, QUIET, TestApp, WAIT,
    dns::FakeDns,
    receiver::{Receiver, Reply},
    spawn_app_with, stays_quiet, wait_until,
};
use hookd_test_macros::both_backends;

/// Fails if `receiver` accepts a connection during `QUIET`.
async fn never_contacted(receiver: &Receiver, what: &str) {
    stays_quiet(QUIET, || async {
        let n = receiver.connections();
        (n > 0).then(|| format!("{what} accepted {n} connection(s)"))
    })
    .await;
}

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

/// The egress rules with plain http and any port allowed (but no loopback
/// address), and a resolver that applies them.
fn strict_rules() -> (EgressRules, actix::Addr<ResolverActor>) {
    let env = [
        ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
        ("HOOKD_EGRESS__ALLOWED_PORTS", "[]"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let config = Config::load(None, env).expect("valid");
    let rules = EgressRules::from_config(&config.egress);
    let resolver = ResolverActor::new(&config.egress, rules.policy.clone())
        .expect("a resolver")
        .start();
    (rules, resolver)
}

#[hookd_test_macros::test]
async fn every_loopback_spelling_is_refused_at_registration() {
    let (rules, resolver) = strict_rules();
    for url in loopback_spellings(8443) {
        match check_registration(&url, &rules, &resolver).await {
            Err(RegistrationError::Url(UrlError::Forbidden(_))) => {}
            other => panic!("{url} must be refused as a forbidden address, got {other:?}"),
        }
    }
}

#[hookd_test_macros::test]
async fn private_metadata_and_special_addresses_are_refused_at_registration() {
    let (rules, resolver) = strict_rules();
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

#[both_backends]
async fn a_stored_loopback_url_in_any_spelling_is_never_contacted(backend: Backend) {
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
        let attempt = first_attempt_to(&app, &event, endpoint, url).await;
        assert_eq!(
            attempt.error_category.as_deref(),
            Some("blocked"),
            "{url}: {:?}",
            attempt.error_detail
        );
        assert!(attempt.remote_addr.is_none(), "{url} was dialled");
    }
    never_contacted(&receiver, "the loopback receiver").await;
}

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

/// Asserts `attempt` failed as `category`, showing its detail otherwise.
fn assert_failed_as(attempt: &Attempt, category: &str) {
    assert_eq!(
        attempt.error_category.as_deref(),
        Some(category),
        "{:?}",
        attempt.error_detail
    );
}

/// Like `assert_failed_as`, and its detail (shown to the partner) names
/// `named`.
fn assert_failed_naming(attempt: &Attempt, category: &str, named: &str) {
    assert_failed_as(attempt, category);
    assert!(
        attempt
            .error_detail
            .as_deref()
            .is_some_and(|d| d.contains(named)),
        "the detail names {named}: {:?}",
        attempt.error_detail
    );
}

/// The first attempt of `event` to `endpoint`, once recorded.
async fn first_attempt(app: &TestApp, event: &str, endpoint: &str) -> Attempt {
    first_attempt_to(app, event, endpoint, event).await
}

/// Like `first_attempt`, naming `what` (say, the endpoint's URL) when no
/// attempt is recorded within `WAIT`.
async fn first_attempt_to(app: &TestApp, event: &str, endpoint: &str, what: &str) -> Attempt {
    wait_until(WAIT, || async {
        app.attempts(event, endpoint).await.into_iter().next()
    })
    .await
    .unwrap_or_else(|| panic!("no attempt recorded for {what}"))
}

#[both_backends]
async fn a_redirect_to_an_internal_address_is_not_followed(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.1/32"]"#)],
    )
    .await;
    a_redirect_inward_is_not_followed(&app).await;
}

/// Delivers one event to a receiver on 127.0.0.1 that redirects to another
/// on 127.0.0.2 (same port), and checks the redirect was recorded and not
/// followed; the port.
async fn a_redirect_inward_is_not_followed(app: &TestApp) -> u16 {
    let redirecting = Receiver::start().await;
    let port = redirecting.addr().port();
    let internal = Receiver::start_on(format!("127.0.0.2:{port}").parse().unwrap())
        .await
        .expect("binds");
    let location = format!("http://127.0.0.2:{port}/admin");
    redirecting.set_default(Reply::redirect_to(&location));
    let (endpoint, _) = app.endpoint(&redirecting.url()).await;
    let event = app.publish("a.b", json!({})).await;
    let attempt = first_attempt(app, &event, &endpoint).await;
    // The Location is shown to the partner.
    assert_failed_naming(&attempt, "redirect", &location);
    never_contacted(&internal, "the redirect target").await;
    port
}
