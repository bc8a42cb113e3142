//! Split roles on one PostgreSQL: an `api` instance takes events and serves
//! the API but sends nothing to a receiver; a `delivery` instance fans out
//! and delivers, and its listener answers the probes and metrics only.

use std::time::Duration;

use super::Fleet;
use crate::harness::{
    SLOW, call_raw,
    process::{Hookd, free_port},
    wait_until,
};

#[hookd_test_macros::test]
async fn events_an_api_instance_accepts_wait_for_a_delivery_instance_which_alone_sends_them() {
    let Some((mut fleet, _)) = Fleet::registered(0, 3).await else {
        return;
    };
    let api = fleet.add_as("api").await;
    let ids = fleet.wait_registered().await;
    let api_id = ids[api].clone().expect("the api instance registered");

    // Accepted and committed with their deliveries, but nobody sends them.
    let events = fleet.publish(api, 5).await;
    let written = wait_until(SLOW, || async {
        let rows = fleet.query("SELECT COUNT(*) AS n FROM delivery").await;
        let n: i64 = rows[0].try_get("", "n").unwrap_or_default();
        (n == 15).then_some(())
    })
    .await;
    assert!(
        written.is_some(),
        "5 events × 3 endpoints should be 15 delivery rows\n{}",
        fleet.logs()
    );
    // Two lease periods: an instance that could take leases would have.
    actix_rt::time::sleep(fleet.lease_ttl * 2).await;
    assert_eq!(
        fleet.receiver.distinct_deliveries(),
        0,
        "an api instance must send nothing\n{}",
        fleet.logs()
    );
    let held: Vec<_> = fleet
        .leases()
        .await
        .into_iter()
        .filter_map(|l| l.owner)
        .collect();
    assert!(held.is_empty(), "an api instance takes no lease: {held:?}");

    let delivery = fleet.add_as("delivery").await;
    fleet.wait_delivered(&events, SLOW).await;
    let delivery_pid = fleet.nodes[delivery].hookd.pid();
    let delivery_id = fleet
        .instances()
        .await
        .remove(&delivery_pid)
        .expect("the delivery instance registered");
    let owners: Vec<_> = fleet.leases().await.into_iter().map(|l| l.owner).collect();
    assert!(
        owners
            .iter()
            .all(|o| o.as_deref() == Some(delivery_id.as_str())),
        "every lease is the delivery instance's ({delivery_id}), none the api's ({api_id}): {owners:?}"
    );
    // More events through the api instance flow straight on.
    let more = fleet.publish(api, 5).await;
    fleet.wait_delivered(&more, SLOW).await;
    assert_eq!(fleet.duplicates().len(), 0, "each delivery arrives once");

    // The operators see who does what.
    let (status, listed, _) = call_raw(
        &fleet.http,
        &fleet.nodes[api].base_url,
        "GET",
        "/v1/admin/instances",
        &fleet.store.operator_key,
        None,
    )
    .await;
    assert_eq!(status, 200, "{listed}");
    let role_of = |id: &str| {
        listed["data"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["id"] == id)
            .map(|i| i["role"].clone())
    };
    assert_eq!(role_of(&api_id), Some("api".into()), "{listed:#}");
    assert_eq!(role_of(&delivery_id), Some("delivery".into()), "{listed:#}");
    fleet.assert_no_panic();
}

#[hookd_test_macros::test]
async fn a_delivery_instance_answers_probes_and_metrics_but_no_api_dashboard_or_portal() {
    let Some((mut fleet, _)) = Fleet::registered(0, 1).await else {
        return;
    };
    let delivery = fleet.add_as("delivery").await;
    let base = fleet.nodes[delivery].base_url.clone();
    let operator = fleet.store.operator_key.clone();
    for path in ["/healthz", "/readyz", "/metrics"] {
        let (status, body, _) = call_raw(&fleet.http, &base, "GET", path, &operator, None).await;
        assert_eq!(status, 200, "{path} on a delivery instance: {body}");
    }
    let key = fleet.store.service_key.clone();
    for (method, path) in [
        ("POST", "/v1/events"),
        ("GET", "/v1/admin/instances"),
        ("GET", "/dashboard"),
        ("GET", "/portal"),
        ("GET", "/openapi.json"),
    ] {
        let body = (method == "POST").then_some("{}");
        let (status, answer, _) = call_raw(&fleet.http, &base, method, path, &key, body).await;
        assert_eq!(
            status, 404,
            "{method} {path} on a delivery instance: {answer}"
        );
    }
}

#[hookd_test_macros::test]
async fn a_split_role_on_sqlite_is_refused_at_start_with_the_reason() {
    let dir = tempfile::tempdir().expect("a folder");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("roles.db").display()
    );
    let listen = format!("127.0.0.1:{}", free_port());
    for role in ["api", "delivery"] {
        let env = crate::harness::test_env(&url, &[("HOOKD_HTTP__LISTEN", &listen)]);
        let mut hookd = Hookd::start(&["serve", "--role", role], &env, dir.path(), role);
        let status = hookd.exited(Duration::from_secs(20)).await;
        let stderr = hookd.stderr();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(2),
            "serve --role {role} on SQLite: {stderr}"
        );
        assert!(
            stderr.contains(&format!("role `{role}` needs PostgreSQL")),
            "the refusal says why: {stderr}"
        );
    }
}
