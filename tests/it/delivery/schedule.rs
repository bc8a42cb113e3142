//! When retries go: the Standard Webhooks schedule to the second (jitter
//! off), `delivery.max_age`, and a retry due soon going in its time whatever
//! else the endpoint holds (a long lease, another delivery's later retry).

use std::time::Duration;

use serde_json::json;

use super::usage;
use crate::harness::{
    Backend, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with,
};
use crate::on_both_backends;

on_both_backends!(
    a_receiver_that_always_fails_gets_the_whole_schedule_then_dead,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__JITTER", "0"),
                ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        let schedule = [5u64, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];
        for (i, step) in schedule.iter().enumerate() {
            app.attempts_when(&event, &endpoint, i + 1).await;
            app.advance(Duration::from_secs(*step));
        }
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
            10,
            "ten attempts, then dead"
        );
        let attempts = app.attempts(&event, &endpoint).await;
        let gaps: Vec<i64> = attempts
            .windows(2)
            .map(|w| (w[1].started_at - w[0].started_at) / 1000)
            .collect();
        assert_eq!(
            gaps,
            schedule.iter().map(|s| *s as i64).collect::<Vec<_>>(),
            "attempts follow the Standard Webhooks schedule"
        );
        assert_eq!(receiver.count(), 10);
    }
);

on_both_backends!(
    a_delivery_past_its_maximum_age_is_dead,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__JITTER", "0"),
                ("HOOKD_DELIVERY__MAX_AGE", "1h"),
            ],
        )
        .await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let event = app.publish("a.b", json!({})).await;
        for (i, step) in [5u64, 300, 1800].iter().enumerate() {
            app.attempts_when(&event, &endpoint, i + 1).await;
            app.advance(Duration::from_secs(*step));
        }
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
            4,
            "the 2 h retry would pass the 1 h maximum age"
        );
    }
);

on_both_backends!(
    a_retry_goes_when_it_is_due_not_when_the_claims_lease_ends,
    |backend: Backend| async move {
        // The production lease (60 s) is far longer than the first retry delay
        // (5 s, ±20 % jitter): the retry must not wait for the lease.
        let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__LEASE", "60s")]).await;
        let receiver = Receiver::start().await;
        // A slow delivery is still in flight when a second claim, a second
        // later, takes the next event; that one is refused.
        receiver.script([
            Reply::Delay(Duration::from_millis(1_500), Box::new(Reply::status(200))),
            Reply::status(503),
        ]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let slow = app.publish("usage.finalized", usage(1)).await;
        receiver
            .wait_for(1, WAIT)
            .await
            .expect("the slow attempt starts");
        app.advance(Duration::from_secs(1));
        let refused = app.publish("usage.finalized", usage(2)).await;
        app.wait_for_state(&refused, &endpoint, "failed", WAIT)
            .await;
        app.wait_for_state(&slow, &endpoint, "delivered", WAIT)
            .await;
        receiver.stays_at(2).await;

        app.advance(Duration::from_millis(6_100));
        receiver
            .wait_for(3, WAIT)
            .await
            .expect("the retry is sent once its 5 s (+20 %) are up");
        assert_eq!(
            app.wait_for_state(&refused, &endpoint, "delivered", WAIT)
                .await,
            2,
            "delivered on the second attempt"
        );
    }
);

on_both_backends!(
    a_retry_is_not_held_back_by_another_deliverys_later_retry,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__LEASE", "60s")]).await;
        let receiver = Receiver::start().await;
        receiver.script([
            Reply::status(503),
            Reply::status(503),
            Reply::status(503),
            Reply::status(200),
        ]);
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        // One delivery backs off to its third attempt, about 5 min away.
        let later = app.publish("usage.finalized", usage(1)).await;
        app.attempts_when(&later, &endpoint, 1).await;
        app.advance(Duration::from_millis(6_100));
        app.attempts_when(&later, &endpoint, 2).await;
        app.wait_for_state(&later, &endpoint, "failed", WAIT).await;

        // Another fails its first attempt: its retry is due in 5 s.
        let soon = app.publish("usage.finalized", usage(2)).await;
        app.attempts_when(&soon, &endpoint, 1).await;
        app.wait_for_state(&soon, &endpoint, "failed", WAIT).await;
        receiver.stays_at(3).await;

        app.advance(Duration::from_millis(6_100));
        assert_eq!(
            app.wait_for_state(&soon, &endpoint, "delivered", WAIT)
                .await,
            2,
            "the 5 s retry goes in its time, not with the 5 min one"
        );
        assert_eq!(receiver.count(), 4, "the later delivery is not sent early");
    }
);
