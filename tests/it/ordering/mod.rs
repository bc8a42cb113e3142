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

use crate::harness::{
    Backend, TestApp, WAIT, call_raw, expect_status,
    receiver::{Receiver, Reply},
    schedule::exact_schedule,
    spawn_app_with, wait_until,
};

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

/// A subject held by its dead head, for the pages and commands that show
/// and release it.
pub(crate) struct HeldByItsHead {
    /// Tries each delivery once.
    pub app: TestApp,
    /// Refused the first request, takes every other.
    pub receiver: Receiver,
    /// Orders by subject and holds a subject whose head dies.
    pub endpoint: String,
    pub key: String,
    /// The dead head: `account/s0`'s first event; its second waits.
    pub head: String,
}

/// Makes a [`HeldByItsHead`]; returns once the Partner API lists the
/// subject as held by its dead head.
pub(crate) async fn a_subject_held_by_its_dead_head(backend: Backend) -> HeldByItsHead {
    let app = spawn_app_with(backend, &exact_schedule(r#"["0s"]"#)).await;
    let receiver = Receiver::start().await;
    receiver.script([Reply::status(500)]);
    let hold = json!({ "ordering_on_dead": "hold" });
    let (endpoint, key) = ordered_endpoint(&app, &receiver.url(), hold).await;
    publish_all(
        &app,
        &[subject_event(&app, 0, 0), subject_event(&app, 0, 1)],
    )
    .await;
    let path = format!("/v1/endpoints/{endpoint}/held-subjects");
    let head = wait_until(WAIT, || async {
        let listed = expect_status(&app.request("GET", &path, &key, None).await, 200);
        let first = &listed["data"][0];
        (first["held_by"] == "dead_head" && first["waiting"] == 1)
            .then(|| first["head"]["delivery_id"].as_str().map(str::to_string))
            .flatten()
    })
    .await
    .expect("account/s0 is held by its dead head, its second event waiting");
    HeldByItsHead {
        app,
        receiver,
        endpoint,
        key,
        head,
    }
}

impl HeldByItsHead {
    /// Waits until the receiver got the head again, then the subject's
    /// second event: what replaying the head leads to.
    pub(crate) async fn gets_the_head_again_then_the_second_event(&self) {
        let got = self
            .receiver
            .wait_for(3, WAIT)
            .await
            .expect("the head is sent again, then the subject's second event");
        let seqs: Vec<Value> = got
            .iter()
            .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
            .map(|v| v["data"]["seq"].clone())
            .collect();
        assert_eq!(seqs, [json!(0), json!(0), json!(1)], "in order");
    }
}
