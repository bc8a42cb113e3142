//! Fresh events handed to an endpoint faster than its receiver answers: what
//! the actor holds in memory is sent only while its claim's lease leaves time
//! for the attempt and its record. What waited too long is handed back and
//! claimed afresh, so no claim runs out while its delivery waits in a queue
//! (another instance could then take it and send it a second time).

use std::time::Duration;

use crate::harness::{
    WAIT,
    bulk::{all_delivered, publish_many},
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};
use hookd_test_macros::both_backends;

/// Events per request: small enough for the fast path (handed in memory).
const BATCH: usize = 10;
const REQUESTS: usize = 3;

#[both_backends]
async fn deliveries_queued_past_their_lease_window_are_claimed_afresh_and_each_arrives_once(
    backend: Backend,
) {
    // The test settings: a 5 s lease and a 2 s request timeout, so an
    // attempt may start until 1.75 s before its lease ends.
    let app = spawn_app_with(backend, &[]).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Delay(
        Duration::from_millis(150),
        Box::new(Reply::status(200)),
    ));
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
        .await;
    for _ in 0..REQUESTS {
        publish_many(&app, BATCH).await;
    }
    let total = BATCH * REQUESTS;
    let started = wait_until(WAIT, || async {
        (receiver.distinct_deliveries() >= 1).then_some(())
    })
    .await;
    assert!(started.is_some(), "nothing arrived within {WAIT:?}");
    // Three and a half seconds on the engine's clock: every claim still
    // queued now ends within 1.5 s, too soon for an attempt.
    app.advance(Duration::from_millis(3_500));

    all_delivered(&app, total).await;
    let counts = receiver.deliveries();
    assert_eq!(counts.len(), total, "every delivery arrives: {counts:?}");
    assert!(
        counts.values().all(|&n| n == 1),
        "each delivery arrives once: {counts:?}"
    );
    let reclaimed = app
        .count(&format!(
            "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND claim_seq >= 2"
        ))
        .await;
    assert!(
        reclaimed > 0,
        "the deliveries still queued when their lease window passed were handed back and claimed again"
    );
}
