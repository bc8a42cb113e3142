//! Paging a list while rows are written: following `next_cursor` from the
//! first page to the last shows every row that existed before, each once.

use std::{cell::Cell, time::Duration};

use serde_json::{Value, json};

use super::{assert_each_once, create_endpoint, delivery_count, endpoint_count, get_ok, ids_of};
use crate::harness::{
    Backend, TestApp, UNLIMITED, WAIT, receiver::Receiver, spawn_app_with, wait_until,
};
use hookd_test_macros::both_backends;

/// hookd without rate limits (a walk and its producer send many requests),
/// a key of the test partner, and a receiver for its endpoints.
async fn unlimited_with_a_receiver(backend: Backend) -> (TestApp, String, Receiver) {
    let app = spawn_app_with(backend, &UNLIMITED).await;
    let key = app.partner_key().await;
    (app, key, Receiver::start().await)
}

/// Walks a list with `limit=7`, counting the pages read in `pages`; between
/// pages waits until `grown` says more rows were written meanwhile. Returns
/// every id seen, in order.
async fn walk<F, Fut>(
    app: &TestApp,
    key: &str,
    list: &str,
    pages: &Cell<usize>,
    grown: F,
) -> Vec<String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = i64>,
{
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let path = match &cursor {
            Some(c) => format!("{list}?limit=7&after={c}"),
            None => format!("{list}?limit=7"),
        };
        let page = get_ok(app, key, &path).await;
        let ids = ids_of(&page);
        assert!(ids.len() <= 7, "a page holds at most `limit` rows: {page}");
        seen.extend(ids);
        // Count before announcing the page: the producer writes its row once
        // it sees the page, and a count taken after that write would wait
        // for a second row that never comes.
        let rows = grown().await;
        pages.set(pages.get() + 1);
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return seen,
        }
        let grown = &grown;
        wait_until(WAIT, || async move { (grown().await > rows).then_some(()) })
            .await
            .expect("rows keep being written while the list is walked");
    }
    panic!("the walk of {list} did not end within 1000 pages");
}

#[both_backends]
async fn the_delivery_list_pages_without_repeats_or_gaps_while_deliveries_are_created(
    backend: Backend,
) {
    let (app, key, receiver) = unlimited_with_a_receiver(backend).await;
    create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
    let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
    let (status, body) = app.post_events(&Value::Array(vec![event; 30])).await;
    assert_eq!(status, 201, "{body}");
    wait_until(WAIT, || async {
        (delivery_count(&app).await == 30).then_some(())
    })
    .await
    .expect("30 deliveries");
    let existing = ids_of(&get_ok(&app, &key, "/v1/deliveries?limit=500").await);
    assert_eq!(existing.len(), 30);

    let stop = Cell::new(false);
    let published = Cell::new(0usize);
    let producer = async {
        while !stop.get() {
            app.publish("a.b", json!({"more": true})).await;
            published.set(published.get() + 1);
        }
    };
    let walker = async {
        let seen = walk(&app, &key, "/v1/deliveries", &Cell::new(0), || {
            delivery_count(&app)
        })
        .await;
        stop.set(true);
        seen
    };
    let ((), seen) = tokio::join!(producer, walker);
    assert!(published.get() > 0, "events were published during the walk");
    assert_each_once(&seen, &existing, "deliveries");
}

#[both_backends]
async fn the_endpoint_list_pages_without_repeats_or_gaps_while_endpoints_are_created(
    backend: Backend,
) {
    let (app, key, receiver) = unlimited_with_a_receiver(backend).await;
    for _ in 0..20 {
        create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
    }
    let existing = ids_of(&get_ok(&app, &key, "/v1/endpoints?limit=500").await);
    assert_eq!(existing.len(), 20);

    // Appended rows sort after the cursor, so the producer adds one per
    // page read: the walk catches up and ends.
    let stop = Cell::new(false);
    let pages = Cell::new(0usize);
    let producer = async {
        let mut paced = 0;
        while !stop.get() {
            if pages.get() > paced {
                paced = pages.get();
                create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
            } else {
                actix_rt::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    let walker = async {
        let seen = walk(&app, &key, "/v1/endpoints", &pages, || endpoint_count(&app)).await;
        stop.set(true);
        seen
    };
    let ((), seen) = tokio::join!(producer, walker);
    assert_each_once(&seen, &existing, "endpoints");
}
