//! Three instances share twenty endpoints: every delivery arrives once and no
//! endpoint ever has more requests in flight than its concurrency; the
//! instances API tells who is alive and what each owns.

use std::collections::HashSet;

use serde_json::Value;

use super::{Fleet, LEASE_TTL};
use crate::harness::{SLOW, WAIT, answer, call_raw, wait_until};

#[hookd_test_macros::test]
async fn three_instances_deliver_2000_webhooks_without_exceeding_any_endpoints_concurrency() {
    let started = std::time::Instant::now();
    let Some((fleet, _)) = Fleet::registered(3, 20).await else {
        return;
    };

    // 100 events to 20 endpoints, through all three instances.
    let mut events = Vec::new();
    for i in 0..4 {
        events.extend(fleet.publish(i % 3, 25).await);
    }
    // Two at a time, 200 ms each: at least 10 s per endpoint.
    fleet.wait_delivered(&events, SLOW).await;

    fleet.assert_cap_held();
    let duplicates = fleet.duplicates();
    assert!(
        duplicates.is_empty(),
        "with nothing failing, each event should reach each endpoint once; sent more than once: {duplicates:?}"
    );
    fleet.assert_no_panic();
    let owners: HashSet<Option<String>> =
        fleet.leases().await.into_iter().map(|l| l.owner).collect();
    eprintln!(
        "2000 deliveries, at most {} in flight per endpoint, endpoints leased to {} instance(s), in {:?}",
        fleet.receiver.max_in_flight_per_path(),
        owners.len(),
        started.elapsed()
    );
}

#[hookd_test_macros::test]
async fn the_instances_api_lists_each_live_instance_with_the_endpoints_it_owns() {
    let Some((fleet, ids)) = Fleet::registered(3, 20).await else {
        return;
    };
    fleet.publish(0, 1).await;
    fleet.wait_settled().await;

    // The API and the database agree (read again while leases move).
    let last = std::cell::RefCell::new(String::new());
    let (fleet_ref, last_ref) = (&fleet, &last);
    let agreed = wait_until(WAIT, || async {
        let listed = list_instances(fleet_ref).await;
        let problems = disagreements(fleet_ref, &listed).await;
        *last_ref.borrow_mut() = format!("{problems:?} in {listed:#}");
        problems.is_empty().then_some(listed)
    })
    .await;
    let listed = agreed.unwrap_or_else(|| {
        panic!(
            "GET /v1/admin/instances never matched the instances and leases in the database: {}",
            last.borrow()
        )
    });
    let listed_ids: HashSet<&str> = answer::listed(&listed, "id").into_iter().collect();
    let expected: HashSet<&str> = ids.iter().flatten().map(String::as_str).collect();
    assert_eq!(
        listed_ids, expected,
        "the three instances, by id: {listed:#}"
    );
}

#[hookd_test_macros::test]
async fn an_instance_stopped_with_sigterm_is_gone_from_the_instances_api_at_once() {
    let Some((mut fleet, _)) = Fleet::registered(3, 20).await else {
        return;
    };
    let pids = |listed: &Value| -> HashSet<u64> {
        listed["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["pid"].as_u64())
            .collect()
    };
    assert_eq!(pids(&list_instances(&fleet).await).len(), 3, "three before");
    fleet.terminate(2).await;
    let listed = list_instances(&fleet).await;
    let live: HashSet<u64> = fleet.nodes[..2]
        .iter()
        .map(|n| u64::from(n.hookd.pid()))
        .collect();
    assert_eq!(
        pids(&listed),
        live,
        "after a SIGTERM, the stopped instance should be gone: {listed:#}"
    );
}

async fn list_instances(fleet: &Fleet) -> Value {
    let (status, body, _) = call_raw(
        &fleet.http,
        &fleet.nodes[0].base_url,
        "GET",
        "/v1/admin/instances",
        &fleet.store.operator_key,
        None,
    )
    .await;
    assert_eq!(status, 200, "GET /v1/admin/instances: {body}");
    body
}

/// What in the API's list does not match the fleet and the database.
async fn disagreements(fleet: &Fleet, listed: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(items) = listed["data"].as_array() else {
        return vec!["no `data` array".into()];
    };
    let pids: HashSet<u64> = items.iter().filter_map(|i| i["pid"].as_u64()).collect();
    let ours: HashSet<u64> = fleet
        .nodes
        .iter()
        .map(|n| u64::from(n.hookd.pid()))
        .collect();
    if items.len() != 3 || pids != ours {
        problems.push(format!("pids {pids:?}, not {ours:?}"));
    }
    let leases = fleet.leases().await;
    let mut owned = 0;
    for item in items {
        let id = item["id"].as_str().unwrap_or_default();
        let in_db = leases
            .iter()
            .filter(|l| l.owner.as_deref() == Some(id))
            .count() as u64;
        match item["endpoints_owned"].as_u64() {
            Some(n) if n == in_db => owned += n,
            other => problems.push(format!("{id} owns {other:?}, the database says {in_db}")),
        }
        let age = item["heartbeat_age_ms"].as_u64();
        if age.is_none_or(|a| a > LEASE_TTL.as_millis() as u64) {
            problems.push(format!("{id}: heartbeat_age_ms {age:?}"));
        }
        if item["draining"] != Value::Bool(false) || !item["in_flight"].is_u64() {
            problems.push(format!("{id}: draining or in_flight wrong"));
        }
        if item["host"].as_str().is_none_or(str::is_empty) || item["started_at"].is_null() {
            problems.push(format!("{id}: no host or started_at"));
        }
    }
    if owned != 20 {
        problems.push(format!("{owned} endpoints owned in all, not 20"));
    }
    problems
}
