//! The backlog sample the overview's charts draw: the health sweep takes
//! one at start and then one per minute, whichever instance gets there
//! first; samples older than 25 hours go.

use std::time::Duration;

use hookd::{
    delivery::health_sweep::take_sample,
    domain::clock::Clock as _,
    store::samples::{self, Sample, minute_of},
};
use serde_json::json;

use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};
use hookd_test_macros::both_backends;

async fn all_samples(app: &TestApp) -> Vec<Sample> {
    samples::since(app.db(), 0).await.expect("the samples read")
}

/// hookd with retries an hour apart, once its start's sample (of an empty
/// backlog) is taken: (app, the minute it started in).
async fn sampled_at_start(backend: Backend) -> (TestApp, i64) {
    let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1h"]"#)]).await;
    let start = minute_of(app.clock.now_ms());
    let first = wait_until(WAIT, || async {
        all_samples(&app)
            .await
            .into_iter()
            .find(|s| s.minute == start)
    })
    .await
    .expect("a sample is taken when the engine starts");
    assert_eq!((first.pending, first.failed, first.unpublished), (0, 0, 0));
    (app, start)
}

/// A delivery that failed and waits an hour for its retry.
async fn a_failed_delivery(app: &TestApp) -> Receiver {
    let failing = Receiver::start().await;
    failing.set_default(Reply::status(503));
    let (ep, _) = app.endpoint(&failing.url()).await;
    let event = app.publish("x.one", json!({"n": 1})).await;
    app.wait_for_state(&event, &ep, "failed", WAIT).await;
    failing
}

/// The health sweep's sample, taken now.
async fn sample_now(app: &TestApp) {
    take_sample(&app.running.shared, app.clock.now_ms())
        .await
        .expect("a sample");
}

#[both_backends]
async fn the_backlog_is_sampled_when_the_engine_starts(backend: Backend) {
    let (app, start) = sampled_at_start(backend).await;
    let minutes: Vec<i64> = all_samples(&app).await.iter().map(|s| s.minute).collect();
    assert_eq!(minutes, [start], "one sample, of the start's minute");
}

#[both_backends]
async fn a_minute_is_sampled_once_and_its_first_sample_stands(backend: Backend) {
    let (app, _) = sampled_at_start(backend).await;
    let _failing = a_failed_delivery(&app).await;
    sample_now(&app).await;
    let now = all_samples(&app).await;
    assert_eq!(now.len(), 1, "a minute is sampled once: {now:?}");
    assert_eq!(now[0].failed, 0, "the minute's first sample stands");
}

#[both_backends]
async fn the_next_minutes_sample_counts_the_deliveries_waiting_to_retry(backend: Backend) {
    let (app, start) = sampled_at_start(backend).await;
    let _failing = a_failed_delivery(&app).await;
    app.advance(Duration::from_secs(60));
    sample_now(&app).await;
    let now = all_samples(&app).await;
    let minutes: Vec<i64> = now.iter().map(|s| s.minute).collect();
    assert_eq!(
        minutes,
        [start, start + 60_000],
        "the next minute is sampled"
    );
    assert_eq!(
        now[1].failed, 1,
        "the next sample counts the delivery waiting to retry"
    );
}

#[both_backends]
async fn samples_older_than_25_hours_go_when_the_next_is_taken(backend: Backend) {
    let (app, start) = sampled_at_start(backend).await;
    let old = Sample {
        minute: start - 26 * 3_600_000,
        ..Sample::default()
    };
    assert!(samples::record(app.db(), &old).await.expect("written"));
    let kept = all_samples(&app).await.len();
    assert_eq!(kept, 2, "the old sample is there until the next is taken");
    app.advance(Duration::from_secs(60));
    sample_now(&app).await;
    let minutes: Vec<i64> = all_samples(&app).await.iter().map(|s| s.minute).collect();
    assert_eq!(
        minutes,
        [start, start + 60_000],
        "the next minute is sampled, and the one from 26 h ago is gone"
    );
}
