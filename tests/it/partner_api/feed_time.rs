//! The event feed read by time: `since`/`until` bound an event's creation,
//! the cursor continues a bounded read given the same bounds, bad bounds are
//! problems naming the parameter, and another partner's events stay out.

use std::time::Duration;

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::{Value, json};

use super::{Body, Caller, Callers, expect_problems, get_ok};
use crate::harness::{TestApp, WAIT, wait_until};
use hookd_test_macros::both_backends;

const HOUR: Duration = Duration::from_secs(3600);

/// The events of a page, or the lines of an export, by id.
pub fn ids(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["event_id"].as_str().expect("an event id").to_string())
        .collect()
}

/// Publishes `n` `balance.updated` events of the test partner an hour
/// apart, and waits until all are in its feed: each event's id and the
/// clock's time when it was created.
pub async fn hourly_events(app: &TestApp, n: usize) -> Vec<(String, i64)> {
    let mut made = Vec::new();
    for i in 0..n {
        if i > 0 {
            app.advance(HOUR);
        }
        let created = app.clock.now_ms();
        let data =
            json!({"customer_id": "cus_204", "currency": "USD", "balance": format!("{i}.00")});
        made.push((app.publish("balance.updated", data).await, created));
    }
    let key = app.partner_key().await;
    let all: Vec<String> = made.iter().map(|(id, _)| id.clone()).collect();
    let since = at("since", made[0].1);
    let listed = wait_until(WAIT, || async {
        let seen = read_all(app, &key, &since, 1).await;
        all.iter().all(|id| seen.contains(id)).then_some(())
    })
    .await;
    assert!(
        listed.is_some(),
        "the events did not reach the feed within {WAIT:?}"
    );
    made
}

/// The query parameter `name=<ms as RFC 3339>`.
pub fn at(name: &str, ms: i64) -> String {
    format!("{name}={}", format_time(ms))
}

/// Every event of the bounded read `bounds`, following cursors a page of
/// `limit` at a time (the bounds passed again with each cursor).
async fn read_all(app: &TestApp, key: &str, bounds: &str, limit: usize) -> Vec<String> {
    let mut read = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let after = cursor
            .as_ref()
            .map(|c| format!("&after={c}"))
            .unwrap_or_default();
        let page = get_ok(
            app,
            key,
            &format!("/v1/events?{bounds}&limit={limit}{after}"),
        )
        .await;
        let events = page["data"].as_array().expect("data");
        if events.is_empty() {
            return read;
        }
        read.extend(ids(events));
        cursor = Some(page["next_cursor"].as_str().expect("a cursor").to_string());
    }
    panic!("the bounded read did not end within 20 pages: {read:?}");
}

#[both_backends]
async fn the_feed_bounded_by_time_holds_the_events_created_in_the_range(app: TestApp) {
    let key = app.partner_key().await;
    let e = hourly_events(&app, 3).await;
    let page = |q: String| {
        let (app, key) = (&app, &key);
        async move {
            ids(get_ok(app, key, &format!("/v1/events?{q}")).await["data"]
                .as_array()
                .expect("data"))
        }
    };
    assert_eq!(
        page(format!("{}&{}", at("since", e[1].1), at("until", e[2].1))).await,
        vec![e[1].0.clone()],
        "since is inclusive, until exclusive"
    );
    assert_eq!(
        page(at("since", e[1].1)).await,
        vec![e[1].0.clone(), e[2].0.clone()],
        "since alone: the events from then on"
    );
    assert_eq!(
        page(at("until", e[1].1)).await,
        vec![e[0].0.clone()],
        "until alone: the events before then"
    );
}

#[both_backends]
async fn a_time_bounded_read_continues_by_cursor_with_the_same_bounds(app: TestApp) {
    let key = app.partner_key().await;
    let e = hourly_events(&app, 5).await;
    let bounds = format!("{}&{}", at("since", e[1].1), at("until", e[4].1));
    let read = read_all(&app, &key, &bounds, 1).await;
    let expected: Vec<String> = e[1..4].iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(
        read, expected,
        "one event a page, each once, in feed order, none outside the range"
    );
}

#[both_backends]
async fn a_time_bounded_read_leaves_out_another_partners_events(app: TestApp) {
    let callers = Callers::of(&app).await;
    let since = app.clock.now_ms();
    let theirs = json!({"type": "balance.updated", "partner_id": callers.stranger_id,
        "data": {"customer_id": "cus_9", "currency": "USD", "balance": "1.00"}});
    let (status, body) = app.post_events(&theirs).await;
    assert_eq!(status, 201, "{body}");
    let theirs = body["event_id"].as_str().expect("an event id").to_string();
    let ours = hourly_events(&app, 2).await;
    let bounds = at("since", since);
    // Once it is in its own partner's bounded feed, its absence here means something.
    let in_theirs = wait_until(WAIT, || async {
        let page = get_ok(&app, &callers.stranger, &format!("/v1/events?{bounds}")).await;
        ids(page["data"].as_array().expect("data"))
            .contains(&theirs)
            .then_some(())
    })
    .await;
    assert!(
        in_theirs.is_some(),
        "the other partner's event is in its own feed"
    );
    let read = read_all(&app, &callers.partner, &bounds, 50).await;
    let expected: Vec<String> = ours.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(
        read, expected,
        "only this partner's events, though {theirs} is in the range"
    );
}

#[both_backends]
async fn bad_time_bounds_are_problems_naming_the_parameter(app: TestApp) {
    let callers = Callers::of(&app).await;
    let now = app.clock.now_ms();
    let day = 86_400_000;
    let paths = [
        "/v1/events?since=yesterday".to_string(),
        "/v1/events?until=2026-13-01T00:00:00Z".to_string(),
        format!(
            "/v1/events?{}&{}",
            at("since", now),
            at("until", now - HOUR.as_millis() as i64)
        ),
        format!("/v1/events?{}", at("since", now - 91 * day)),
        format!("/v1/events?{}", at("until", now - 91 * day)),
        "/v1/events/export".to_string(),
        "/v1/events/export?since=2026-12-06".to_string(),
        format!("/v1/events/export?{}", at("since", now - 91 * day)),
        format!(
            "/v1/events/export?{}&{}",
            at("since", now),
            at("until", now)
        ),
        format!("/v1/events/export?{}&limit=10001", at("since", now)),
    ];
    #[rustfmt::skip]
    let cases = vec![
        ("GET", paths[0].as_str(), Caller::Partner, Body::Empty, 422, "invalid-type", Some("since")),
        ("GET", paths[1].as_str(), Caller::Partner, Body::Empty, 422, "invalid-type", Some("until")),
        ("GET", paths[2].as_str(), Caller::Partner, Body::Empty, 422, "out-of-range", Some("until")),
        ("GET", paths[3].as_str(), Caller::Partner, Body::Empty, 422, "out-of-range", Some("since")),
        ("GET", paths[4].as_str(), Caller::Partner, Body::Empty, 422, "out-of-range", Some("until")),
        ("GET", paths[5].as_str(), Caller::Partner, Body::Empty, 422, "validation",   Some("since")),
        ("GET", paths[6].as_str(), Caller::Partner, Body::Empty, 422, "invalid-type", Some("since")),
        ("GET", paths[7].as_str(), Caller::Partner, Body::Empty, 422, "out-of-range", Some("since")),
        ("GET", paths[8].as_str(), Caller::Partner, Body::Empty, 422, "out-of-range", Some("until")),
        ("GET", paths[9].as_str(), Caller::Partner, Body::Empty, 422, "out-of-range", Some("limit")),
        ("GET", paths[5].as_str(), Caller::Service, Body::Empty, 403, "forbidden",    None),
    ];
    let answers = expect_problems(&app, &callers, &cases).await;
    let past = &answers[3].1["detail"];
    assert!(
        past.as_str().is_some_and(|d| d.contains("90 days")),
        "the refusal says how long events are kept: {past}"
    );
}
