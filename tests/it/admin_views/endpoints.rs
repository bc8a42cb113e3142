//! Listing and reading every partner's endpoints, with their backlog and
//! never a secret: `/v1/admin/endpoints`.

use std::collections::HashSet;

use serde_json::Value;

use super::{World, call, each, every_page, set};

/// The endpoint ids a search of the endpoint list finds, as a set.
async fn endpoints(w: &World, query: &str) -> HashSet<String> {
    let page = w.get(&format!("/v1/admin/endpoints?{query}")).await;
    assert!(
        !page.to_string().contains("whsec_") && page["data"][0].get("secret").is_none(),
        "no secret is ever shown: {page}"
    );
    each(&page, "id").into_iter().collect()
}

/// The world with a fourth endpoint, A's, disabled by A: its id.
async fn with_a_disabled_endpoint(w: &World) -> String {
    let (off, _) = w
        .app
        .endpoint_for(&w.partner_a, "http://127.0.0.1:9/off", &[], 8)
        .await;
    let path = format!("/v1/endpoints/{off}/disable");
    call(&w.app, ("POST", &path), &w.key_a, None, 200).await;
    off
}

world_test!(
    the_endpoint_list_filters_by_partner_status_and_failing,
    |w: World| async move {
        let off = with_a_disabled_endpoint(&w).await;
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
    }
);

world_test!(
    paging_the_endpoint_list_finds_each_endpoint_once,
    |w: World| async move {
        let off = with_a_disabled_endpoint(&w).await;
        let every = set(&[&w.ep_a, &w.ep_b, &w.ep_drop, &off]);
        let paged = every_page(&w, "/v1/admin/endpoints?limit=3").await;
        assert_eq!(paged.len(), every.len(), "each endpoint once: {paged:?}");
        let paged: HashSet<String> = paged.into_iter().collect();
        assert_eq!(paged, every, "paging finds each endpoint once");
    }
);

world_test!(
    the_operator_reads_any_partners_endpoint_with_its_backlog_and_no_secret,
    |w: World| async move {
        let one = w.get(&format!("/v1/admin/endpoints/{}", w.ep_b)).await;
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
        let one = w.get(&format!("/v1/admin/endpoints/{}", w.ep_a)).await;
        assert_eq!(one["partner_id"], w.partner_a.as_str());
        assert_eq!(one["failing_since"], Value::Null);
        assert_eq!(one["backlog"]["waiting"], 0, "nothing waits: {one}");
    }
);
