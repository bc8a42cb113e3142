//! Operator views and actions in the API: `/v1/admin/deliveries`,
//! `/v1/admin/events`, `/v1/admin/endpoints` across partners, the actions
//! (replay, recover, enable, disable) and the audit log they write.
//!
//! - `deliveries`, `events`, `endpoints`: searching and reading each;
//! - `actions`: each action works and writes one audit entry;
//! - `audit_log`: the log lists them newest first, filters and pages;
//! - `refusals`: partner keys get 403, unknown ids 404.

/// A test of the operator views on both backends (as `on_both_backends!`),
/// given the world on the defaults: `world_test!(name, |w: World| async
/// move { … })`. Tests that need other settings call `world` themselves.
macro_rules! world_test {
    ($name:ident, |$w:ident : World| async move $body:block) => {
        $crate::on_both_backends!($name, |backend: $crate::harness::Backend| async move {
            let $w = $crate::admin_views::world(backend, &[]).await;
            $body
        });
    };
}

mod actions;
mod audit_log;
mod deliveries;
mod endpoints;
mod events;
mod refusals;

use std::{collections::HashSet, time::Duration};

use hookd::{domain::clock::Clock as _, store::keys::Role};
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp, UNLIMITED, WAIT,
    answer::header,
    receiver::{Receiver, Reply},
    spawn_app_with,
};

/// Two partners, three endpoints and three deliveries in known states:
///
/// | partner | endpoint  | receiver answers | delivery | state, last status, category |
/// |---------|-----------|------------------|----------|------------------------------|
/// | A       | `ep_a`    | 200              | `d_a`    | delivered, 200, none         |
/// | B       | `ep_b`    | 503              | `d_b`    | failed, 503, `http_status`   |
/// | B       | `ep_drop` | drops the socket | `d_drop` | failed, none, `connect`      |
///
/// A's event `ev_a` is received a second before B's `ev_b`; retries wait an hour.
pub struct World {
    pub app: TestApp,
    pub operator: String,
    pub operator_id: String,
    pub partner_a: String,
    pub key_a: String,
    pub partner_b: String,
    pub key_b: String,
    pub ok: Receiver,
    pub dropping: Receiver,
    pub ep_a: String,
    pub ep_b: String,
    pub ep_drop: String,
    pub ev_a: String,
    pub ev_b: String,
    pub d_a: String,
    pub d_b: String,
    pub d_drop: String,
    /// When the world began (before either event).
    pub start: i64,
    /// When B's event was received.
    pub t_b: i64,
    _failing: Receiver,
}

pub async fn world(backend: Backend, extra: &[(&str, &str)]) -> World {
    let mut env = vec![
        ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1h"]"#),
        ("HOOKD_DELIVERY__JITTER", "0"),
    ];
    env.extend_from_slice(&UNLIMITED);
    env.extend_from_slice(extra);
    let app = spawn_app_with(backend, &env).await;
    let start = app.clock.now_ms();
    let operator = app.key(Role::Operator, None).await;
    let partner_a = app.partner_id.clone();
    let key_a = app.partner_key().await;
    let (partner_b, key_b) = app.another_partner("Beta").await;
    let ok = Receiver::start().await;
    let failing = Receiver::start().await;
    failing.set_default(Reply::status(503));
    let dropping = Receiver::start().await;
    dropping.set_default(Reply::Drop);
    // Subscribed to the test's own types only: the notices hookd sends
    // when a test disables an endpoint must not add deliveries.
    let (ep_a, _) = app.endpoint_for(&partner_a, &ok.url(), &["a.*"], 8).await;
    let (ep_b, _) = app
        .endpoint_for(&partner_b, &failing.url(), &["b.*"], 8)
        .await;
    let (ep_drop, _) = app
        .endpoint_for(&partner_b, &dropping.url(), &["b.*"], 8)
        .await;

    let ev_a = app.publish("a.one", json!({"n": 1})).await;
    app.wait_for_state(&ev_a, &ep_a, "delivered", WAIT).await;
    app.advance(Duration::from_secs(1));
    let t_b = app.clock.now_ms();
    let (status, body) = app
        .post_events(&json!({"type": "b.two", "partner_id": partner_b, "data": {"n": 2}}))
        .await;
    assert_eq!(status, 201, "B's event is accepted: {body}");
    let ev_b = body["event_id"].as_str().expect("an event id").to_string();
    for ep in [&ep_b, &ep_drop] {
        app.wait_for_state(&ev_b, ep, "failed", WAIT).await;
    }
    let d_a = delivery_id(&app, &ev_a, &ep_a).await;
    let d_b = delivery_id(&app, &ev_b, &ep_b).await;
    let d_drop = delivery_id(&app, &ev_b, &ep_drop).await;
    World {
        operator: operator.key,
        operator_id: operator.id,
        partner_a,
        key_a,
        partner_b,
        key_b,
        ok,
        dropping,
        ep_a,
        ep_b,
        ep_drop,
        ev_a,
        ev_b,
        d_a,
        d_b,
        d_drop,
        start,
        t_b,
        _failing: failing,
        app,
    }
}

impl World {
    /// `GET path` as the world's operator, which must answer 200.
    pub async fn get(&self, path: &str) -> Value {
        get(&self.app, path, &self.operator).await
    }
}

/// The id of the delivery of `event` to `endpoint`, from its first attempt.
async fn delivery_id(app: &TestApp, event: &str, endpoint: &str) -> String {
    let attempts = app.attempts(event, endpoint).await;
    let first = attempts.first();
    first
        .unwrap_or_else(|| panic!("an attempt of {event} at {endpoint}"))
        .delivery_id
        .clone()
}

/// `method path` with `key` and a body, which must answer `status`;
/// an error must be problem+json. Returns the body.
pub async fn call(
    app: &TestApp,
    (method, path): (&str, &str),
    key: &str,
    body: Option<Value>,
    status: u16,
) -> Value {
    let (got, value, headers) = app.request(method, path, key, body.as_ref()).await;
    assert_eq!(got, status, "{method} {path} answered {got}: {value}");
    if status >= 400 {
        let ct = header(&headers, "content-type");
        assert_eq!(ct, Some("application/problem+json"), "{method} {path}");
    }
    value
}

/// `GET path` as `key`, which must answer 200.
pub async fn get(app: &TestApp, path: &str, key: &str) -> Value {
    call(app, ("GET", path), key, None, 200).await
}

/// The problem type's last segment (`not-found`).
pub fn kind(problem: &Value) -> &str {
    let t = problem["type"].as_str().unwrap_or_default();
    t.rsplit('/').next().unwrap_or_default()
}

/// `field` of every item of a page's `data`, in order.
pub fn each(page: &Value, field: &str) -> Vec<String> {
    let Some(items) = page["data"].as_array() else {
        panic!("a page has a data array: {page}");
    };
    items
        .iter()
        .map(|i| i[field].as_str().unwrap_or_default().to_string())
        .collect()
}

/// How many audit entries there are.
pub async fn audit_count(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM audit").await
}

/// The status of the endpoint `id` (`active`, `disabled`…), from the store.
pub async fn endpoint_status(app: &TestApp, id: &str) -> String {
    let endpoint = hookd::store::admin::endpoint(app.db(), id)
        .await
        .expect("the endpoint reads")
        .unwrap_or_else(|| panic!("no endpoint {id}"));
    endpoint.status.as_str().to_string()
}

/// The ids named, as a set.
pub fn set(items: &[&String]) -> HashSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Every id a list gives from `path` (which has a query) on, following
/// `next_cursor` to the end.
pub async fn every_page(w: &World, path: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut next = path.to_string();
    loop {
        let page = w.get(&next).await;
        seen.extend(each(&page, "id"));
        let Some(cursor) = page["next_cursor"].as_str() else {
            return seen;
        };
        next = format!("{path}&after={cursor}");
    }
}

/// `GET list?query` for each `(query, field)`, which must be a 422 problem
/// naming `field`; returns the problems, in order.
pub async fn refused_naming(w: &World, list: &str, cases: &[(&str, &str)]) -> Vec<Value> {
    let mut problems = Vec::new();
    for (query, field) in cases {
        let path = format!("{list}?{query}");
        let p = call(&w.app, ("GET", &path), &w.operator, None, 422).await;
        assert_eq!(p["field"], *field, "?{query} names its parameter: {p}");
        problems.push(p);
    }
    problems
}
