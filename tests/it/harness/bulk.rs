//! Many events at once: publishing a batch for every endpoint of the test
//! partner, and waiting until that many deliveries are delivered.

use serde_json::{Value, json};

use super::{SLOW, TestApp, wait_until};

/// Publishes `n` events of type `a.b` in one request, for every endpoint of
/// the test partner, and checks that the request is accepted.
pub async fn publish_many(app: &TestApp, n: usize) {
    let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
    let (status, body) = app.post_events(&Value::Array(vec![event; n])).await;
    assert_eq!(status, 201, "publishing should be accepted: {body}");
}

/// Waits (within `SLOW`) until `n` deliveries are recorded as delivered.
pub async fn all_delivered(app: &TestApp, n: usize) {
    let sql = "SELECT COUNT(*) AS n FROM delivery WHERE state = 'delivered'";
    let done = wait_until(SLOW, || async {
        (app.count(sql).await == n as i64).then_some(())
    })
    .await;
    assert!(
        done.is_some(),
        "{n} deliveries were not recorded as delivered within {SLOW:?} (only {})",
        app.count(sql).await
    );
}
