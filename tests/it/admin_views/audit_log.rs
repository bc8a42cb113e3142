//! `GET /v1/admin/audit`: the operator's actions listed newest first,
//! filtered by action, target and partner, a page at a time.

use std::time::Duration;

use serde_json::Value;

use super::{World, call, each, world};
use crate::harness::Backend;
use hookd_test_macros::both_backends;

/// Four actions a second apart, each audited: a replay of A's delivery,
/// a disable and an enable of B's endpoint, a disable of A's. The world.
async fn four_actions(backend: Backend) -> World {
    let w = world(backend, &[]).await;
    let steps = [
        format!("/v1/admin/deliveries/{}/replay", w.d_a),
        format!("/v1/admin/endpoints/{}/disable", w.ep_b),
        format!("/v1/admin/endpoints/{}/enable", w.ep_b),
        format!("/v1/admin/endpoints/{}/disable", w.ep_a),
    ];
    for path in &steps {
        let (status, body, _) = w.app.request("POST", path, &w.operator, None).await;
        assert!(status == 200 || status == 202, "{path}: {body}");
        w.app.advance(Duration::from_secs(1));
    }
    w
}

/// The audit log's page for `query`.
async fn log(w: &World, query: &str) -> Value {
    w.get(&format!("/v1/admin/audit?{query}")).await
}

/// The targets of the entries the log lists for `query`, in order.
async fn targets(w: &World, query: &str) -> Vec<String> {
    each(&log(w, query).await, "target")
}

#[both_backends]
async fn the_audit_log_lists_entries_newest_first(backend: Backend) {
    let w = four_actions(backend).await;
    let (a, b) = (w.partner_a.as_str(), w.partner_b.as_str());
    let all = log(&w, "").await;
    assert_eq!(
        each(&all, "action"),
        [
            "endpoint.disable",
            "endpoint.enable",
            "endpoint.disable",
            "delivery.replay"
        ],
        "newest first: {all}"
    );
    assert_eq!(
        each(&all, "target"),
        [
            w.ep_a.as_str(),
            w.ep_b.as_str(),
            w.ep_b.as_str(),
            w.d_a.as_str()
        ]
    );
    assert_eq!(each(&all, "partner_id"), [a, b, b, a]);
}

#[both_backends]
async fn the_audit_log_filters_by_action(backend: Backend) {
    let w = four_actions(backend).await;
    let cases = [
        ("action=endpoint.disable", vec![&w.ep_a, &w.ep_b]),
        ("action=endpoint.recover", vec![]),
    ];
    for (query, want) in cases {
        let got = targets(&w, query).await;
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "?{query}");
    }
}

#[both_backends]
async fn the_audit_log_filters_by_target(backend: Backend) {
    let w = four_actions(backend).await;
    let query = format!("target={}", w.ep_b);
    let got = targets(&w, &query).await;
    assert_eq!(got, [w.ep_b.as_str(), w.ep_b.as_str()], "?{query}");
}

#[both_backends]
async fn the_audit_log_filters_by_partner_alone_or_with_an_action(backend: Backend) {
    let w = four_actions(backend).await;
    let (a, b) = (&w.partner_a, &w.partner_b);
    let cases = [
        (format!("partner_id={a}"), vec![&w.ep_a, &w.d_a]),
        (
            format!("partner_id={b}&action=endpoint.enable"),
            vec![&w.ep_b],
        ),
    ];
    for (query, want) in cases {
        let got = targets(&w, &query).await;
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "?{query}");
    }
}

#[both_backends]
async fn the_audit_log_continues_from_a_pages_cursor(backend: Backend) {
    let w = four_actions(backend).await;
    let first = log(&w, "limit=3").await;
    assert_eq!(each(&first, "target").len(), 3, "a page of 3: {first}");
    let cursor = first["next_cursor"]
        .as_str()
        .expect("a full page has a cursor");
    let rest = log(&w, &format!("limit=3&after={cursor}")).await;
    assert_eq!(
        each(&rest, "target"),
        [w.d_a.as_str()],
        "the cursor continues: {rest}"
    );
    assert_eq!(rest["next_cursor"], Value::Null);
}

world_test!(
    the_audit_log_refuses_a_parameter_it_does_not_know,
    |w: World| async move {
        let path = "/v1/admin/audit?colour=red";
        let p = call(&w.app, ("GET", path), &w.operator, None, 422).await;
        assert_eq!(p["field"], "colour", "{p}");
    }
);
