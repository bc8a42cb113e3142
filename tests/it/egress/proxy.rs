//! Sending through a real proxy (tinyproxy) with `egress.proxy`: deliveries
//! over https and http arrive from the proxy's outgoing address; the proxy is
//! asked only for checked IP addresses (a name rebound to a forbidden
//! address never reaches it, a redirect is not followed through it); a
//! proxy that refuses the tunnel or is down fails the attempt as `proxy`,
//! retried; and the proxy's own loopback address is exempt from the policy
//! only as the proxy, not as a destination.
//!
//! The proxy listens on 127.0.0.6 and connects out from 127.0.0.7; hookd may
//! deliver to 127.0.0.1 alone.

use std::{net::IpAddr, time::Duration};

use serde_json::json;

use super::{
    a_redirect_inward_is_not_followed, app_with_dns, assert_failed_as, assert_failed_naming,
    first_attempt, never_contacted,
};
use crate::harness::{
    Backend, TestApp, WAIT,
    dns::FakeDns,
    quiesce,
    receiver::Receiver,
    tinyproxy::{Setup, Tinyproxy},
    tls::TestCa,
};
use hookd_test_macros::both_backends;

const PROXY_LISTEN: &str = "127.0.0.6";
const PROXY_OUT: &str = "127.0.0.7";
const ONLY_RECEIVERS: &str = r#"["127.0.0.1/32"]"#;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("an IP address")
}

/// A tinyproxy on 127.0.0.6 going out from 127.0.0.7, wanting
/// `basic_auth` if given; `None` when the test is skipped.
async fn proxy(basic_auth: Option<(&'static str, &'static str)>) -> Option<Tinyproxy> {
    Tinyproxy::start(Setup {
        listen: ip(PROXY_LISTEN),
        bind: ip(PROXY_OUT),
        basic_auth,
    })
    .await
}

/// hookd sending through `proxy_url`, resolving names with `dns`, allowed
/// to deliver to 127.0.0.1 only, with `extra` on top.
async fn app_through(
    backend: Backend,
    dns: &FakeDns,
    proxy_url: &str,
    extra: &[(&str, &str)],
) -> TestApp {
    let mut env = vec![("HOOKD_EGRESS__PROXY", proxy_url)];
    env.extend_from_slice(extra);
    app_with_dns(backend, dns, ONLY_RECEIVERS, &env).await
}

/// One event published to a plain receiver on 127.0.0.1, by hookd sending
/// through `proxy_url`.
struct OneEvent {
    app: TestApp,
    receiver: Receiver,
    endpoint: String,
    event: String,
    _dns: FakeDns,
}

async fn one_event_through(proxy_url: &str, extra: &[(&str, &str)]) -> OneEvent {
    let dns = FakeDns::start().await;
    let app = app_through(Backend::Sqlite, &dns, proxy_url, extra).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    OneEvent {
        app,
        receiver,
        endpoint,
        event,
        _dns: dns,
    }
}

/// Every request `receiver` got came from the proxy's outgoing address.
fn all_from_the_proxy(receiver: &Receiver, what: &str) {
    let received = receiver.received();
    assert!(!received.is_empty(), "{what} got nothing");
    for r in received {
        assert_eq!(
            r.peer.ip(),
            ip(PROXY_OUT),
            "{what} was reached from {}, not through the proxy",
            r.peer
        );
    }
}

#[both_backends]
async fn deliveries_over_https_and_http_arrive_through_the_proxy(backend: Backend) {
    let Some(proxy) = proxy(None).await else {
        return;
    };
    let dns = FakeDns::start().await;
    let ca = TestCa::new();
    let (_dir, ca_path) = ca.ca_file();
    let app = app_through(
        backend,
        &dns,
        &proxy.url(None),
        &[("HOOKD_EGRESS__EXTRA_CA_FILE", ca_path.as_str())],
    )
    .await;
    dns.answer("hooks.test", vec![ip("127.0.0.1")]);
    let secure = Receiver::start_tls(
        "127.0.0.1:0".parse().unwrap(),
        ca.server_config(&["hooks.test"]),
    )
    .await
    .expect("tls");
    let plain = Receiver::start().await;
    let https_url = format!("https://hooks.test:{}/hook", secure.addr().port());
    let (https_endpoint, _) = app.endpoint(&https_url).await;
    let (http_endpoint, _) = app.endpoint(&plain.url()).await;
    let event = app.publish("a.b", json!({})).await;
    for endpoint in [&https_endpoint, &http_endpoint] {
        app.wait_for_state(&event, endpoint, "delivered", WAIT)
            .await;
    }
    all_from_the_proxy(&secure, "the https receiver");
    all_from_the_proxy(&plain, "the http receiver");
    assert_eq!(
        secure.sni(),
        vec![Some("hooks.test".to_string())],
        "TLS inside the tunnel carries the URL's host name"
    );
    let asked = proxy.connects();
    for receiver in [&secure, &plain] {
        let target = format!("127.0.0.1:{}", receiver.addr().port());
        assert!(
            asked.contains(&target),
            "the proxy was asked for {target}: {asked:?}"
        );
    }
    assert!(
        asked.iter().all(|t| !t.contains("hooks.test")),
        "the proxy is never given a name: {asked:?}"
    );
}

#[both_backends]
async fn a_name_rebound_to_a_forbidden_address_never_reaches_the_proxy(backend: Backend) {
    let Some(proxy) = proxy(None).await else {
        return;
    };
    let dns = FakeDns::start().await;
    let app = app_through(backend, &dns, &proxy.url(None), &[]).await;
    let good = Receiver::start().await;
    let port = good.addr().port();
    let evil = Receiver::start_on(format!("127.0.0.2:{port}").parse().unwrap())
        .await
        .expect("127.0.0.2 binds");
    dns.answer("rebind.test", vec![ip("127.0.0.1")]);
    let (endpoint, _) = app
        .endpoint(&format!("http://rebind.test:{port}/hook"))
        .await;
    let first = app.publish("a.b", json!({"n": 1})).await;
    app.wait_for_state(&first, &endpoint, "delivered", WAIT)
        .await;
    all_from_the_proxy(&good, "the allowed address");

    for forbidden in ["127.0.0.2", "169.254.169.254"] {
        dns.answer("rebind.test", vec![ip(forbidden)]);
        let next = app.publish("a.b", json!({"to": forbidden})).await;
        let attempt = first_attempt(&app, &next, &endpoint).await;
        assert_failed_naming(&attempt, "blocked", forbidden);
    }
    never_contacted(&evil, "the rebound address").await;
    let asked = proxy.connects();
    assert_eq!(
        asked,
        vec![format!("127.0.0.1:{port}")],
        "the proxy was asked only for the checked address"
    );
}

#[hookd_test_macros::test]
async fn a_redirect_is_not_followed_through_the_proxy() {
    let Some(proxy) = proxy(None).await else {
        return;
    };
    let dns = FakeDns::start().await;
    let app = app_through(Backend::Sqlite, &dns, &proxy.url(None), &[]).await;
    let port = a_redirect_inward_is_not_followed(&app).await;
    assert_eq!(proxy.connects(), vec![format!("127.0.0.1:{port}")]);
    quiesce().await;
}

#[hookd_test_macros::test]
async fn wrong_proxy_credentials_fail_the_attempt_as_proxy_and_it_is_retried() {
    let Some(proxy) = proxy(Some(("hookd", "right-password"))).await else {
        return;
    };
    let wrong = proxy.url(Some("hookd:wrong-password"));
    let OneEvent {
        app,
        receiver,
        endpoint,
        event,
        ..
    } = one_event_through(&wrong, &[("HOOKD_DELIVERY__JITTER", "0")]).await;
    let attempt = first_attempt(&app, &event, &endpoint).await;
    // tinyproxy answers wrong credentials with 401 (none at all: 407).
    assert_failed_naming(&attempt, "proxy", "refused the tunnel: HTTP/1.0 401");
    let detail = attempt.error_detail.clone().unwrap_or_default();
    assert!(!detail.contains("wrong-password"), "{detail}");
    assert_eq!(
        attempt.remote_addr.as_deref(),
        Some(format!("127.0.0.1:{}", receiver.addr().port()).as_str()),
        "the attempt names the destination it tried"
    );
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    app.advance(Duration::from_secs(5));
    let attempts = app.attempts_when(&event, &endpoint, 2).await;
    assert_failed_as(&attempts[1], "proxy");
    assert_eq!(receiver.connections(), 0, "nothing got through");
    quiesce().await;
}

#[hookd_test_macros::test]
async fn the_right_proxy_credentials_open_the_tunnel() {
    let Some(proxy) = proxy(Some(("hookd", "s3cret.pw"))).await else {
        return;
    };
    // Percent-encoded in the URL (needlessly here: tinyproxy's passwords
    // have no characters that need it), and decoded before it is sent.
    let sent = one_event_through(&proxy.url(Some("hookd:s3cret%2Epw")), &[]).await;
    (sent.app)
        .wait_for_state(&sent.event, &sent.endpoint, "delivered", WAIT)
        .await;
    all_from_the_proxy(&sent.receiver, "the receiver");
    quiesce().await;
}

#[hookd_test_macros::test]
async fn a_proxy_that_is_down_fails_the_attempt_as_proxy_not_connect() {
    let Some(mut proxy) = proxy(None).await else {
        return;
    };
    let url = proxy.url(None);
    proxy.stop();
    let OneEvent {
        app,
        receiver,
        endpoint,
        event,
        ..
    } = one_event_through(&url, &[]).await;
    let attempt = first_attempt(&app, &event, &endpoint).await;
    assert_failed_naming(&attempt, "proxy", &format!("cannot reach the proxy {url}"));
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    assert_eq!(receiver.connections(), 0);
    quiesce().await;
}

#[hookd_test_macros::test]
async fn the_proxys_own_address_is_exempt_only_as_the_proxy() {
    let Some(proxy) = proxy(None).await else {
        return;
    };
    let dns = FakeDns::start().await;
    let app = app_through(Backend::Sqlite, &dns, &proxy.url(None), &[]).await;
    // 127.0.0.6 is outside egress.allow_cidrs, yet deliveries go through it.
    let receiver = Receiver::start().await;
    let (allowed, _) = app.endpoint(&receiver.url()).await;
    // The same address as a destination is refused.
    let (to_proxy, _) = app
        .endpoint(&format!("http://{}/anything", proxy.addr))
        .await;
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &allowed, "delivered", WAIT)
        .await;
    let refused = first_attempt(&app, &event, &to_proxy).await;
    assert_failed_naming(&refused, "blocked", PROXY_LISTEN);
    assert!(refused.remote_addr.is_none(), "nothing was dialled");
    assert_eq!(
        proxy.connects(),
        vec![format!("127.0.0.1:{}", receiver.addr().port())],
        "the proxy was asked for the allowed receiver alone"
    );
    quiesce().await;
}

#[hookd_test_macros::test]
async fn a_proxy_that_cannot_reach_the_receiver_fails_the_attempt_as_connect_with_its_status_line()
{
    let Some(proxy) = proxy(None).await else {
        return;
    };
    // A port nothing listens on: the proxy's own connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let dns = FakeDns::start().await;
    let app = app_through(Backend::Sqlite, &dns, &proxy.url(None), &[]).await;
    let (endpoint, _) = app
        .endpoint(&format!("http://127.0.0.1:{closed}/hook"))
        .await;
    let event = app.publish("a.b", json!({})).await;
    let attempt = first_attempt(&app, &event, &endpoint).await;
    // tinyproxy says so with a 500 (squid: 503), named in the detail: the
    // receiver's failure, as without a proxy.
    assert_failed_naming(&attempt, "connect", "refused the tunnel: HTTP/1.");
    let detail = attempt.error_detail.unwrap_or_default();
    let status = detail
        .split("HTTP/1.")
        .nth(1)
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok());
    assert!(
        status.is_some_and(|s| (500..600).contains(&s)),
        "a 5xx status line: {detail}"
    );
    quiesce().await;
}

/// A real listener in the proxy's place that misbehaves: it reads each
/// CONNECT request and closes the connection unanswered (after reading, so
/// with a FIN, not a reset), or, when `closes` is false, holds it and says
/// nothing. Its address and its task.
async fn misbehaving_proxy(closes: bool) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::AsyncReadExt as _;
    let listener = tokio::net::TcpListener::bind((ip(PROXY_LISTEN), 0))
        .await
        .expect("binds");
    let addr = listener.local_addr().expect("its address");
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            if !closes {
                held.push(stream);
                continue;
            }
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.is_ok_and(|n| n == 1)
            {
                head.push(byte[0]);
            }
        }
    });
    (addr, task)
}

#[hookd_test_macros::test]
async fn a_proxy_that_closes_before_answering_fails_the_attempt_as_proxy() {
    let (addr, closer) = misbehaving_proxy(true).await;
    let sent = one_event_through(&format!("http://{addr}"), &[]).await;
    let attempt = first_attempt(&sent.app, &sent.event, &sent.endpoint).await;
    assert_failed_naming(
        &attempt,
        "proxy",
        "closed the connection before answering CONNECT",
    );
    assert_eq!(sent.receiver.connections(), 0);
    closer.abort();
    quiesce().await;
}

#[hookd_test_macros::test]
async fn a_proxy_that_never_answers_fails_the_attempt_as_proxy_within_the_connect_timeout() {
    // The test configuration's connect timeout is 1 s, its request timeout 2 s.
    let (addr, silent) = misbehaving_proxy(false).await;
    let sent = one_event_through(&format!("http://{addr}"), &[]).await;
    let attempt = first_attempt(&sent.app, &sent.event, &sent.endpoint).await;
    assert_failed_naming(
        &attempt,
        "proxy",
        "did not answer CONNECT within the connect timeout",
    );
    silent.abort();
    quiesce().await;
}
