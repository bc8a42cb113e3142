//! Filters through the Partner API: refused with where they fail (a bad
//! operator, a path no subscribed type holds, one that a change of types
//! makes impossible), removed with `null`, and tried on a sample or on the
//! partner's own events, never on another partner's.

use serde_json::json;

use super::{balance, filtered_endpoint};
use crate::harness::{expect_status, receiver::Receiver, spawn_app};
use hookd_test_macros::both_backends;

/// Publishes `event` (a whole event, any partner's); returns its id.
async fn publish_event(app: &crate::harness::TestApp, event: &serde_json::Value) -> String {
    let (status, body) = app.post_events(event).await;
    assert_eq!(status, 201, "publishing should be accepted: {body}");
    body["event_id"].as_str().expect("an event id").to_string()
}

#[both_backends]
async fn bad_filters_are_refused_with_where_they_fail(backend: Backend) {
    let app = spawn_app(backend).await;
    let key = app.partner_key().await;
    let receiver = Receiver::start().await;
    let cases = [
        (
            json!({"and": [{"field": "data.balance", "between": ["1", "2"]}]}),
            "filter/and/0",
        ),
        (json!({"field": "partner_id", "eq": "p"}), "filter/field"),
        (json!({"field": "data.balance", "gt": "1e3"}), "filter/gt"),
        // No version of balance.updated has a `customer` field.
        (
            json!({"field": "data.customer", "eq": "cus_1"}),
            "filter/field",
        ),
    ];
    for (filter, at) in cases {
        let body =
            json!({"url": receiver.url(), "event_types": ["balance.updated"], "filter": filter});
        let (status, problem, _) = app
            .request("POST", "/v1/endpoints", &key, Some(&body))
            .await;
        assert_eq!(status, 422, "{filter}: {problem}");
        assert!(
            problem["field"].as_str().unwrap_or("").starts_with(at),
            "{filter}: expected the field at {at}: {problem}"
        );
    }
    let (_, problem, _) = app
        .request(
            "POST",
            "/v1/endpoints",
            &key,
            Some(
                &json!({"url": receiver.url(), "event_types": ["balance.updated"],
                "filter": {"field": "data.customer", "eq": "cus_1"}}),
            ),
        )
        .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or("")
            .contains("data.customer"),
        "the refusal names the path: {problem}"
    );
}

#[both_backends]
async fn a_filter_is_checked_again_when_the_types_change_and_removed_with_null(backend: Backend) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    let filter = json!({"field": "data.balance", "gt": "0"});
    let (id, key) = filtered_endpoint(&app, &receiver, json!(["balance.updated"]), filter).await;
    let path = format!("/v1/endpoints/{id}");
    // customer.created has no balance: the filter would never pass.
    let (status, problem, _) = app
        .request(
            "PATCH",
            &path,
            &key,
            Some(&json!({"event_types": ["customer.created"]})),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    let removed = expect_status(
        &app.request("PATCH", &path, &key, Some(&json!({"filter": null})))
            .await,
        200,
    );
    assert_eq!(removed["filter"], json!(null), "{removed}");
    let kept = expect_status(
        &app.request("PATCH", &path, &key, Some(&json!({"description": "x"})))
            .await,
        200,
    );
    assert_eq!(
        kept["filter"],
        json!(null),
        "an update that names no filter leaves it"
    );
}

#[both_backends]
async fn a_filter_is_tried_on_samples_and_own_events_never_on_another_partners(backend: Backend) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    let filter = json!({"field": "data.customer_id", "eq": "cus_1"});
    let (id, key) = filtered_endpoint(&app, &receiver, json!(["balance.updated"]), filter).await;
    let path = format!("/v1/endpoints/{id}/filter-test");
    let sample = |customer: &str| json!({"event": balance(&app, customer, "1.00")});
    let passes = expect_status(
        &app.request("POST", &path, &key, Some(&sample("cus_1")))
            .await,
        200,
    );
    assert_eq!(passes["matched"], true, "{passes}");
    let fails = expect_status(
        &app.request("POST", &path, &key, Some(&sample("cus_2")))
            .await,
        200,
    );
    assert_eq!(
        (fails["matched"].clone(), fails["reason"].clone()),
        (json!(false), json!("no_match"))
    );
    // A filter being written, before it is saved.
    let draft = json!({"event": balance(&app, "cus_2", "1.00"), "filter": {"field": "data.currency", "eq": "USD"}});
    let tried = expect_status(&app.request("POST", &path, &key, Some(&draft)).await, 200);
    assert_eq!(tried["matched"], true, "{tried}");

    let own = publish_event(&app, &balance(&app, "cus_1", "2.00")).await;
    let by_id = expect_status(
        &app.request("POST", &path, &key, Some(&json!({"event_id": own})))
            .await,
        200,
    );
    assert_eq!(by_id["matched"], true, "{by_id}");

    let (other_partner, other_key) = app.another_partner("Globex").await;
    let mut theirs = balance(&app, "cus_1", "3.00");
    theirs["partner_id"] = json!(other_partner);
    let their_event = publish_event(&app, &theirs).await;
    let (status, problem, _) = app
        .request("POST", &path, &key, Some(&json!({"event_id": their_event})))
        .await;
    assert_eq!(
        status, 404,
        "another partner's event is not found: {problem}"
    );
    let (status, _, _) = app
        .request(
            "POST",
            &path,
            &other_key,
            Some(&json!({"event_id": their_event})),
        )
        .await;
    assert_eq!(status, 404, "nor is another partner's endpoint");
}
