//! Incidents: partners told when hookd's own delivery to them is impaired.
//! A backlog older than the threshold opens one incident per affected
//! partner, which hears `hookd.incident.opened` at its notification URL and
//! `hookd.incident.resolved` with the range and the delayed count once the
//! backlog drains; an unaffected partner hears nothing, and two instances
//! open it once (`backlog`). An operator opens and resolves one by hand
//! with the binary or the admin API, and the partner lists its own
//! (`manual`). A real database outage opens one with its true start and
//! resolves it (`outage`). The portal's page is tested with the portal's
//! (`tests/it/portal/incidents.rs`).

mod backlog;
mod instances;
mod manual;
mod outage;

use serde_json::{Value, json};

use crate::{
    harness::{Backend, TestApp, WAIT, receiver::Receiver, spawn_app_with, wait_until},
    notifications::{events_of, set_channel},
};

/// A partner's notification URL: the receiver that hears its notices.
pub struct Channel {
    pub receiver: Receiver,
}

impl Channel {
    /// Sets `key`'s partner's notification URL to a new receiver.
    pub async fn of(app: &TestApp, key: &str) -> Channel {
        let receiver = Receiver::start().await;
        set_channel(app, key, json!({"notification_url": receiver.url()})).await;
        Channel { receiver }
    }

    /// The data of every notice of `event_type` heard so far.
    pub fn heard(&self, event_type: &str) -> Vec<Value> {
        events_of(&self.receiver, event_type)
            .into_iter()
            .map(|(_, v)| v["data"].clone())
            .collect()
    }

    /// Waits for the first notice of `event_type`; its data.
    pub async fn hears(&self, event_type: &str, within: std::time::Duration) -> Value {
        wait_until(within, || async {
            self.heard(event_type).into_iter().next()
        })
        .await
        .unwrap_or_else(|| panic!("no `{event_type}` arrived within {within:?}"))
    }
}

/// An API-only hookd on PostgreSQL (the only backend another process can
/// share) that looks for no incident itself: the test plays the rest.
pub async fn api_only_hookd() -> TestApp {
    sweeping_hookd(
        Backend::Postgres,
        &[
            ("HOOKD_CLUSTER__ROLE", "api"),
            ("HOOKD_INCIDENTS__ENABLED", "false"),
        ],
    )
    .await
}

/// hookd sweeping every 50 ms, with requests allowed 8 s (receivers here
/// are slow on purpose, not failing).
pub async fn sweeping_hookd(backend: Backend, extra: &[(&str, &str)]) -> TestApp {
    let mut env = vec![
        ("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms"),
        ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "8s"),
        ("HOOKD_DELIVERY__LEASE", "20s"),
        ("HOOKD_DELIVERY__JITTER", "0"),
    ];
    env.extend_from_slice(extra);
    spawn_app_with(backend, &env).await
}

/// The partner's incidents as `GET /v1/incidents` lists them to `key`.
pub async fn listed(app: &TestApp, key: &str) -> Vec<Value> {
    let (status, body, _) = app.request("GET", "/v1/incidents", key, None).await;
    assert_eq!(status, 200, "{body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

/// How many incidents the partner has, open or not, in the database.
pub async fn incidents_of(app: &TestApp, partner: &str) -> i64 {
    app.count(&format!(
        "SELECT COUNT(*) AS n FROM incident WHERE partner_id = '{partner}'"
    ))
    .await
}

/// The waits here are for a sweep after a delivery: `WAIT` is enough.
pub const HEAR_WITHIN: std::time::Duration = WAIT;
