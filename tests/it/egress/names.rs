//! What a name resolves to decides each delivery, not registration: a name
//! rebound to a forbidden address is refused before any connection, one
//! moved to another allowed address is dialled there, a name with any
//! forbidden address is refused whole, and an unknown name fails as `dns`
//! and is retried on schedule.

use std::time::Duration;

use hookd::{
    domain::clock::Clock as _,
    egress::url_check::{RegistrationError, check_registration},
};
use serde_json::json;

use super::{app_with_dns, assert_failed_as, assert_failed_naming, first_attempt, never_contacted};
use crate::harness::{
    Backend, QUIET, TestApp, WAIT, dns::FakeDns, receiver::Receiver, stays_quiet, wait_until,
};
use hookd_test_macros::both_backends;

/// A name checked at registration and delivered to once: the fake DNS, hookd
/// allowed 127.0.0.1 and 127.0.0.3 only, receivers on 127.0.0.1 (`good`,
/// which got the first delivery), 127.0.0.2 (`evil`) and 127.0.0.3 (`moved`)
/// on one port, and the endpoint at `http://rebind.test:<port>/hook`.
struct Rebinding {
    dns: FakeDns,
    app: TestApp,
    good: Receiver,
    evil: Receiver,
    moved: Receiver,
    endpoint: String,
}

async fn a_name_delivered_to_once(backend: Backend) -> Rebinding {
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
    let first = app.publish("a.b", json!({"n": 1})).await;
    app.wait_for_state(&first, &endpoint, "delivered", WAIT)
        .await;
    assert_eq!(
        good.count(),
        1,
        "delivered to the address checked at registration"
    );
    Rebinding {
        dns,
        app,
        good,
        evil,
        moved,
        endpoint,
    }
}

impl Rebinding {
    /// Points `rebind.test` at `address` alone and publishes a second
    /// event: its id.
    async fn rebound_to(&self, address: &str) -> String {
        let address = address.parse().expect("an IP address");
        self.dns.answer("rebind.test", vec![address]);
        self.app.publish("a.b", json!({"n": 2})).await
    }
}

#[both_backends]
async fn a_name_rebound_to_a_forbidden_address_is_refused_before_any_connection(backend: Backend) {
    let rebound = a_name_delivered_to_once(backend).await;
    let second = rebound.rebound_to("127.0.0.2").await;
    let attempt = first_attempt(&rebound.app, &second, &rebound.endpoint).await;
    assert_failed_naming(&attempt, "blocked", "127.0.0.2");
    assert!(attempt.remote_addr.is_none(), "nothing was dialled");
    never_contacted(&rebound.evil, "the rebound address").await;
}

#[both_backends]
async fn a_name_moved_to_another_allowed_address_is_dialled_there_not_over_the_old_connection(
    backend: Backend,
) {
    let moving = a_name_delivered_to_once(backend).await;
    let asked = moving.dns.queries("rebind.test");
    let second = moving.rebound_to("127.0.0.3").await;
    let Rebinding {
        dns,
        good,
        evil,
        moved,
        ..
    } = &moving;
    (moving.app)
        .wait_for_state(&second, &moving.endpoint, "delivered", WAIT)
        .await;
    assert_eq!(moved.count(), 1, "the delivery reached the new address");
    assert_eq!(
        good.count(),
        1,
        "no request went over the kept-alive connection to the old address"
    );
    assert_eq!(evil.connections(), 0);
    assert!(
        dns.queries("rebind.test") > asked,
        "the delivery resolved the name again"
    );
}

#[both_backends]
async fn a_name_with_any_forbidden_address_is_refused(backend: Backend) {
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
    assert_failed_naming(&attempt, "blocked", "10.0.0.1");
    assert_eq!(
        receiver.connections(),
        0,
        "not even the allowed address of a refused name is contacted"
    );
}

#[both_backends]
async fn an_unknown_name_fails_as_dns_and_is_retried_when_the_schedule_says(backend: Backend) {
    let dns = FakeDns::start().await;
    let app = app_with_dns(
        backend,
        &dns,
        r#"["127.0.0.1/32"]"#,
        &[("HOOKD_DELIVERY__JITTER", "0")],
    )
    .await;
    let (endpoint, _) = app.endpoint("http://nowhere.test:8443/hook").await;
    let event = app.publish("a.b", json!({})).await;
    let attempt = first_attempt(&app, &event, &endpoint).await;
    assert_failed_as(&attempt, "dns");
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    let asked = dns.queries("nowhere.test");
    assert!(asked >= 1, "the first attempt asked the DNS server");

    // The default schedule's second step: 5 s after the first attempt.
    let due = app.delivery_row(&event, &endpoint).await.next_attempt_at;
    assert_eq!(
        due - app.clock.now_ms(),
        5_000,
        "the retry is due when the schedule says"
    );
    stays_quiet(QUIET, || async {
        let n = app.attempts(&event, &endpoint).await.len();
        (n > 1).then(|| format!("attempt {n} ran before it was due"))
    })
    .await;

    app.advance(Duration::from_secs(5));
    let attempts = wait_until(WAIT, || async {
        let a = app.attempts(&event, &endpoint).await;
        (a.len() >= 2).then_some(a)
    })
    .await
    .expect("a second attempt once the retry is due");
    assert_eq!(attempts.len(), 2, "one retry, not more");
    assert_failed_as(&attempts[1], "dns");
    assert!(
        dns.queries("nowhere.test") > asked,
        "the retry asked the DNS server again"
    );
    assert_eq!(
        app.wait_for_state(&event, &endpoint, "failed", WAIT).await,
        2,
        "the delivery counts both attempts"
    );
}
