//! An endpoint changed through one instance is reloaded at once by the
//! instance that owns it (a NOTIFY on `hookd_endpoint`), not when its cached
//! settings expire a minute later.

use serde_json::json;

use super::Fleet;
use crate::harness::{SLOW, WAIT, wait_until};

#[hookd_test_macros::test]
async fn a_url_changed_through_one_instance_is_used_by_the_owner_at_once() {
    let Some((fleet, _)) = Fleet::registered(2, 2).await else {
        return;
    };
    let first = fleet.publish(0, 1).await;
    fleet.wait_delivered(&first, SLOW).await;
    let leases = fleet.wait_settled().await;
    let lease = &leases[0];
    let owner = lease
        .owner
        .clone()
        .expect("a settled endpoint has an owner");
    let instances = fleet.instances().await;
    let other = fleet
        .nodes
        .iter()
        .position(|n| instances.get(&n.hookd.pid()) != Some(&owner))
        .expect("one of the two instances does not own the endpoint");
    // The owner's actor has the endpoint's settings loaded (and cached).
    let warm = fleet.publish(1 - other, 1).await;
    fleet.wait_delivered(&warm, SLOW).await;

    let moved = format!("{}/moved", fleet.receiver.url());
    let patched = fleet
        .http
        .patch(format!(
            "{}/v1/endpoints/{}",
            fleet.nodes[other].base_url, lease.endpoint_id
        ))
        .bearer_auth(&fleet.store.partner_key)
        .send_json(&json!({ "url": moved }))
        .await
        .expect("the PATCH is answered");
    assert_eq!(patched.status().as_u16(), 200, "the URL change is accepted");

    let events = fleet.publish(other, 1).await;
    let arrived = wait_until(WAIT, || async {
        fleet
            .receiver
            .received()
            .iter()
            .any(|r| r.path == "/moved" && r.header("webhook-id") == Some(events[0].as_str()))
            .then_some(())
    })
    .await;
    assert!(
        arrived.is_some(),
        "the owner should send to the new URL within seconds of the change, not after its cached settings expire\n{}",
        fleet.logs()
    );
    fleet.assert_no_panic();
}
