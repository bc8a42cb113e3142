//! The suite run straight through `conformance::send` against receivers
//! that behave well, accept anything, or answer slowly.

use std::{net::SocketAddr, time::Duration};

use actix::Actor as _;
use hookd::{
    config::Config,
    conformance::{
        Scorecard,
        send::{Wire, run},
        suite::{Script, Target},
    },
    delivery::client::{Limits, tls_config},
    domain::{clock::SystemClock, ids::EventId},
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, check_url},
    },
    secret::Secret,
};

use super::{Behaviour, receiver};
use crate::harness;

/// The suite run straight through `conformance::send`, with the egress
/// settings of the test configuration.
async fn check(addr: SocketAddr, secret: &Secret) -> Scorecard {
    let config = Config::load(None, harness::test_env("sqlite::memory:", &[]))
        .expect("the test configuration");
    let rules = EgressRules::from_config(&config.egress);
    let url = check_url(&format!("http://{addr}/hooks"), &rules).expect("an allowed URL");
    let resolver = ResolverActor::new(&config.egress, rules.policy.clone())
        .expect("a resolver")
        .start();
    let tls = tls_config(None).expect("TLS");
    let limits = Limits::from_config(&config.delivery);
    let script = Script::new(
        Target {
            check_id: "chk_test".into(),
            partner_id: "ptn_test".into(),
            endpoint_id: None,
        },
        hookd::signing::SigningKey::Hmac(secret.clone()),
        EventId::generate,
    );
    run(
        &script,
        &url,
        &Wire::new(
            &resolver,
            tls,
            &limits,
            hookd::delivery::proxy::Route::from_config(&config.egress),
            &SystemClock,
        ),
    )
    .await
}

/// A receiver of `behaviour` checked by the suite: its scorecard and inbox.
async fn checked(behaviour: Behaviour) -> (Scorecard, actix_web::web::Data<super::Inbox>) {
    let secret = Secret::generate();
    let (addr, inbox) = receiver(&secret, behaviour);
    (check(addr, &secret).await, inbox)
}

/// (name, passed, hint) of every case.
fn results(card: &Scorecard) -> Vec<(&str, bool, Option<&str>)> {
    card.cases
        .iter()
        .map(|c| (c.name.as_str(), c.passed, c.hint.as_deref()))
        .collect()
}

fn failed_cases(card: &Scorecard) -> Vec<&str> {
    card.cases
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect()
}

#[hookd_test_macros::test]
async fn a_correct_receiver_passes_all_eight_cases_without_a_hint() {
    let (card, _inbox) = checked(Behaviour::Correct).await;
    assert!(card.passed, "{}", card.table());
    assert_eq!(card.cases.len(), 8);
    assert!(
        card.cases.iter().all(|c| c.hint.is_none()),
        "a quick correct receiver gets no hint: {}",
        card.table()
    );
}

#[hookd_test_macros::test]
async fn the_check_sends_one_request_per_case_and_its_events_reach_no_business_handler() {
    let (_card, inbox) = checked(Behaviour::Correct).await;
    assert_eq!(inbox.requests(), 8, "one request per case");
    assert_eq!(
        inbox.stored(),
        3,
        "stored: the valid event (once, its duplicate acknowledged), the unknown type and the large body"
    );
    assert!(inbox.applied_nothing(), "marked: no business handler ran");
}

#[hookd_test_macros::test]
async fn a_receiver_that_accepts_bad_signatures_fails_exactly_those_cases_with_hints() {
    let (card, _inbox) = checked(Behaviour::AcceptsBadSignatures).await;
    assert!(!card.passed);
    assert_eq!(
        failed_cases(&card),
        [
            "wrong_signature",
            "missing_signature",
            "stale_timestamp",
            "tampered_body"
        ],
        "{}",
        card.table()
    );
    for (name, passed, hint) in results(&card) {
        if !passed {
            let hint = hint.unwrap_or_else(|| panic!("{name} failed without a hint"));
            assert!(hint.contains("accepted"), "{name}: {hint}");
        }
    }
    let wrong = &card.cases[2];
    assert_eq!(wrong.expected, "4xx: the signature does not match");
    assert!(wrong.got.starts_with("204 in "), "{}", wrong.got);
}

#[hookd_test_macros::test]
async fn a_receiver_answering_in_3_s_passes_with_a_warning() {
    let (card, _inbox) = checked(Behaviour::SlowFirst(Duration::from_secs(3))).await;
    assert!(card.passed, "slow is still a pass: {}", card.table());
    let valid = &card.cases[0];
    assert_eq!(valid.name, "valid_event");
    assert!(
        valid.hint.as_deref().is_some_and(|h| h.starts_with("slow")),
        "a warning: {valid:?}"
    );
}

#[hookd_test_macros::test]
async fn a_receiver_answering_after_5_s_fails_the_valid_case() {
    let started = std::time::Instant::now();
    let (card, _inbox) = checked(Behaviour::SlowFirst(Duration::from_secs(6))).await;
    assert_eq!(failed_cases(&card), ["valid_event"], "{}", card.table());
    assert_eq!(card.cases[0].got, "timeout: no answer within 5 s");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "the check gave up at the deadline"
    );
}
