//! Listing and reading every partner's published events:
//! `/v1/admin/events`.

use std::collections::HashSet;

use hookd::domain::event::format_time;

use super::{World, set};

/// The event ids a search of the event list finds, in order.
async fn events(w: &World, query: &str) -> Vec<String> {
    let page = w.get(&format!("/v1/admin/events?{query}")).await;
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

world_test!(
    the_operator_lists_every_partners_events_newest_first,
    |w: World| async move {
        let all = events(&w, "").await;
        let at = |id: &String| all.iter().position(|e| e == id);
        assert!(
            matches!((at(&w.ev_b), at(&w.ev_a)), (Some(x), Some(y)) if x < y),
            "both partners' events, B's (newer) first: {all:?}"
        );
    }
);

world_test!(
    the_event_list_filters_by_partner_type_time_and_rejection,
    |w: World| async move {
        let (a, b) = (&w.ev_a, &w.ev_b);
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
        let rejected = w.get("/v1/admin/events?state=rejected").await;
        assert_eq!(
            rejected["data"],
            serde_json::json!([]),
            "none rejected here"
        );
    }
);

world_test!(
    the_event_list_continues_from_a_pages_cursor,
    |w: World| async move {
        let all = events(&w, "").await;
        let first = w.get("/v1/admin/events?limit=1").await;
        let cursor = first["next_cursor"]
            .as_str()
            .expect("a full page has a cursor");
        let next = events(&w, &format!("limit=1&after={cursor}")).await;
        assert_eq!(
            next,
            all[1..2].to_vec(),
            "the cursor continues after the first page"
        );
    }
);

world_test!(
    the_operator_reads_any_partners_event_with_its_deliveries,
    |w: World| async move {
        let b = &w.ev_b;
        let one = w.get(&format!("/v1/admin/events/{b}")).await;
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
    }
);
