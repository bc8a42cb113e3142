//! An endpoint's URL changed by the CLI is where the running engine sends
//! next; its delivery is found, shown and replayed by the CLI; the endpoint
//! deleted by the CLI is gone from the API. Each change is audited.

use serde_json::json;

use super::bed::{Bed, cli_entry};
use crate::harness::{SLOW, wait_until};

/// A bed whose one endpoint the CLI moved to `/moved` with a concurrency
/// of 2, and an event delivered there: (bed, endpoint id, event id).
async fn moved_and_delivered() -> (Bed, String, String) {
    let bed = Bed::start(crate::harness::Backend::Sqlite, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    let moved = format!("{}/moved", bed.receiver.url());
    let updated = bed
        .cli_json(&[
            "endpoint",
            "update",
            &a,
            "--url",
            &moved,
            "--concurrency",
            "2",
        ])
        .await;
    assert_eq!(
        (&updated["url"], &updated["concurrency"]),
        (&json!(moved), &json!(2)),
        "{updated}"
    );
    let event = bed.publish().await;
    bed.receives("/moved", &event, 0).await;
    (bed, a, event)
}

/// The delivery of the bed's event to `endpoint`, once the CLI lists it as
/// delivered.
async fn delivered(bed: &Bed, endpoint: &str) -> String {
    let list = [
        "delivery",
        "list",
        "--endpoint",
        endpoint,
        "--state",
        "delivered",
    ];
    wait_until(SLOW, || async {
        let page = bed.cli_json(&list).await;
        page["data"][0]["id"].as_str().map(str::to_string)
    })
    .await
    .expect("the delivery is listed as delivered")
}

#[hookd_test_macros::test]
async fn the_engine_sends_to_the_url_the_cli_set_and_the_change_is_audited() {
    let (bed, a, event) = moved_and_delivered().await;
    assert_eq!(bed.got("/a", &event), 0, "nothing went to the old URL");
    cli_entry(&bed.audit(&a).await, "endpoint.update");
}

#[hookd_test_macros::test]
async fn a_delivery_found_by_the_cli_shows_its_event_and_attempts() {
    let (bed, a, event) = moved_and_delivered().await;
    let delivery = delivered(&bed, &a).await;
    let detail = bed.cli_json(&["delivery", "get", &delivery]).await;
    assert_eq!(detail["attempts"][0]["status_code"], 200, "{detail}");
    assert_eq!(detail["event_id"], json!(event), "{detail}");
    let moved = json!(format!("{}/moved", bed.receiver.url()));
    assert_eq!(
        detail["attempts"][0]["url"], moved,
        "the attempt keeps the URL it went to: {detail}"
    );
    let listed = bed
        .cli_json(&["delivery", "attempts", "--delivery", &delivery])
        .await;
    assert_eq!(listed["data"][0]["url"], moved, "{listed}");
}

#[hookd_test_macros::test]
async fn a_delivery_replayed_by_the_cli_goes_now_reaches_the_receiver_again_and_is_audited() {
    let (bed, a, event) = moved_and_delivered().await;
    let delivery = delivered(&bed, &a).await;
    let queued = bed.cli_json(&["delivery", "replay", &delivery]).await;
    assert_eq!(queued["sends"], "now", "{queued}");
    // With the same webhook-id: a second request for the event.
    bed.receives("/moved", &event, 1).await;
    cli_entry(&bed.audit(&delivery).await, "delivery.replay");
}

#[hookd_test_macros::test]
async fn an_endpoint_deleted_by_the_cli_is_gone_from_the_api_and_audited() {
    let (bed, a, _) = moved_and_delivered().await;
    let gone = bed.cli_json(&["endpoint", "delete", &a, "--yes"]).await;
    assert_eq!(gone, json!({"id": a, "deleted": true}));
    let (status, _) = bed.admin_endpoint(&a).await;
    assert_eq!(status, 404, "the API no longer has it");
    cli_entry(&bed.audit(&a).await, "endpoint.delete");
}
