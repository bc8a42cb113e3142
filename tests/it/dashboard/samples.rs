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

use crate::admin_views::WAIT;
use crate::harness::{
    Backend, TestApp,
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};
use crate::on_both_backends;

async fn all_samples(app: &TestApp) -> Vec<Sample> {
    samples::since(app.db(), 0).await.expect("the samples read")
}

on_both_backends!(
    the_backlog_is_sampled_once_a_minute_and_old_samples_go,
    |backend: Backend| async move {
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

        let failing = Receiver::start().await;
        failing.set_default(Reply::status(503));
        let (ep, _) = app.endpoint(&failing.url()).await;
        let event = app.publish("x.one", json!({"n": 1})).await;
        app.wait_for_state(&event, &ep, "failed", WAIT).await;

        let shared = &app.running.shared;
        take_sample(shared, app.clock.now_ms())
            .await
            .expect("a sample");
        let now = all_samples(&app).await;
        assert_eq!(now.len(), 1, "a minute is sampled once: {now:?}");
        assert_eq!(now[0].failed, 0, "the minute's first sample stands");

        let old = Sample {
            minute: start - 26 * 3_600_000,
            ..Sample::default()
        };
        assert!(samples::record(app.db(), &old).await.expect("written"));
        app.advance(Duration::from_secs(60));
        take_sample(shared, app.clock.now_ms())
            .await
            .expect("a sample");
        let now = all_samples(&app).await;
        let minutes: Vec<i64> = now.iter().map(|s| s.minute).collect();
        assert_eq!(
            minutes,
            [start, start + 60_000],
            "the next minute is sampled, and the one from 26 h ago is gone"
        );
        assert_eq!(
            now[1].failed, 1,
            "the next sample counts the delivery waiting to retry"
        );
    }
);
