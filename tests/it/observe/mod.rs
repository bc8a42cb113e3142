//! What operators watch: the actors' health beside the work waiting for each
//! endpoint (`GET /v1/admin/actors`) and the Prometheus metrics (`GET /metrics`,
//! in `metrics`; the scrape read as text in `exposition`).

mod exposition;
mod metrics;
mod traces;

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::harness::{
    TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};
use hookd_test_macros::both_backends;

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

/// A scrape by an operator, which must succeed: its text.
async fn scraped(app: &TestApp) -> String {
    let operator = app.operator_key().await;
    let (status, _, text) = scrape(app, &operator).await;
    assert_eq!(status, 200, "an operator's scrape: {text}");
    text
}

/// Two endpoints and one event: `broken` answers 500 and keeps its delivery
/// waiting to retry, `fine` took it. Returns (broken, fine) once both are recorded.
pub async fn one_failing_one_fine(app: &TestApp) -> (String, String) {
    let (broken, fine, _) = one_failing_one_fine_event(app).await;
    (broken, fine)
}

/// Like `one_failing_one_fine`, with the event's id as well.
async fn one_failing_one_fine_event(app: &TestApp) -> (String, String, String) {
    let failing = Receiver::start().await;
    failing.set_default(Reply::status(500));
    let healthy = Receiver::start().await;
    let (broken, _) = app.endpoint(&failing.url()).await;
    let (fine, _) = app.endpoint(&healthy.url()).await;
    let event = app
        .publish(
            "usage.finalized",
            json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
                "usage_id": "usage_9182", "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013}),
        )
        .await;
    app.wait_for_state(&event, &fine, "delivered", WAIT).await;
    app.wait_for_state(&event, &broken, "failed", WAIT).await;
    // The receivers may go: the deliveries are recorded and nothing is due.
    (broken, fine, event)
}

/// An operator key, and `one_failing_one_fine`'s two endpoints:
/// (operator, broken, fine).
async fn operator_and_one_failing_one_fine(app: &TestApp) -> (String, String, String) {
    let operator = app.operator_key().await;
    let (broken, fine) = one_failing_one_fine(app).await;
    (operator, broken, fine)
}

/// The endpoint ids an actors answer lists, in order.
fn listed_ids(actors: &Value) -> Vec<&str> {
    actors["data"]
        .as_array()
        .expect("a list of endpoints")
        .iter()
        .filter_map(|e| e["endpoint_id"].as_str())
        .collect()
}

fn entry<'a>(actors: &'a Value, endpoint: &str) -> Option<&'a Value> {
    actors["data"]
        .as_array()?
        .iter()
        .find(|e| e["endpoint_id"] == endpoint)
}

/// `GET /v1/admin/actors` with `query` (`""` or `?…`), which must answer 200.
async fn actors(app: &TestApp, operator: &str, query: &str) -> Value {
    let path = format!("/v1/admin/actors{query}");
    let (status, body, _) = app.request("GET", &path, operator, None).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

#[both_backends]
async fn an_operator_sees_an_open_circuit_and_the_deliveries_waiting_behind_it(backend: Backend) {
    let app = spawn_app_with(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1")]).await;
    let (operator, broken, fine) = operator_and_one_failing_one_fine(&app).await;

    let listed = wait_until(WAIT, || async {
        let body = actors(&app, &operator, "").await;
        let settled = entry(&body, &broken).is_some_and(|e| {
            e["actor"]["consecutive_failures"] == 1 && e["actor"]["in_flight"] == 0
        });
        settled.then_some(body)
    })
    .await
    .expect("the failing endpoint's actor reports its failure");

    let b = entry(&listed, &broken).expect("the failing endpoint is listed");
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
    let f = entry(&listed, &fine).expect("the healthy endpoint is listed");
    assert_eq!(f["waiting"], 0, "{f}");
    assert!(listed["running"].as_u64().unwrap_or(0) >= 1, "{listed}");
    assert_eq!(
        listed["outbox_unpublished"], 0,
        "the event was fanned out: {listed}"
    );
}

#[both_backends]
async fn the_endpoint_with_the_most_waiting_is_listed_first(app: TestApp) {
    let (operator, broken, fine) = operator_and_one_failing_one_fine(&app).await;
    let listed = actors(&app, &operator, "").await;
    assert_eq!(
        listed_ids(&listed),
        [broken.as_str(), fine.as_str()],
        "the one with a delivery waiting comes first: {listed}"
    );
}

#[both_backends]
async fn the_actors_filtered_by_partner_show_that_partners_endpoints_only(app: TestApp) {
    let (operator, broken, fine) = operator_and_one_failing_one_fine(&app).await;
    let (other, _) = app.another_partner("Other").await;

    let others = actors(&app, &operator, &format!("?partner_id={other}")).await;
    assert_eq!(
        others["data"],
        json!([]),
        "the other partner has no endpoint: {others}"
    );
    let own = actors(&app, &operator, &format!("?partner_id={}", app.partner_id)).await;
    let ids: BTreeSet<&str> = listed_ids(&own).into_iter().collect();
    assert_eq!(
        ids,
        BTreeSet::from([broken.as_str(), fine.as_str()]),
        "{own}"
    );
}

#[both_backends]
async fn only_an_operator_key_reads_the_actors_and_the_metrics(app: TestApp) {
    let partner_key = app.partner_key().await;
    for (key, who) in [
        (&partner_key, "a partner key"),
        (&app.service_key, "a service key"),
    ] {
        let (status, body, _) = app.request("GET", "/v1/admin/actors", key, None).await;
        assert_eq!(
            status, 403,
            "{who} reads no endpoint of other partners: {body}"
        );
        let (status, _, text) = scrape(&app, key).await;
        assert_eq!(status, 403, "{who} reads no metrics: {text}");
    }
    let (status, _, text) = scrape(&app, "").await;
    assert_eq!(status, 401, "metrics need a key: {text}");
}
