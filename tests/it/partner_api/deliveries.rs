//! The delivery search: deliveries found by endpoint, event, type, state and
//! time; one delivery's detail; and none of another partner's.

use std::time::Duration;

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::json;

use super::{create_endpoint, delivery_id, get_ok};
use crate::harness::{
    TestApp, WAIT,
    payloads::usage_finalized,
    receiver::{Receiver, Reply},
};
use hookd_test_macros::both_backends;

/// Two endpoints of the test partner, made with its `key`, and two events,
/// a second apart: `usage` delivered to `ok` and failing at `failing` (which
/// takes only `usage.*`), then `balance` delivered to `ok`.
struct Traffic {
    key: String,
    ok: String,
    failing: String,
    usage: String,
    balance: String,
    started_ms: i64,
    _receivers: [Receiver; 2],
}

async fn traffic(app: &TestApp) -> Traffic {
    let key = app.partner_key().await;
    let ok = Receiver::start().await;
    let failing = Receiver::start().await;
    failing.set_default(Reply::status(500));
    let (ok_ep, _) = create_endpoint(app, &key, json!({"url": ok.url()})).await;
    let failing_body = json!({"url": failing.url(), "event_types": ["usage.*"]});
    let (failing_ep, _) = create_endpoint(app, &key, failing_body).await;
    let started_ms = app.clock.now_ms();
    let usage_data = usage_finalized("1.274800", "usage_9182", (41200, 7013));
    let usage = app.publish("usage.finalized", usage_data).await;
    app.wait_for_state(&usage, &ok_ep, "delivered", WAIT).await;
    app.wait_for_state(&usage, &failing_ep, "failed", WAIT)
        .await;
    app.advance(Duration::from_secs(1));
    let balance = app
        .publish(
            "balance.updated",
            json!({"customer_id": "cus_204", "currency": "USD", "balance": "98.725200"}),
        )
        .await;
    app.wait_for_state(&balance, &ok_ep, "delivered", WAIT)
        .await;
    Traffic {
        key,
        ok: ok_ep,
        failing: failing_ep,
        usage,
        balance,
        started_ms,
        _receivers: [ok, failing],
    }
}

/// The (event, endpoint) pairs `GET /v1/deliveries?{query}` finds, sorted.
async fn find(app: &TestApp, key: &str, query: &str) -> Vec<(String, String)> {
    let page = get_ok(app, key, &format!("/v1/deliveries?{query}")).await;
    let mut found: Vec<(String, String)> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|d| {
            let field = |name: &str| {
                d[name]
                    .as_str()
                    .unwrap_or_else(|| panic!("a delivery has {name}: {d}"))
                    .to_string()
            };
            (field("event_id"), field("endpoint_id"))
        })
        .collect();
    found.sort();
    found
}

#[both_backends]
async fn deliveries_are_found_by_endpoint_event_type_state_and_time(app: TestApp) {
    let t = traffic(&app).await;
    let key = &t.key;
    let pairs = |list: &[(&String, &String)]| {
        let mut v: Vec<(String, String)> = list
            .iter()
            .map(|(e, ep)| (e.to_string(), ep.to_string()))
            .collect();
        v.sort();
        v
    };
    let t1 = format_time(t.started_ms + 1000);
    let (usage_ok, usage_failing, balance_ok) = (
        (&t.usage, &t.ok),
        (&t.usage, &t.failing),
        (&t.balance, &t.ok),
    );
    let cases = [
        (String::new(), pairs(&[usage_ok, usage_failing, balance_ok])),
        (
            format!("endpoint_id={}", t.failing),
            pairs(&[usage_failing]),
        ),
        (format!("event_id={}", t.balance), pairs(&[balance_ok])),
        (
            "event_type=usage.finalized".into(),
            pairs(&[usage_ok, usage_failing]),
        ),
        ("state=failed".into(), pairs(&[usage_failing])),
        ("state=dead".into(), vec![]),
        (
            format!("endpoint_id={}&state=delivered", t.ok),
            pairs(&[usage_ok, balance_ok]),
        ),
        (format!("since={t1}"), pairs(&[balance_ok])),
        (format!("until={t1}"), pairs(&[usage_ok, usage_failing])),
    ];
    for (query, expected) in cases {
        assert_eq!(
            find(&app, key, &query).await,
            expected,
            "GET /v1/deliveries?{query}"
        );
    }
}

#[both_backends]
async fn a_failed_delivery_shows_its_last_status_and_when_it_is_retried(app: TestApp) {
    let t = traffic(&app).await;
    let key = &t.key;
    let id = delivery_id(&app, key, &t.usage, &t.failing).await;
    let detail = get_ok(&app, key, &format!("/v1/deliveries/{id}")).await;
    assert_eq!(detail["state"], "failed");
    assert_eq!(detail["last_status"], 500);
    assert!(
        detail["next_attempt_at"].is_string(),
        "a failed delivery says when it is retried: {detail}"
    );
}

#[both_backends]
async fn another_partner_finds_none_of_the_deliveries(app: TestApp) {
    let t = traffic(&app).await;
    let key = &t.key;
    assert_eq!(
        find(&app, key, "").await.len(),
        3,
        "the partner finds its three deliveries"
    );
    let (_, stranger) = app.another_partner("Stranger").await;
    assert_eq!(
        find(&app, &stranger, "").await,
        vec![],
        "another partner sees none of these"
    );
    let filtered = format!("endpoint_id={}", t.ok);
    assert_eq!(
        find(&app, &stranger, &filtered).await,
        vec![],
        "not even by the endpoint's id"
    );
}
