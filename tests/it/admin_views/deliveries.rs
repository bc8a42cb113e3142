//! Searching and reading every partner's deliveries:
//! `/v1/admin/deliveries`.

use std::collections::HashSet;

use hookd::domain::event::format_time;
use serde_json::Value;

use super::{World, each, every_page, set};

/// The ids a delivery search finds, as a set.
async fn found(w: &World, query: &str) -> HashSet<String> {
    let page = w.get(&format!("/v1/admin/deliveries?{query}")).await;
    each(&page, "id").into_iter().collect()
}

world_test!(
    the_operator_lists_every_partners_deliveries_newest_first_each_naming_its_partner,
    |w: World| async move {
        let all = w.get("/v1/admin/deliveries").await;
        let ids = each(&all, "id");
        assert_eq!(ids.len(), 3, "every partner's deliveries are found: {all}");
        assert_eq!(ids[2], w.d_a, "newest first: A's delivery is the oldest");
        let owners: Vec<(String, String)> = ids.into_iter().zip(each(&all, "partner_id")).collect();
        for (id, owner) in owners {
            let want = if id == w.d_a {
                &w.partner_a
            } else {
                &w.partner_b
            };
            assert_eq!(&owner, want, "delivery {id} names its partner: {all}");
        }
    }
);

world_test!(
    each_delivery_search_filter_finds_exactly_the_deliveries_it_names,
    |w: World| async move {
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
    }
);

world_test!(
    paging_the_delivery_search_finds_what_one_page_does_in_order,
    |w: World| async move {
        let all = w.get("/v1/admin/deliveries").await;
        let ids = each(&all, "id");
        let seen = every_page(&w, "/v1/admin/deliveries?limit=1").await;
        assert_eq!(seen, ids, "paging finds what one page does, in order");
    }
);

world_test!(
    the_operator_reads_any_partners_delivery_with_its_attempts,
    |w: World| async move {
        let path = format!("/v1/admin/deliveries/{}", w.d_b);
        let d = w.get(&path).await;
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

        let d = w.get(&format!("/v1/admin/deliveries/{}", w.d_drop)).await;
        assert_eq!(d["attempts"][0]["error_category"], "connect", "{d}");
        assert_eq!(d["attempts"][0]["status_code"], Value::Null, "{d}");
    }
);
