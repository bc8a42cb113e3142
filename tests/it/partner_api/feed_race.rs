//! The event feed under concurrent producers: a reader following cursors
//! while events are published sees every event once.

use std::cell::{Cell, RefCell};

use serde_json::json;

use super::{assert_each_once, get_ok};
use crate::harness::{
    Backend, SLOW, UNLIMITED, another_instance, call_raw, spawn_app_with, wait_until,
};
use hookd_test_macros::both_backends;

const PRODUCERS: usize = 4;
const EACH: usize = 25;

#[both_backends]
async fn a_reader_following_cursors_sees_every_event_once_while_producers_race(backend: Backend) {
    let app = spawn_app_with(backend, &UNLIMITED).await;
    let key = app.partner_key().await;
    // On PostgreSQL a second hookd on the same database: two fanouts
    // publish concurrently, and producers' commits interleave across both.
    let second = match backend {
        Backend::Postgres => Some(another_instance(&app, &UNLIMITED).await),
        Backend::Sqlite => None,
    };
    let bases: Vec<String> = match &second {
        Some(s) => vec![app.base_url.clone(), format!("http://{}", s.addr)],
        None => vec![app.base_url.clone()],
    };
    let mut service_keys = Vec::new();
    for _ in 0..PRODUCERS {
        service_keys.push(app.key(hookd::store::keys::Role::Service, None).await.key);
    }

    let published: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let finished = Cell::new(0usize);
    let produce = |n: usize| {
        let base = bases[n % bases.len()].clone();
        let service_key = service_keys[n].clone();
        let (app, published, finished) = (&app, &published, &finished);
        async move {
            for i in 0..EACH {
                let body = json!({"type": "a.b", "partner_id": app.partner_id, "data": {"producer": n, "i": i}});
                let body = body.to_string();
                let (status, event, _) = call_raw(
                    &app.http,
                    &base,
                    "POST",
                    "/v1/events",
                    &service_key,
                    Some(&body),
                )
                .await;
                assert_eq!(status, 201, "producer {n} event {i}: {event}");
                let id = event["event_id"].as_str().expect("an event id").to_string();
                published.borrow_mut().push(id);
            }
            finished.set(finished.get() + 1);
        }
    };

    // One page each look; done once every producer has finished, every
    // event is read, and one more page comes back empty.
    let seen: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let cursor = RefCell::new(String::new());
    let (app, key, seen, cursor, finished) = (&app, &key, &seen, &cursor, &finished);
    let reader = wait_until(SLOW, || async move {
        let all_read = finished.get() == PRODUCERS && seen.borrow().len() >= PRODUCERS * EACH;
        let after = cursor.borrow().clone();
        let query = if after.is_empty() {
            "limit=10".to_string()
        } else {
            format!("limit=10&after={after}")
        };
        let page = get_ok(app, key, &format!("/v1/events?{query}")).await;
        let events = page["data"].as_array().expect("data");
        let next = page["next_cursor"]
            .as_str()
            .unwrap_or_else(|| panic!("a next_cursor: {page}"));
        *cursor.borrow_mut() = next.to_string();
        seen.borrow_mut().extend(
            events
                .iter()
                .map(|e| e["event_id"].as_str().expect("an id").to_string()),
        );
        (all_read && events.is_empty()).then_some(())
    });
    let (read, (), (), (), ()) =
        tokio::join!(reader, produce(0), produce(1), produce(2), produce(3));
    let seen = seen.take();
    read.unwrap_or_else(|| {
        panic!(
            "the reader saw {} of {} events within {SLOW:?}",
            seen.len(),
            PRODUCERS * EACH
        )
    });
    let published = published.into_inner();
    assert_eq!(published.len(), PRODUCERS * EACH);
    assert_each_once(&seen, &published, "events");
    assert_eq!(
        seen.len(),
        published.len(),
        "the reader saw exactly the published events"
    );
    if let Some(s) = second {
        s.server.stop(false).await;
    }
}
