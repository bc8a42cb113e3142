//! Endpoint notices reach a partner with one endpoint: by mail through a
//! real SMTP listener, at its notification URL (signed with its own
//! secret), and the operator's URL and mail get every partner's, each once
//! per transition (`transitions`); a mail the server refuses for now is
//! sent later, once (`mail`); the partner's channel is set, read back,
//! checked and removed, by the partner or the operator (`channel`).

mod channel;
mod mail;
mod transitions;

use hookd::{secret::Secret, signing};
use serde_json::Value;

use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Received, Receiver, Reply},
    smtp::{Mail, SmtpListener},
    spawn_app_with, wait_until,
};

pub const HOUR: u64 = 3600;
pub const OPERATOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// hookd mailing through `smtp`, with the operator's URL and mail set, the
/// real health thresholds, and a sweep every 50 ms.
pub struct Scene {
    pub app: TestApp,
    pub smtp: SmtpListener,
    pub operator: Receiver,
    pub partner_key: String,
}

pub async fn hookd_with_every_channel(backend: Backend) -> Scene {
    let smtp = SmtpListener::start().await;
    let operator = Receiver::start().await;
    let (smtp_url, operator_url) = (smtp.url(), operator.url());
    let app = spawn_app_with(
        backend,
        &[
            ("HOOKD_SMTP__URL", &smtp_url),
            ("HOOKD_SMTP__FROM", "hookd <hookd@ops.example>"),
            ("HOOKD_NOTIFY__OPERATOR_URL", &operator_url),
            ("HOOKD_NOTIFY__OPERATOR_SECRET", OPERATOR_SECRET),
            ("HOOKD_NOTIFY__OPERATOR_EMAIL", "oncall@ops.example"),
            ("HOOKD_DELIVERY__JITTER", "0"),
            ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100"),
            ("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms"),
            ("HOOKD_RETENTION__SWEEP_INTERVAL", "50ms"),
        ],
    )
    .await;
    let partner_key = app.partner_key().await;
    Scene {
        app,
        smtp,
        operator,
        partner_key,
    }
}

/// `hookd_with_every_channel`, with the partner's channel set to `channel`
/// by the partner: the scene and the answer's body.
pub async fn with_partner_channel(backend: Backend, channel: Value) -> (Scene, Value) {
    let scene = hookd_with_every_channel(backend).await;
    let set = set_channel(&scene.app, &scene.partner_key, channel).await;
    (scene, set)
}

/// Sets the partner's channel; returns the answer's body.
pub async fn set_channel(app: &TestApp, key: &str, body: Value) -> Value {
    let (status, answer, _) = app.request("PATCH", "/v1/partner", key, Some(&body)).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

/// A receiver answering `status`, registered for `a.b`: (receiver, id).
pub async fn endpoint_answering(app: &TestApp, status: u16) -> (Receiver, String) {
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(status));
    let (id, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 8)
        .await;
    (receiver, id)
}

pub fn events_of(receiver: &Receiver, event_type: &str) -> Vec<(Received, Value)> {
    receiver
        .received()
        .into_iter()
        .filter_map(|r| {
            let v: Value = serde_json::from_slice(&r.body).ok()?;
            (v["type"] == event_type).then_some((r, v))
        })
        .collect()
}

pub async fn hears(receiver: &Receiver, event_type: &str) -> (Received, Value) {
    wait_until(WAIT, || async {
        events_of(receiver, event_type).into_iter().next()
    })
    .await
    .unwrap_or_else(|| panic!("no `{event_type}` arrived within {WAIT:?}"))
}

/// Whether one of the request's `webhook-signature` entries is the one
/// `secret` makes over its id, timestamp and body (whenever it was sent).
pub fn signed_with(r: &Received, secret: &Secret) -> bool {
    let header = |name| r.header(name).unwrap_or_default();
    let Ok(timestamp) = header("webhook-timestamp").parse() else {
        return false;
    };
    if header("webhook-id").is_empty() {
        return false;
    }
    let expected = signing::sign(secret, header("webhook-id"), timestamp, &r.body);
    header("webhook-signature")
        .split_ascii_whitespace()
        .any(|entry| entry == expected)
}

pub fn mails_to<'a>(mails: &'a [Mail], to: &str) -> Vec<&'a Mail> {
    mails.iter().filter(|m| m.to == [to]).collect()
}
