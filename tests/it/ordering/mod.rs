//! Ordered delivery per subject, on the real delivery path: a receiver that
//! checks, subject by subject, that every request comes in commit order
//! and only once the one before it was accepted (`checker`); the order
//! under failing heads, across subjects and at the concurrency cap
//! (`order`); a dead head that holds or skips its subject (`dead_heads`);
//! the `hookd` binary killed or restarted under ordered endpoints (`crash`)
//! and a rolling restart of three instances on PostgreSQL (`rolling`).

mod checker;
mod crash;
mod dead_heads;
mod order;
mod rolling;

use std::ops::Range;

use serde_json::{Value, json};

use crate::harness::{TestApp, call_raw, expect_status};

/// Creates an ordered endpoint of the test partner at `url` over the API,
/// with `extra` fields; returns (endpoint id, partner key).
pub(crate) async fn ordered_endpoint(app: &TestApp, url: &str, extra: Value) -> (String, String) {
    let key = app.partner_key().await;
    let id = ordered_endpoint_at(&app.http, &app.base_url, &key, url, extra).await;
    (id, key)
}

/// Creates an ordered endpoint at `url` through the Partner API of the
/// hookd at `base_url`, with the partner's `key` and `extra` fields (which
/// win over the defaults, `"ordering"` included); returns its id.
pub(crate) async fn ordered_endpoint_at(
    http: &awc::Client,
    base_url: &str,
    key: &str,
    url: &str,
    extra: Value,
) -> String {
    let mut body = json!({ "url": url, "ordering": "subject" });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let text = body.to_string();
    let answer = call_raw(http, base_url, "POST", "/v1/endpoints", key, Some(&text)).await;
    let created = expect_status(&answer, 201);
    assert_eq!(created["ordering"], body["ordering"], "{created}");
    created["id"].as_str().expect("an id").to_string()
}

/// An event of subject `account/s{subject}`, its place in the subject `seq`.
pub(crate) fn subject_event(app: &TestApp, subject: usize, seq: usize) -> Value {
    partner_event(&app.partner_id, subject, seq)
}

/// Like `subject_event`, for the partner `partner_id` (of a hookd child).
pub(crate) fn partner_event(partner_id: &str, subject: usize, seq: usize) -> Value {
    json!({
        "type": "a.b",
        "partner_id": partner_id,
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
    interleaved_places(&app.partner_id, subjects, 0..per_subject)
}

/// The events at places `seqs` of `subjects` subjects of the partner
/// `partner_id`, interleaved like `interleaved`.
pub(crate) fn interleaved_places(
    partner_id: &str,
    subjects: usize,
    seqs: Range<usize>,
) -> Vec<Value> {
    seqs.flat_map(|seq| (0..subjects).map(move |s| (s, seq)))
        .map(|(s, seq)| partner_event(partner_id, s, seq))
        .collect()
}
