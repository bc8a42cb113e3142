//! Payload filters on the real path: an event that does not pass an
//! endpoint's filter gets no delivery there and is counted (on the fast
//! path and through the fanout); money compares exactly; bad filters are
//! refused with where they fail; a filter can be tried on a sample or on
//! one of the partner's own events, and never on another partner's.

mod api;

use serde_json::{Value, json};

use crate::harness::{TestApp, WAIT, expect_status, receiver::Receiver, spawn_app, wait_until};
use hookd_test_macros::both_backends;

/// An endpoint of the test partner at `receiver` with `filter` and the
/// event types `types`; returns (endpoint id, partner key).
pub(crate) async fn filtered_endpoint(
    app: &TestApp,
    receiver: &Receiver,
    types: Value,
    filter: Value,
) -> (String, String) {
    let key = app.partner_key().await;
    let body = json!({ "url": receiver.url(), "event_types": types, "filter": filter });
    let created = expect_status(
        &app.request("POST", "/v1/endpoints", &key, Some(&body))
            .await,
        201,
    );
    assert_eq!(created["filter"], filter, "the filter is shown as given");
    (created["id"].as_str().expect("an id").to_string(), key)
}

/// A `balance.updated` of `customer` at `balance`.
pub(crate) fn balance(app: &TestApp, customer: &str, balance: &str) -> Value {
    json!({
        "type": "balance.updated",
        "partner_id": app.partner_id,
        "subject": {"type": "customer", "id": customer},
        "data": {"customer_id": customer, "currency": "USD", "balance": balance},
    })
}

/// The customers of the deliveries the receiver got, in arrival order.
fn customers(receiver: &Receiver) -> Vec<String> {
    let mut got: Vec<String> = receiver
        .received()
        .iter()
        .filter_map(|r| {
            let v: Value = serde_json::from_slice(&r.body).ok()?;
            Some(v["data"]["customer_id"].as_str()?.to_string())
        })
        .collect();
    got.sort();
    got
}

#[both_backends]
async fn an_event_that_does_not_pass_gets_no_delivery_and_is_counted_on_both_paths(
    backend: Backend,
) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    let filter = json!({"field": "data.customer_id", "in": ["cus_1", "cus_3"]});
    let (endpoint, _) =
        filtered_endpoint(&app, &receiver, json!(["balance.updated"]), filter).await;
    let operator = app.operator_key().await;
    // Four on the fast path (one request), twenty through the fanout.
    let few: Vec<Value> = (1..=4)
        .map(|i| balance(&app, &format!("cus_{i}"), "1.00"))
        .collect();
    let (status, body) = app.post_events(&Value::Array(few)).await;
    assert_eq!(status, 201, "{body}");
    let many: Vec<Value> = (1..=20)
        .map(|i| balance(&app, &format!("cus_{}", 1 + i % 4), "1.00"))
        .collect();
    let (status, body) = app.post_events(&Value::Array(many)).await;
    assert_eq!(status, 201, "{body}");

    receiver
        .wait_for(12, WAIT)
        .await
        .expect("the passing events arrive");
    let filtered = r#"hookd_deliveries_filtered_total{reason="no_match"}"#;
    wait_until(WAIT, || async {
        (app.metric(&operator, filtered).await == 12).then_some(())
    })
    .await
    .expect("the twelve events turned away are counted");
    receiver.stays_at(12).await;
    let got = customers(&receiver);
    assert!(got.iter().all(|c| c == "cus_1" || c == "cus_3"), "{got:?}");
    let rows = app
        .count(&format!(
            "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}'"
        ))
        .await;
    assert_eq!(rows, 12, "a filtered event creates no delivery row");
}

#[both_backends]
async fn money_is_compared_as_exact_decimals(backend: Backend) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    // Balances below ten cents: "0.1" and "0.10" are the same amount.
    let filter = json!({"field": "data.balance", "lt": "0.10"});
    filtered_endpoint(&app, &receiver, json!(["balance.updated"]), filter).await;
    let cases = [
        ("cus_equal_short", "0.1"),
        ("cus_equal_long", "0.100000"),
        ("cus_just_below", "0.099999"),
        ("cus_negative", "-0.5"),
        ("cus_above", "0.100001"),
        ("cus_large", "100000000000000000.5"),
    ];
    let events: Vec<Value> = cases.iter().map(|(c, b)| balance(&app, c, b)).collect();
    let (status, body) = app.post_events(&Value::Array(events)).await;
    assert_eq!(status, 201, "{body}");
    receiver
        .wait_for(2, WAIT)
        .await
        .expect("two balances are below ten cents");
    receiver.stays_at(2).await;
    assert_eq!(customers(&receiver), ["cus_just_below", "cus_negative"]);
}
