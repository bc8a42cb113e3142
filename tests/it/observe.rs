//! What operators watch: the actors' health beside the work waiting for each
//! endpoint (`GET /v1/admin/actors`) and the Prometheus metrics (`GET /metrics`).

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    receiver::{Receiver, Reply},
    spawn_app, spawn_app_with, wait_until,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

/// `GET /metrics` with `key`: status, content type and text.
async fn scrape(app: &TestApp, key: &str) -> (u16, String, String) {
    let mut req = app.http.get(format!("{}/metrics", app.base_url));
    if !key.is_empty() {
        req = req.insert_header(("authorization", format!("Bearer {key}")));
    }
    let mut res = req.send().await.expect("the scrape completes");
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = res.body().await.expect("a body");
    (
        res.status().as_u16(),
        content_type,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// Two endpoints and one event: `broken` answers 500 and keeps its delivery
/// waiting to retry, `fine` took it. Returns (broken, fine) once both are recorded.
pub async fn one_failing_one_fine(app: &TestApp) -> (String, String) {
    let failing = Receiver::start().await;
    failing.set_default(Reply::status(500));
    let healthy = Receiver::start().await;
    let (broken, _) = app.endpoint(&failing.url()).await;
    let (fine, _) = app.endpoint(&healthy.url()).await;
    let event = app
        .publish(
            "usage.finalized",
            json!({"n": 1, "customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
                "usage_id": "usage_9182", "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013}),
        )
        .await;
    app.wait_for_state(&event, &fine, "delivered", WAIT).await;
    app.wait_for_state(&event, &broken, "failed", WAIT).await;
    // The receivers may go: the deliveries are recorded and nothing is due.
    (broken, fine)
}

fn entry<'a>(actors: &'a Value, endpoint: &str) -> Option<&'a Value> {
    actors["data"]
        .as_array()?
        .iter()
        .find(|e| e["endpoint_id"] == endpoint)
}

on_both_backends!(
    an_operator_sees_an_open_circuit_and_the_deliveries_waiting_behind_it,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1")]).await;
        let operator = app.operator_key().await;
        let (broken, fine) = one_failing_one_fine(&app).await;

        let actors = wait_until(WAIT, || async {
            let (status, body, _) = app
                .request("GET", "/v1/admin/actors", &operator, None)
                .await;
            assert_eq!(status, 200, "{body}");
            let settled = entry(&body, &broken).is_some_and(|e| {
                e["actor"]["consecutive_failures"] == 1 && e["actor"]["in_flight"] == 0
            });
            settled.then_some(body)
        })
        .await
        .expect("the failing endpoint's actor reports its failure");

        let b = entry(&actors, &broken).expect("the failing endpoint is listed");
        assert_eq!(b["status"], "active");
        assert_eq!(b["partner_id"], app.partner_id.as_str());
        assert_eq!(b["waiting"], 1, "its delivery waits to be retried: {b}");
        assert!(b["next_attempt_at"].is_string(), "{b}");
        assert_eq!(
            b["actor"]["circuit"], "open",
            "one failure opens a threshold-1 circuit: {b}"
        );
        assert!(
            b["actor"]["open_until"].is_string(),
            "an open circuit says until when: {b}"
        );
        assert_eq!(b["actor"]["concurrency"], 8);
        let f = entry(&actors, &fine).expect("the healthy endpoint is listed");
        assert_eq!(f["waiting"], 0, "{f}");
        let order: Vec<&Value> = actors["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["endpoint_id"])
            .collect();
        assert_eq!(
            order.first(),
            Some(&&json!(broken)),
            "most waiting first: {actors}"
        );
        assert!(actors["running"].as_u64().unwrap_or(0) >= 1, "{actors}");
        assert_eq!(
            actors["outbox_unpublished"], 0,
            "the event was fanned out: {actors}"
        );

        let (_, other) = app.another_partner("Other").await;
        let (status, others, _) = app
            .request(
                "GET",
                &format!("/v1/admin/actors?partner_id={other}"),
                &operator,
                None,
            )
            .await;
        assert_eq!(status, 200, "{others}");
        assert_eq!(
            others["data"],
            json!([]),
            "the filter keeps to one partner: {others}"
        );

        let partner_key = app.partner_key().await;
        let (status, _, _) = app
            .request("GET", "/v1/admin/actors", &partner_key, None)
            .await;
        assert_eq!(
            status, 403,
            "a partner key does not see other partners' endpoints"
        );
    }
);

on_both_backends!(
    metrics_count_events_deliveries_and_attempts_and_show_the_backlog,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let operator = app.operator_key().await;
        one_failing_one_fine(&app).await;

        let (status, content_type, text) = scrape(&app, &operator).await;
        assert_eq!(status, 200, "{text}");
        assert!(
            content_type.starts_with("application/openmetrics-text"),
            "{content_type}"
        );
        for line in [
            "hookd_events_ingested_total 1",
            "hookd_deliveries_created_total 2",
            r#"hookd_attempts_total{result="delivered",category="none",trigger="scheduled"} 1"#,
            r#"hookd_attempts_total{result="failed",category="http_status",trigger="scheduled"} 1"#,
            r#"hookd_deliveries_waiting{state="failed"} 1"#,
            r#"hookd_deliveries_waiting{state="pending"} 0"#,
            "hookd_attempt_duration_seconds_count 2",
            "hookd_outbox_unpublished 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "the scrape lacks `{line}`:\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"), "{text}");

        let (status, _, _) = scrape(&app, "").await;
        assert_eq!(status, 401, "metrics need a key");
        let partner_key = app.partner_key().await;
        let (status, _, _) = scrape(&app, &partner_key).await;
        assert_eq!(status, 403, "metrics need an operator key");
    }
);
