//! An endpoint disabled and enabled by the CLI: the API shows it, the
//! engine of the running `serve` honours it, and each is audited.

use hookd_test_macros::both_backends;
use serde_json::{Value, json};

use super::bed::{Bed, cli_entry};
use crate::harness::Backend;

/// A bed with endpoints at `/a` and `/b`, `/a` disabled by the CLI for
/// "maintenance window": the bed and the CLI's answer.
async fn a_disabled_by_the_cli(backend: Backend) -> (Bed, Value) {
    let bed = Bed::start(backend, &["/a", "/b"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    let reason = ["--reason", "maintenance window"];
    let shown = bed
        .cli_json(&[&["endpoint", "disable", &a], &reason[..]].concat())
        .await;
    (bed, shown)
}

#[both_backends]
async fn an_endpoint_disabled_by_the_cli_is_shown_disabled_with_its_reason_by_the_cli_and_the_api(
    backend: Backend,
) {
    let (bed, shown) = a_disabled_by_the_cli(backend).await;
    let a = &bed.store.endpoint_ids[0];
    assert_eq!(shown["status"], "disabled", "{shown}");
    assert_eq!(shown["disabled_reason"], "maintenance window");
    let (status, api) = bed.admin_endpoint(a).await;
    assert_eq!((status, &api["status"]), (200, &json!("disabled")), "{api}");
    assert_eq!(api["disabled_reason"], "maintenance window");
}

#[both_backends]
async fn an_endpoint_disabled_by_the_cli_gets_no_deliveries(backend: Backend) {
    let (bed, _) = a_disabled_by_the_cli(backend).await;
    let b = &bed.store.endpoint_ids[1];
    // One event for both endpoints: once the active one has it, the
    // fanout is done, and the disabled one got nothing.
    let event = bed.publish().await;
    bed.receives("/b", &event, 0).await;
    assert_eq!(
        bed.got("/a", &event),
        0,
        "the disabled endpoint gets nothing"
    );
    let detail = bed.cli_json(&["event", "get", &event]).await;
    let to: Vec<&Value> = detail["deliveries"]
        .as_array()
        .expect("deliveries")
        .iter()
        .map(|d| &d["endpoint_id"])
        .collect();
    assert_eq!(
        to,
        vec![&json!(b)],
        "only the active endpoint has a delivery: {detail}"
    );
}

#[both_backends]
async fn an_endpoint_disabled_by_the_cli_is_audited_with_its_reason_and_previous_status(
    backend: Backend,
) {
    let (bed, _) = a_disabled_by_the_cli(backend).await;
    let a = &bed.store.endpoint_ids[0];
    let entry = cli_entry(&bed.audit(a).await, "endpoint.disable");
    assert_eq!(entry["detail"]["reason"], "maintenance window", "{entry}");
    assert_eq!(entry["detail"]["previous_status"], "active", "{entry}");
}

#[both_backends]
async fn an_endpoint_enabled_again_by_the_cli_is_active_gets_the_next_event_and_is_audited(
    backend: Backend,
) {
    let (bed, _) = a_disabled_by_the_cli(backend).await;
    let a = &bed.store.endpoint_ids[0];
    let shown = bed.cli_json(&["endpoint", "enable", a]).await;
    assert_eq!(shown["status"], "active", "{shown}");
    let (_, api) = bed.admin_endpoint(a).await;
    assert_eq!(api["status"], "active", "{api}");
    let again = bed.publish().await;
    bed.receives("/a", &again, 0).await;
    cli_entry(&bed.audit(a).await, "endpoint.enable");
}
