//! Searching and reading every partner's deliveries, events and endpoints.

use std::collections::HashSet;

use hookd::domain::event::format_time;
use serde_json::Value;

use super::{World, call, each, get, kind, world};
use crate::harness::Backend;
use crate::on_both_backends;

fn set(items: &[&String]) -> HashSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Every id a list gives from `path` (which has a query) on, following
/// `next_cursor` to the end.
async fn every_page(w: &World, path: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut next = path.to_string();
    loop {
        let page = get(&w.app, &next, &w.operator).await;
        seen.extend(each(&page, "id"));
        let Some(cursor) = page["next_cursor"].as_str() else {
            return seen;
        };
        next = format!("{path}&after={cursor}");
    }
}

/// The ids a delivery search finds, as a set.
async fn found(w: &World, query: &str) -> HashSet<String> {
    let page = get(
        &w.app,
        &format!("/v1/admin/deliveries?{query}"),
        &w.operator,
    )
    .await;
    each(&page, "id").into_iter().collect()
}

on_both_backends!(
    the_operator_search_finds_exactly_the_deliveries_each_filter_names_across_partners,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        let all = get(&w.app, "/v1/admin/deliveries", &w.operator).await;
        let ids = each(&all, "id");
        assert_eq!(ids.len(), 3, "every partner's deliveries are found: {all}");
        assert_eq!(ids[2], w.d_a, "newest first: A's delivery is the oldest");
        let owners: Vec<(String, String)> = each(&all, "id")
            .into_iter()
            .zip(each(&all, "partner_id"))
            .collect();
        for (id, owner) in owners {
            let want = if id == w.d_a {
                &w.partner_a
            } else {
                &w.partner_b
            };
            assert_eq!(&owner, want, "delivery {id} names its partner: {all}");
        }

        let cases = [
            (format!("partner_id={}", w.partner_a), set(&[&w.d_a])),
            (
                format!("partner_id={}", w.partner_b),
                set(&[&w.d_b, &w.d_drop]),
            ),
            ("status_code=503".to_string(), set(&[&w.d_b])),
            ("status_code=200".to_string(), set(&[&w.d_a])),
            ("category=connect".to_string(), set(&[&w.d_drop])),
            ("category=http_status".to_string(), set(&[&w.d_b])),
            ("state=delivered".to_string(), set(&[&w.d_a])),
            ("state=failed".to_string(), set(&[&w.d_b, &w.d_drop])),
            ("state=paused".to_string(), set(&[])),
            (format!("state=failed&partner_id={}", w.partner_a), set(&[])),
            (
                format!("endpoint_id={}&category=connect", w.ep_drop),
                set(&[&w.d_drop]),
            ),
            (
                format!("event_id={}&status_code=503", w.ev_b),
                set(&[&w.d_b]),
            ),
            (
                format!("since={}", format_time(w.t_b)),
                set(&[&w.d_b, &w.d_drop]),
            ),
        ];
        for (query, want) in cases {
            assert_eq!(found(&w, &query).await, want, "?{query}");
        }

        // A page at a time, every delivery once, newest first.
        let seen = every_page(&w, "/v1/admin/deliveries?limit=1").await;
        assert_eq!(seen, ids, "paging finds what one page does, in order");

        for (bad, wanted) in [
            ("colour=red", "unknown-field"),
            ("category=lost", "out-of-range"),
            ("state=lost", "out-of-range"),
            ("status_code=x", "invalid-type"),
        ] {
            let path = format!("/v1/admin/deliveries?{bad}");
            let p = call(&w.app, ("GET", &path), &w.operator, None, 422).await;
            assert_eq!(kind(&p), wanted, "?{bad}: {p}");
            let name = bad.split('=').next().unwrap_or_default();
            assert_eq!(p["field"], name, "?{bad} names its parameter: {p}");
        }
    }
);

on_both_backends!(
    the_operator_reads_any_partners_delivery_with_its_attempts,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        let path = format!("/v1/admin/deliveries/{}", w.d_b);
        let d = get(&w.app, &path, &w.operator).await;
        assert_eq!(d["id"], w.d_b.as_str());
        assert_eq!(d["partner_id"], w.partner_b.as_str());
        assert_eq!(d["event_id"], w.ev_b.as_str());
        assert_eq!(d["endpoint_id"], w.ep_b.as_str());
        assert_eq!(d["state"], "failed");
        assert_eq!(d["last_status"], 503);
        let attempts = d["attempts"].as_array().expect("attempts");
        assert_eq!(attempts.len(), 1, "{d}");
        assert_eq!(attempts[0]["status_code"], 503);
        assert_eq!(attempts[0]["error_category"], "http_status");
        assert_eq!(attempts[0]["trigger"], "scheduled");

        let d = get(
            &w.app,
            &format!("/v1/admin/deliveries/{}", w.d_drop),
            &w.operator,
        )
        .await;
        assert_eq!(d["attempts"][0]["error_category"], "connect", "{d}");
        assert_eq!(d["attempts"][0]["status_code"], Value::Null, "{d}");
    }
);

/// The event ids a search of the event list finds, in order.
async fn events(w: &World, query: &str) -> Vec<String> {
    let page = get(&w.app, &format!("/v1/admin/events?{query}"), &w.operator).await;
    let items = page["data"].as_array().expect("a data array");
    for item in items {
        assert_eq!(
            item["partner_id"], item["event"]["partner_id"],
            "each event names its partner: {item}"
        );
    }
    items
        .iter()
        .map(|i| {
            i["event"]["event_id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

on_both_backends!(
    the_operator_lists_every_partners_published_events_newest_first_and_reads_one,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        let all = events(&w, "").await;
        let (a, b) = (&w.ev_a, &w.ev_b);
        let at = |id: &String| all.iter().position(|e| e == id);
        assert!(
            matches!((at(b), at(a)), (Some(x), Some(y)) if x < y),
            "both partners' events, B's (newer) first: {all:?}"
        );
        let since = format_time(w.t_b);
        let cases = [
            (format!("partner_id={}", w.partner_a), vec![a]),
            ("type=b.two".to_string(), vec![b]),
            (format!("type=b.two&partner_id={}", w.partner_a), vec![]),
            (format!("type=b.two&since={since}"), vec![b]),
            (format!("type=a.one&since={since}"), vec![]),
            (format!("type=a.one&until={since}"), vec![a]),
            (format!("type=b.two&until={since}"), vec![]),
        ];
        for (query, want) in cases {
            let got = events(&w, &query).await;
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "?{query}");
        }
        let first = get(&w.app, "/v1/admin/events?limit=1", &w.operator).await;
        let cursor = first["next_cursor"]
            .as_str()
            .expect("a full page has a cursor");
        let next = events(&w, &format!("limit=1&after={cursor}")).await;
        assert_eq!(
            next,
            all[1..2].to_vec(),
            "the cursor continues after the first page"
        );

        let one = get(&w.app, &format!("/v1/admin/events/{b}"), &w.operator).await;
        assert_eq!(one["partner_id"], w.partner_b.as_str());
        assert_eq!(one["event"]["event_id"], b.as_str());
        assert_eq!(one["event"]["type"], "b.two");
        assert_eq!(one["event"]["data"]["n"], 2);
        let to: HashSet<String> = one["deliveries"]
            .as_array()
            .expect("its deliveries")
            .iter()
            .map(|d| d["endpoint_id"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(to, set(&[&w.ep_b, &w.ep_drop]), "its deliveries: {one}");

        for (bad, field) in [
            ("state=published", "state"),
            ("state=rejected&type=b.two", "type"),
            ("colour=red", "colour"),
        ] {
            let path = format!("/v1/admin/events?{bad}");
            let p = call(&w.app, ("GET", &path), &w.operator, None, 422).await;
            assert_eq!(p["field"], field, "?{bad}: {p}");
        }
        let rejected = get(&w.app, "/v1/admin/events?state=rejected", &w.operator).await;
        assert_eq!(
            rejected["data"],
            serde_json::json!([]),
            "none rejected here"
        );
    }
);

/// The endpoint ids a search of the endpoint list finds, as a set.
async fn endpoints(w: &World, query: &str) -> HashSet<String> {
    let page = get(&w.app, &format!("/v1/admin/endpoints?{query}"), &w.operator).await;
    assert!(
        !page.to_string().contains("whsec_") && page["data"][0].get("secret").is_none(),
        "no secret is ever shown: {page}"
    );
    each(&page, "id").into_iter().collect()
}

on_both_backends!(
    the_operator_lists_and_filters_every_partners_endpoints_with_their_backlog,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        let (off, _) = w
            .app
            .endpoint_for(&w.partner_a, "http://127.0.0.1:9/off", &[], 8)
            .await;
        let path = format!("/v1/endpoints/{off}/disable");
        call(&w.app, ("POST", &path), &w.key_a, None, 200).await;

        let every = set(&[&w.ep_a, &w.ep_b, &w.ep_drop, &off]);
        let cases = [
            (String::new(), every.clone()),
            (format!("partner_id={}", w.partner_a), set(&[&w.ep_a, &off])),
            (
                format!("partner_id={}", w.partner_b),
                set(&[&w.ep_b, &w.ep_drop]),
            ),
            ("status=disabled".to_string(), set(&[&off])),
            (
                "status=active".to_string(),
                set(&[&w.ep_a, &w.ep_b, &w.ep_drop]),
            ),
            ("failing=true".to_string(), set(&[&w.ep_b, &w.ep_drop])),
            ("failing=false".to_string(), set(&[&w.ep_a, &off])),
            (format!("failing=true&partner_id={}", w.partner_a), set(&[])),
        ];
        for (query, want) in cases {
            assert_eq!(endpoints(&w, &query).await, want, "?{query}");
        }
        let paged = every_page(&w, "/v1/admin/endpoints?limit=3").await;
        assert_eq!(paged.len(), every.len(), "each endpoint once: {paged:?}");
        let paged: HashSet<String> = paged.into_iter().collect();
        assert_eq!(paged, every, "paging finds each endpoint once");

        let one = get(
            &w.app,
            &format!("/v1/admin/endpoints/{}", w.ep_b),
            &w.operator,
        )
        .await;
        assert_eq!(one["id"], w.ep_b.as_str());
        assert_eq!(one["partner_id"], w.partner_b.as_str());
        assert_eq!(one["kind"], "endpoint");
        assert_eq!(one["status"], "active");
        assert!(one["failing_since"].is_string(), "it is failing: {one}");
        assert_eq!(
            one["backlog"]["waiting"], 1,
            "its failed delivery waits: {one}"
        );
        assert!(one.get("secret").is_none() && !one.to_string().contains("whsec_"));
        let one = get(
            &w.app,
            &format!("/v1/admin/endpoints/{}", w.ep_a),
            &w.operator,
        )
        .await;
        assert_eq!(one["partner_id"], w.partner_a.as_str());
        assert_eq!(one["failing_since"], Value::Null);
        assert_eq!(one["backlog"]["waiting"], 0, "nothing waits: {one}");

        for (bad, field) in [
            ("status=broken", "status"),
            ("failing=maybe", "failing"),
            ("colour=red", "colour"),
        ] {
            let path = format!("/v1/admin/endpoints?{bad}");
            let p = call(&w.app, ("GET", &path), &w.operator, None, 422).await;
            assert_eq!(p["field"], field, "?{bad}: {p}");
        }
    }
);
