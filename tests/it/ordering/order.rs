//! The order itself: every subject's events arrive in commit order, one at
//! a time, while heads fail and retry; subjects do not wait for each other,
//! and together they keep the endpoint at its concurrency.

use std::time::Duration;

use serde_json::json;

use super::{checker::OrderChecker, interleaved, ordered_endpoint, publish_all};
use crate::harness::{WAIT, receiver::Reply, schedule::exact_schedule, spawn_app_with};
use hookd_test_macros::both_backends;

#[both_backends]
async fn every_subject_arrives_in_commit_order_while_some_heads_fail_twice(backend: Backend) {
    // Retries at once, and a circuit that failing heads do not open (the
    // test's clock stands still, so an open circuit would never cool down).
    let [schedule, jitter] = exact_schedule(r#"["0s", "0s", "0s", "1h"]"#);
    let circuit = ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1000");
    let app = spawn_app_with(backend, &[schedule, jitter, circuit]).await;
    // Every fifth subject's first event fails twice, and so does one
    // event in the middle of every seventh subject.
    let checker = OrderChecker::start(Duration::ZERO, |subject, seq| {
        match (subject % 5 == 0 && seq == 0) || (subject % 7 == 0 && seq == 2) {
            true => 2,
            false => 0,
        }
    })
    .await;
    ordered_endpoint(&app, &checker.url(), json!({})).await;
    let events = interleaved(&app, 50, 4);
    publish_all(&app, &events).await;

    checker
        .wait_accepted(200, WAIT * 2)
        .await
        .expect("every event is delivered");
    assert_eq!(checker.violations(), Vec::<String>::new());
    for (subject, accepted) in checker.accepted_in_order() {
        assert_eq!(accepted, [0, 1, 2, 3], "subject {subject}");
    }
}

#[both_backends]
async fn subjects_keep_an_ordered_endpoint_at_its_concurrency_and_no_further(backend: Backend) {
    let app = spawn_app_with(backend, &[]).await;
    // Slow answers, so that requests pile up to whatever the endpoint allows.
    let checker = OrderChecker::start(Duration::from_millis(150), |_, _| 0).await;
    ordered_endpoint(&app, &checker.url(), json!({"concurrency": 8})).await;
    let events = interleaved(&app, 100, 2);
    publish_all(&app, &events).await;

    checker
        .wait_accepted(200, WAIT * 2)
        .await
        .expect("every event is delivered");
    assert_eq!(checker.violations(), Vec::<String>::new());
    assert_eq!(
        checker.peak_in_flight(),
        8,
        "100 subjects keep 8 requests in flight, never more"
    );
}

#[both_backends]
async fn one_subject_goes_one_request_at_a_time(backend: Backend) {
    let app = spawn_app_with(backend, &[]).await;
    let checker = OrderChecker::start(Duration::from_millis(20), |_, _| 0).await;
    ordered_endpoint(&app, &checker.url(), json!({"concurrency": 8})).await;
    let events = interleaved(&app, 1, 30);
    publish_all(&app, &events).await;

    checker
        .wait_accepted(30, WAIT)
        .await
        .expect("every event is delivered");
    assert_eq!(checker.violations(), Vec::<String>::new());
    assert_eq!(checker.peak_in_flight(), 1, "one subject, one in flight");
}

#[both_backends]
async fn events_without_a_subject_are_not_held_behind_each_other(backend: Backend) {
    let app = spawn_app_with(backend, &[]).await;
    let checker = OrderChecker::start(Duration::ZERO, |_, _| 0).await;
    // What names no subject is the script's: slow answers.
    let slow = Reply::Delay(Duration::from_millis(150), Box::new(Reply::status(200)));
    checker.receiver.set_default(slow);
    ordered_endpoint(&app, &checker.url(), json!({"concurrency": 4})).await;
    let events: Vec<_> = (0..12)
        .map(|i| json!({"type": "a.b", "partner_id": app.partner_id, "data": {"n": i}}))
        .collect();
    publish_all(&app, &events).await;
    checker
        .receiver
        .wait_for(12, WAIT)
        .await
        .expect("every event is delivered");
    assert_eq!(
        checker.peak_in_flight(),
        4,
        "no subject, no order: the endpoint's concurrency applies"
    );
}
