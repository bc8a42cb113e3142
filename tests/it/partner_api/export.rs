//! The NDJSON export of a time range: the feed's envelopes one a line, read
//! from the database a page at a time (pages of two here), then an `end`
//! line that says whether the range is complete; a `limit` cuts it and the
//! end line's cursor continues it; another partner's events stay out.

use hookd::domain::clock::Clock as _;
use serde_json::{Value, json};

use super::{
    feed_time::{at, hourly_events, ids},
    get_ok,
};
use crate::harness::{Backend, TestApp, WAIT, answer, read_text, spawn_app_with, wait_until};
use hookd_test_macros::both_backends;

/// A hookd whose pages (and so the export's reads) are two rows.
async fn paging_by_two(backend: Backend) -> TestApp {
    spawn_app_with(
        backend,
        &[
            ("HOOKD_API__PAGE_SIZE_MAX", "2"),
            ("HOOKD_API__PAGE_SIZE_DEFAULT", "2"),
        ],
    )
    .await
}

/// An export read whole: its event lines and its end line.
pub struct Exported {
    pub events: Vec<Value>,
    pub end: Value,
}

/// `GET /v1/events/export?{query}` with `key`: a 200 of NDJSON, every line
/// JSON and the last one the end line.
pub async fn export(app: &TestApp, key: &str, query: &str) -> Exported {
    let url = format!("{}/v1/events/export?{query}", app.base_url);
    let sent = app.http.get(url).bearer_auth(key).send().await;
    let (status, text, headers) = read_text(sent.expect("the export request completes")).await;
    assert_eq!(status, 200, "the export answers 200: {text}");
    assert_eq!(
        answer::header(&headers, "content-type"),
        Some("application/x-ndjson"),
        "the export is NDJSON"
    );
    assert!(
        text.ends_with('\n'),
        "every line ends with a newline: {text:?}"
    );
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {l:?} is not JSON: {e}")))
        .collect();
    let end = lines.pop().expect("at least the end line");
    assert!(
        end["end"].is_object(),
        "the last line is the end line: {end}"
    );
    assert!(
        lines.iter().all(|l| l["event_id"].is_string()),
        "every other line is an event: {lines:?}"
    );
    Exported {
        events: lines,
        end: end["end"].clone(),
    }
}

#[both_backends]
async fn the_export_streams_the_feeds_envelopes_one_a_line_then_a_complete_end(backend: Backend) {
    let app = paging_by_two(backend).await;
    let key = app.partner_key().await;
    let e = hourly_events(&app, 5).await;
    let out = export(&app, &key, &at("since", e[0].1)).await;
    let mut feed = Vec::new();
    let mut after = String::new();
    for _ in 0..5 {
        let page = get_ok(
            &app,
            &key,
            &format!("/v1/events?{}{after}", at("since", e[0].1)),
        )
        .await;
        let data = page["data"].as_array().expect("data");
        if data.is_empty() {
            break;
        }
        feed.extend(data.iter().cloned());
        after = format!("&after={}", page["next_cursor"].as_str().expect("a cursor"));
    }
    assert_eq!(feed.len(), 5, "the feed holds the five events");
    assert_eq!(
        out.events, feed,
        "the export's lines are the feed's envelopes, in feed order"
    );
    assert_eq!(out.end["complete"], true, "{}", out.end);
    assert_eq!(out.end["events"], 5, "{}", out.end);
}

#[both_backends]
async fn an_export_cut_by_its_limit_says_so_and_its_cursor_continues_the_range(backend: Backend) {
    let app = paging_by_two(backend).await;
    let key = app.partner_key().await;
    let e = hourly_events(&app, 6).await;
    // The range leaves out the first and the last event.
    let range = format!("{}&{}", at("since", e[1].1), at("until", e[5].1));
    let mut read = Vec::new();
    let mut ends = Vec::new();
    let mut after = String::new();
    for _ in 0..4 {
        let out = export(&app, &key, &format!("{range}&limit=3{after}")).await;
        assert!(
            out.events.len() <= 3,
            "at most `limit` events: {:?}",
            ids(&out.events)
        );
        read.extend(ids(&out.events));
        ends.push(out.end.clone());
        if out.end["complete"] == true {
            break;
        }
        after = format!(
            "&after={}",
            out.end["next_cursor"].as_str().expect("a cursor")
        );
    }
    let expected: Vec<String> = e[1..5].iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(
        read, expected,
        "each event of the range once, across the requests"
    );
    let shown: Vec<(Value, Value)> = ends
        .iter()
        .map(|e| (e["complete"].clone(), e["events"].clone()))
        .collect();
    assert_eq!(
        shown,
        vec![(json!(false), json!(3)), (json!(true), json!(1))],
        "three and incomplete, then the last one and complete"
    );
    let exact = export(&app, &key, &format!("{range}&limit=4")).await;
    assert_eq!(
        (exact.events.len(), &exact.end["complete"]),
        (4, &json!(true)),
        "a limit the range just fills is complete: {}",
        exact.end
    );
}

#[both_backends]
async fn the_export_leaves_out_another_partners_events(backend: Backend) {
    let app = paging_by_two(backend).await;
    let (stranger_id, stranger) = app.another_partner("Stranger").await;
    let since = app.clock.now_ms();
    let theirs = json!({"type": "balance.updated", "partner_id": stranger_id,
        "data": {"customer_id": "cus_9", "currency": "USD", "balance": "1.00"}});
    let (status, body) = app.post_events(&theirs).await;
    assert_eq!(status, 201, "{body}");
    let theirs = body["event_id"].as_str().expect("an event id").to_string();
    let ours = hourly_events(&app, 3).await;
    let key = app.partner_key().await;
    let mine = export(&app, &key, &at("since", since)).await;
    let expected: Vec<String> = ours.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids(&mine.events), expected, "only this partner's events");
    let other = wait_until(WAIT, || async {
        let other = export(&app, &stranger, &at("since", since)).await;
        (!other.events.is_empty()).then_some(ids(&other.events))
    })
    .await;
    assert_eq!(
        other,
        Some(vec![theirs]),
        "the other partner's export holds its own event alone"
    );
}
