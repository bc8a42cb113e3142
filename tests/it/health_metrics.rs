//! The metrics an operator alerts on (config/alerts.yml): endpoints by
//! status, the dead-letter backlog, deliveries on their last attempts, and
//! the time from an event's fanout to its 2xx.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    Backend,
    receiver::{Receiver, Reply},
    spawn_app_with,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

on_both_backends!(
    endpoints_by_status_dead_deliveries_and_saturation_are_scraped_as_they_stand,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1s", "1s"]"#)],
        )
        .await;
        let operator = app.operator_key().await;
        let fine = Receiver::start().await;
        let broken = Receiver::start().await;
        broken.set_default(Reply::status(500));
        let (fine_ep, _) = app
            .endpoint_for(&app.partner_id, &fine.url(), &["a.b"], 8)
            .await;
        let (broken_ep, _) = app
            .endpoint_for(&app.partner_id, &broken.url(), &["c.d"], 8)
            .await;

        let ok = app.publish("a.b", json!({"n": 1})).await;
        app.wait_for_state(&ok, &fine_ep, "delivered", WAIT).await;
        assert_eq!(
            app.metric(&operator, "hookd_delivery_latency_seconds_count")
                .await,
            1
        );

        let doomed = app.publish("c.d", json!({"n": 2})).await;
        app.wait_for_state(&doomed, &broken_ep, "failed", WAIT)
            .await;
        let metric = |name: &'static str| app.metric(&operator, name);
        assert_eq!(metric("hookd_endpoints{status=\"failing\"}").await, 1);
        assert_eq!(metric("hookd_endpoints{status=\"active\"}").await, 1);
        assert_eq!(
            metric("hookd_retry_saturation").await,
            1,
            "one failed attempt of three: the next two are the last two"
        );
        assert_eq!(metric("hookd_deliveries_dead").await, 0);

        for _ in 0..2 {
            app.advance(Duration::from_secs(2));
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        app.wait_for_state(&doomed, &broken_ep, "dead", WAIT).await;
        assert_eq!(metric("hookd_deliveries_dead").await, 1);
        assert_eq!(metric("hookd_retry_saturation").await, 0);
        assert_eq!(metric("hookd_deliveries_died_total").await, 1);
        assert_eq!(
            metric("hookd_delivery_latency_seconds_count").await,
            1,
            "failed attempts are not delivery latency"
        );
    }
);
