//! The event feed: a partner's events in publish order, read page by page by
//! cursor, filtered by type, one event with its deliveries; never another
//! partner's.

use serde_json::{Value, json};

use super::{Callers, endpoint_at_receiver, expect_hidden_from_strangers, get_ok};
use crate::harness::{TestApp, WAIT, wait_until};
use hookd_test_macros::both_backends;

const TYPES: [&str; 5] = [
    "usage.finalized",
    "balance.updated",
    "usage.finalized",
    "balance.updated",
    "usage.finalized",
];

/// One page of the feed: (events, next cursor).
async fn feed_page(app: &TestApp, key: &str, query: &str) -> (Vec<Value>, String) {
    let page = get_ok(app, key, &format!("/v1/events?{query}")).await;
    let cursor = page["next_cursor"]
        .as_str()
        .unwrap_or_else(|| panic!("the feed always gives a next_cursor: {page}"))
        .to_string();
    (page["data"].as_array().expect("data").clone(), cursor)
}

fn event_ids(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["event_id"].as_str().expect("an event id").to_string())
        .collect()
}

/// Data for event `i` of type `t` that the catalog accepts.
fn data(i: usize, t: &str) -> Value {
    match t {
        "usage.finalized" => {
            json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
            "usage_id": format!("usage_{i}"), "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013})
        }
        _ => json!({"customer_id": format!("cus_{i}"), "currency": "USD", "balance": "98.725200"}),
    }
}

/// Publishes the `TYPES`, one at a time, each waited for in the feed after
/// the previous one's cursor (so feed order is publish order), and checks
/// that only the new event follows that cursor. Returns the event ids.
async fn publish_one_at_a_time(app: &TestApp, key: &str) -> Vec<String> {
    let mut published = Vec::new();
    let mut cursor = String::new();
    for (i, t) in TYPES.iter().enumerate() {
        let id = app.publish(t, data(i, t)).await;
        let query = if cursor.is_empty() {
            String::new()
        } else {
            format!("after={cursor}")
        };
        let (events, next) = wait_until(WAIT, || async {
            let (events, next) = feed_page(app, key, &query).await;
            (!events.is_empty()).then_some((events, next))
        })
        .await
        .unwrap_or_else(|| panic!("event {i} did not reach the feed within {WAIT:?}"));
        assert_eq!(
            events.len(),
            1,
            "only the new event follows the cursor: {events:?}"
        );
        assert_eq!(events[0]["event_id"], id.as_str());
        assert_eq!(events[0]["type"], *t);
        assert_eq!(
            events[0]["data"],
            data(i, t),
            "event {i} is the one published"
        );
        cursor = next;
        published.push(id);
    }
    published
}

/// Reads `key`'s whole feed two events a page, following the cursors.
async fn read_by_pages_of_two(app: &TestApp, key: &str) -> Vec<String> {
    let mut read = Vec::new();
    let mut after = String::new();
    for _ in 0..20 {
        let query = if after.is_empty() {
            "limit=2".to_string()
        } else {
            format!("limit=2&after={after}")
        };
        let (events, next) = feed_page(app, key, &query).await;
        assert!(
            events.len() <= 2,
            "a page holds at most `limit` events: {events:?}"
        );
        if events.is_empty() {
            assert_eq!(
                next, after,
                "an empty page keeps the cursor, so a reader can poll"
            );
            return read;
        }
        read.extend(event_ids(&events));
        after = next;
    }
    panic!("the feed did not end within 20 pages: {read:?}");
}

#[both_backends]
async fn the_event_feed_lists_the_partners_events_in_order_by_cursor(app: TestApp) {
    let key = app.partner_key().await;
    let published = publish_one_at_a_time(&app, &key).await;
    let read = read_by_pages_of_two(&app, &key).await;
    assert_eq!(
        read, published,
        "following cursors reads every event once, in feed order"
    );
}

#[both_backends]
async fn the_feed_leaves_out_another_partners_events(app: TestApp) {
    let callers = Callers::of(&app).await;
    let published = publish_one_at_a_time(&app, &callers.partner).await;
    let theirs = json!({"type": "usage.finalized", "partner_id": callers.stranger_id, "data": data(9, "usage.finalized")});
    let (status, body) = app.post_events(&theirs).await;
    assert_eq!(status, 201, "{body}");
    let theirs = body["event_id"].as_str().expect("an event id").to_string();

    // Only once it is in its own partner's feed does its absence here mean anything.
    let stranger_feed = wait_until(WAIT, || async {
        let (events, _) = feed_page(&app, &callers.stranger, "").await;
        let ids = event_ids(&events);
        ids.contains(&theirs).then_some(ids)
    })
    .await
    .unwrap_or_else(|| {
        panic!("the other partner's event {theirs} did not reach its own feed within {WAIT:?}")
    });
    let read = read_by_pages_of_two(&app, &callers.partner).await;
    assert!(
        !read.contains(&theirs),
        "another partner's event {theirs} must not be in this feed: {read:?}"
    );
    assert_eq!(read, published, "this feed holds this partner's events");
    assert_eq!(
        stranger_feed,
        vec![theirs.clone()],
        "the other partner's feed holds its event alone"
    );
}

#[both_backends]
async fn the_feed_filtered_by_type_holds_the_events_of_that_type(app: TestApp) {
    let key = app.partner_key().await;
    let published = publish_one_at_a_time(&app, &key).await;
    let (usage, _) = feed_page(&app, &key, "type=usage.finalized").await;
    let expected = [&published[0], &published[2], &published[4]].map(String::clone);
    assert_eq!(
        event_ids(&usage),
        expected,
        "the usage.finalized events, in feed order"
    );
}

#[both_backends]
async fn one_event_is_shown_with_a_summary_of_its_deliveries(app: TestApp) {
    let key = app.partner_key().await;
    let (_receiver, endpoint, _) = endpoint_at_receiver(&app, &key).await;
    let event = app
        .publish("balance.updated", data(1, "balance.updated"))
        .await;
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    let one = get_ok(&app, &key, &format!("/v1/events/{event}")).await;
    assert_eq!(one["event"]["event_id"], event.as_str());
    assert_eq!(one["event"]["type"], "balance.updated");
    let deliveries = one["deliveries"].as_array().expect("deliveries");
    assert_eq!(deliveries.len(), 1, "{one}");
    assert_eq!(deliveries[0]["endpoint_id"], endpoint.as_str());
    assert_eq!(deliveries[0]["state"], "delivered");
}

#[both_backends]
async fn another_partners_event_or_an_unknown_one_is_not_found(app: TestApp) {
    let callers = Callers::of(&app).await;
    let event = app
        .publish("balance.updated", data(1, "balance.updated"))
        .await;
    let path = format!("/v1/events/{event}");
    let unknown = "/v1/events/evt_01JAAAAAAAAAAAAAAAAAAAAAAA";
    expect_hidden_from_strangers(&app, &callers, "GET", &path, unknown).await;
    let own = app.request("GET", &path, &callers.partner, None).await;
    assert_eq!(own.0, 200, "its own partner finds it: {}", own.1);
}
