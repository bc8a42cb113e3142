//! Ordered delivery per subject, on the real delivery path: a receiver that
//! checks, subject by subject, that every request comes in commit order
//! and only once the one before it was accepted (`checker`); the order
//! under failing heads, across subjects and at the concurrency cap
//! (`order`); a dead head that holds or skips its subject (`dead_heads`).

mod checker;
mod dead_heads;
mod order;

use serde_json::{Value, json};

use crate::harness::{TestApp, expect_status};

/// Creates an ordered endpoint of the test partner at `url` over the API,
/// with `extra` fields; returns (endpoint id, partner key).
pub(crate) async fn ordered_endpoint(app: &TestApp, url: &str, extra: Value) -> (String, String) {
    let key = app.partner_key().await;
    let mut body = json!({ "url": url, "ordering": "subject" });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let created = expect_status(
        &app.request("POST", "/v1/endpoints", &key, Some(&body))
            .await,
        201,
    );
    assert_eq!(created["ordering"], "subject", "{created}");
    (created["id"].as_str().expect("an id").to_string(), key)
}

/// An event of subject `account/s{subject}`, its place in the subject `seq`.
pub(crate) fn subject_event(app: &TestApp, subject: usize, seq: usize) -> Value {
    json!({
        "type": "a.b",
        "partner_id": app.partner_id,
        "subject": {"type": "account", "id": format!("s{subject}")},
        "data": {"subject": subject, "seq": seq},
    })
}

/// Publishes `events` in requests of at most 10 (the fast path).
pub(crate) async fn publish_all(app: &TestApp, events: &[Value]) {
    for chunk in events.chunks(10) {
        let (status, body) = app.post_events(&Value::Array(chunk.to_vec())).await;
        assert_eq!(status, 201, "{body}");
    }
}

/// `subjects` subjects of `per_subject` events each, interleaved: every
/// subject's first event, then every subject's second…
pub(crate) fn interleaved(app: &TestApp, subjects: usize, per_subject: usize) -> Vec<Value> {
    (0..per_subject)
        .flat_map(|seq| (0..subjects).map(move |s| (s, seq)))
        .map(|(s, seq)| subject_event(app, s, seq))
        .collect()
}
