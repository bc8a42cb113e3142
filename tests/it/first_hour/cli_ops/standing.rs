//! `hookd endpoint get` shows how an endpoint's deliveries go, as the
//! operator API shows it: after a receiver answered 503, its last error
//! (the status, the category, the delivery) and its circuit, in the JSON
//! `GET /v1/admin/endpoints/{id}` answers and in the text for a person.

use serde_json::Value;

use super::bed::Bed;
use crate::harness::{Backend, SLOW, receiver::Reply, wait_until};

#[hookd_test_macros::test]
async fn endpoint_get_shows_the_last_error_and_the_circuit_as_the_admin_api_does() {
    let bed = Bed::start(Backend::Sqlite, &["/down"]).await;
    bed.receiver.set_default(Reply::status(503));
    let ep = bed.store.endpoint_ids[0].clone();
    bed.publish().await;
    // The attempt's record and the circuit's stored count are written a
    // moment apart: wait for both.
    let shown = wait_until(SLOW, || async {
        let shown = bed.cli_json(&["endpoint", "get", &ep]).await;
        let counted = shown["circuit"]["consecutive_failures"].as_u64() >= Some(1);
        (!shown["last_error"].is_null() && counted).then_some(shown)
    })
    .await
    .expect("the failed attempt is shown as the last error, and the circuit counts it");
    let last = &shown["last_error"];
    assert_eq!(
        (&last["status_code"], &last["error_category"]),
        (&Value::from(503), &Value::from("http_status")),
        "{shown}"
    );
    let (status, api) = bed.admin_endpoint(&ep).await;
    assert_eq!(status, 200, "{api}");
    for field in ["id", "partner_id", "url", "status", "last_error"] {
        assert_eq!(shown[field], api[field], "`{field}` as the API shows it");
    }
    let text = bed.cli(&["endpoint", "get", &ep]).await;
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("last error"))
        .unwrap_or_else(|| panic!("no `last error` line:\n{text}"));
    assert!(line.contains("http_status 503"), "{line}");
    assert!(text.lines().any(|l| l.starts_with("circuit")), "{text}");
}
