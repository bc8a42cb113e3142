//! The circuit breaker on the manual clock: after `circuit.failure_threshold`
//! consecutive failures nothing is sent, and no attempt spent, for the
//! cool-down; then one probe goes. A failed probe doubles the cool-down; a
//! successful one closes the circuit, lets what waited go, and puts the
//! cool-down back to its initial value.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    Backend, TestApp, WAIT,
    bulk::publish_many,
    receiver::{Receiver, Reply},
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// Five deliveries to an endpoint answering 500, one at a time, with a
/// circuit that opens after two failures (default 5 s cool-down):
/// (app, receiver, endpoint) once the circuit is open.
async fn five_behind_an_open_circuit(backend: Backend) -> (TestApp, Receiver, String) {
    let app = spawn_app_with(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "2")]).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(500));
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
        .await;
    publish_many(&app, 5).await;
    receiver
        .wait_for(2, WAIT)
        .await
        .expect("two failures open the circuit");
    recorded(&app, &endpoint, 2).await;
    (app, receiver, endpoint)
}

#[both_backends]
async fn an_open_circuit_spends_no_attempts(backend: Backend) {
    let (app, receiver, endpoint) = five_behind_an_open_circuit(backend).await;
    receiver.stays_at(2).await;
    let untouched = app
            .count(&format!(
                "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND attempt_count = 0"
            ))
            .await;
    assert_eq!(
        untouched, 3,
        "deliveries behind an open circuit keep their attempts"
    );
}

#[both_backends]
async fn what_waited_behind_the_circuit_follows_a_successful_probe(backend: Backend) {
    let (app, receiver, endpoint) = five_behind_an_open_circuit(backend).await;
    receiver.set_default(Reply::status(200));
    app.advance(Duration::from_secs(6));
    receiver
        .wait_for(5, WAIT)
        .await
        .expect("after the cool-down a probe succeeds and the rest follow");
    // The two that failed retry on their own schedule (5 s, ±20 %).
    app.advance(Duration::from_secs(10));
    let done = crate::harness::wait_until(WAIT, || async {
            let n = app
                .count(&format!(
                    "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND state = 'delivered'"
                ))
                .await;
            (n == 5).then_some(())
        })
        .await;
    assert!(done.is_some(), "every delivery ends delivered");
}

/// The initial cool-down in the tests below: longer than the one-second
/// retry schedule, so that only the circuit holds a retry back.
const COOL_DOWN: Duration = Duration::from_secs(10);

/// A hookd whose circuit opens after two failures for 10 s, doubling, with
/// retries a second apart and no jitter; one delivery to an endpoint that
/// answers `replies` (then 500), attempted twice, so the circuit has just
/// opened at the manual clock's now. (app, receiver, endpoint)
async fn just_opened(backend: Backend, replies: Vec<Reply>) -> (TestApp, Receiver, String) {
    let app = spawn_app_with(
        backend,
        &[
            ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "2"),
            ("HOOKD_CIRCUIT__COOLDOWN_INITIAL", "10s"),
            ("HOOKD_CIRCUIT__COOLDOWN_MAX", "10m"),
            (
                "HOOKD_DELIVERY__SCHEDULE",
                r#"["0s", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s"]"#,
            ),
            ("HOOKD_DELIVERY__JITTER", "0"),
        ],
    )
    .await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(500));
    receiver.script(replies);
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
        .await;
    fails_twice(&app, &receiver, &endpoint, 0).await;
    (app, receiver, endpoint)
}

/// Publishes an event that fails at once and again a second later (the
/// receiver had `before` requests): the second failure opens a closed
/// circuit.
async fn fails_twice(app: &TestApp, receiver: &Receiver, endpoint: &str, before: usize) {
    let event = app.publish("a.b", json!({})).await;
    receiver
        .wait_for(before + 1, WAIT)
        .await
        .expect("the first attempt");
    app.wait_for_state(&event, endpoint, "failed", WAIT).await;
    app.advance(Duration::from_secs(1));
    receiver
        .wait_for(before + 2, WAIT)
        .await
        .expect("the retry a second later");
    recorded(app, endpoint, before + 2).await;
}

/// The circuit stays open for exactly `cool_down` on the manual clock
/// (nothing beyond the receiver's `sent` requests until 100 ms before), then
/// the probe goes; returns once its outcome is in (the circuit takes it in
/// before the attempt is recorded), so that the clock moves on only after.
async fn probe_goes_after(
    app: &TestApp,
    receiver: &Receiver,
    endpoint: &str,
    sent: usize,
    cool_down: Duration,
) {
    app.advance(cool_down - Duration::from_millis(100));
    receiver.stays_at(sent).await;
    app.advance(Duration::from_millis(100));
    receiver
        .wait_for(sent + 1, WAIT)
        .await
        .unwrap_or_else(|e| panic!("the probe goes when the {cool_down:?} cool-down ends: {e}"));
    recorded(app, endpoint, sent + 1).await;
}

#[both_backends]
async fn the_circuit_opens_for_its_initial_cool_down(backend: Backend) {
    let (app, receiver, endpoint) = just_opened(backend, vec![]).await;
    probe_goes_after(&app, &receiver, &endpoint, 2, COOL_DOWN).await;
}

#[both_backends]
async fn a_failed_probe_doubles_the_cool_down(backend: Backend) {
    let (app, receiver, endpoint) = just_opened(backend, vec![]).await;
    probe_goes_after(&app, &receiver, &endpoint, 2, COOL_DOWN).await;
    probe_goes_after(&app, &receiver, &endpoint, 3, COOL_DOWN * 2).await;
    probe_goes_after(&app, &receiver, &endpoint, 4, COOL_DOWN * 4).await;
}

#[both_backends]
async fn a_successful_probe_puts_the_cool_down_back_to_its_initial_value(backend: Backend) {
    let replies = vec![
        Reply::status(500),
        Reply::status(500),
        Reply::status(500),
        Reply::status(200),
    ];
    let (app, receiver, endpoint) = just_opened(backend, replies).await;
    probe_goes_after(&app, &receiver, &endpoint, 2, COOL_DOWN).await;
    // The failed probe doubled it; the next one succeeds.
    probe_goes_after(&app, &receiver, &endpoint, 3, COOL_DOWN * 2).await;
    // Closed: a new event goes at once, and two failures open it again,
    // for the initial cool-down, not the doubled one.
    fails_twice(&app, &receiver, &endpoint, 4).await;
    probe_goes_after(&app, &receiver, &endpoint, 6, COOL_DOWN).await;
}

/// Waits until `n` attempts to the endpoint are recorded: the circuit has
/// taken their outcomes in by then, so the clock may move on.
async fn recorded(app: &TestApp, endpoint: &str, n: usize) {
    let attempts = format!(
        "SELECT COUNT(*) AS n FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
         WHERE d.endpoint_id = '{endpoint}'"
    );
    let done = crate::harness::wait_until(WAIT, || async {
        (app.count(&attempts).await >= n as i64).then_some(())
    })
    .await;
    assert!(done.is_some(), "{n} attempts to {endpoint} are recorded");
}
