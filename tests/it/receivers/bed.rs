//! The test bed for one receiver: hookd on SQLite with an endpoint, made
//! over the Partner API, at the receiver holding that endpoint's secret.

use hookd::{secret::Secret, signing};
use serde_json::{Value, json};

use super::{InboxRow, Receiver, ReceiverUnderTest};
use crate::harness::{Backend, SLOW, TestApp, spawn_app_with, wait_until};

/// A request's headers, as the harness sends them.
pub type Headers = Vec<(&'static str, String)>;

/// hookd on SQLite with an endpoint (over the Partner API) at a receiver
/// holding that endpoint's secret.
pub struct Bed {
    pub app: TestApp,
    /// The partner's key.
    pub key: String,
    pub endpoint: String,
    pub secret: Secret,
    pub receiver: Receiver,
}

impl Bed {
    /// `None` when the receiver's toolchain is missing outside CI.
    pub async fn start(spec: &ReceiverUnderTest) -> Option<Bed> {
        Bed::start_with(spec, &[]).await
    }

    /// As `start`, with more of hookd's settings.
    pub async fn start_with(spec: &ReceiverUnderTest, extra: &[(&str, &str)]) -> Option<Bed> {
        let mut receiver = Receiver::new(spec)?;
        // A receiver that cannot store waits for its inbox's lock (a couple
        // of seconds) before it answers 5xx: give it time to answer.
        let mut env = vec![
            ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "5s"),
            ("HOOKD_DELIVERY__LEASE", "10s"),
        ];
        env.extend_from_slice(extra);
        let app = spawn_app_with(Backend::Sqlite, &env).await;
        let key = app.partner_key().await;
        let body = json!({"url": receiver.url(), "description": spec.name});
        let (status, created, _) = app
            .request("POST", "/v1/endpoints", &key, Some(&body))
            .await;
        assert_eq!(status, 201, "the endpoint is created: {created}");
        let secret =
            Secret::parse(created["secret"].as_str().expect("a secret")).expect("a whsec_ secret");
        receiver.start(&[&secret]).await;
        Some(Bed {
            endpoint: created["id"].as_str().expect("an endpoint id").into(),
            app,
            key,
            secret,
            receiver,
        })
    }

    /// Publishes `event` for the test partner; returns its id.
    pub async fn publish(&self, mut event: Value) -> String {
        event["partner_id"] = json!(self.app.partner_id);
        let (status, body) = self.app.post_events(&event).await;
        assert_eq!(status, 201, "publishing {event} is accepted: {body}");
        body["event_id"].as_str().expect("an event id").into()
    }

    /// Waits until hookd counts the event delivered to the receiver.
    pub async fn delivered(&self, event_id: &str) {
        self.app
            .wait_for_state(event_id, &self.endpoint, "delivered", SLOW)
            .await;
    }

    /// Publishes, waits for delivery and for the receiver to process it.
    pub async fn deliver(&self, event: Value) -> (String, InboxRow) {
        let id = self.publish(event).await;
        self.delivered(&id).await;
        let row = self.receiver.processed(&id).await;
        (id, row)
    }

    /// The attempts hookd recorded for the event, once there are `n`.
    pub async fn attempts(&self, event_id: &str, n: usize) -> Vec<(Option<i32>, String)> {
        wait_until(SLOW, || async {
            let attempts = self.app.attempts(event_id, &self.endpoint).await;
            (attempts.len() >= n).then(|| {
                attempts
                    .into_iter()
                    .map(|a| (a.status_code, a.response_excerpt.unwrap_or_default()))
                    .collect()
            })
        })
        .await
        .unwrap_or_else(|| panic!("hookd did not record {n} attempts of {event_id}"))
    }

    /// The headers of a request signed with `secrets` at `timestamp`.
    pub fn signed(secrets: &[Secret], id: &str, timestamp: i64, body: &str) -> Headers {
        vec![
            ("webhook-id", id.to_string()),
            ("webhook-timestamp", timestamp.to_string()),
            (
                "webhook-signature",
                signing::signature_header(
                    &secrets
                        .iter()
                        .cloned()
                        .map(signing::SigningKey::Hmac)
                        .collect::<Vec<_>>(),
                    id,
                    timestamp,
                    body.as_bytes(),
                ),
            ),
        ]
    }
}
