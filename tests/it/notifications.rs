//! Endpoint notices reach a partner with one endpoint: by mail through a
//! real SMTP listener, at its notification URL (signed with its own
//! secret), and the operator's URL and mail get every partner's, each once
//! per transition. Deliveries held by a disabled endpoint are `paused`.

use std::time::Duration;

use hookd::{domain::clock::Clock as _, secret::Secret, signing};
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    receiver::{Received, Receiver, Reply},
    smtp::{Mail, SmtpListener},
    spawn_app_with, wait_until,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);
const HOUR: u64 = 3600;
const OPERATOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// hookd mailing through `smtp`, with the operator's URL and mail set, the
/// real health thresholds, and a sweep every 50 ms.
struct Scene {
    app: TestApp,
    smtp: SmtpListener,
    operator: Receiver,
    partner_key: String,
}

async fn hookd_with_every_channel(backend: Backend) -> Scene {
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

/// Sets the partner's channel; returns the answer's body.
async fn set_channel(app: &TestApp, key: &str, body: Value) -> Value {
    let (status, answer, _) = app.request("PATCH", "/v1/partner", key, Some(&body)).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

/// A receiver answering `status`, registered for `a.b`: (receiver, id).
async fn endpoint_answering(app: &TestApp, status: u16) -> (Receiver, String) {
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(status));
    let (id, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 8)
        .await;
    (receiver, id)
}

fn events_of(receiver: &Receiver, event_type: &str) -> Vec<(Received, Value)> {
    receiver
        .received()
        .into_iter()
        .filter_map(|r| {
            let v: Value = serde_json::from_slice(&r.body).ok()?;
            (v["type"] == event_type).then_some((r, v))
        })
        .collect()
}

async fn hears(receiver: &Receiver, event_type: &str) -> (Received, Value) {
    wait_until(WAIT, || async {
        events_of(receiver, event_type).into_iter().next()
    })
    .await
    .unwrap_or_else(|| panic!("no `{event_type}` arrived within {WAIT:?}"))
}

fn signed_with(r: &Received, secret: &Secret, now_ms: i64) -> bool {
    signing::verify(
        secret,
        r.header("webhook-id").unwrap_or(""),
        r.header("webhook-timestamp").unwrap_or(""),
        r.header("webhook-signature").unwrap_or(""),
        &r.body,
        now_ms,
        i64::MAX / 2,
    )
    .is_ok()
}

fn mails_to<'a>(mails: &'a [Mail], to: &str) -> Vec<&'a Mail> {
    mails.iter().filter(|m| m.to == [to]).collect()
}

async fn attempts_made(app: &TestApp, event: &str, endpoint: &str, n: usize) {
    wait_until(WAIT, || async {
        (app.attempts(event, endpoint).await.len() >= n).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("{n} attempts were not recorded"));
}

async fn settle() {
    actix_rt::time::sleep(Duration::from_millis(500)).await;
}

on_both_backends!(
    a_partner_with_one_endpoint_hears_it_failing_and_recovering_once_on_every_channel,
    |backend: Backend| async move {
        let Scene {
            app,
            smtp,
            operator,
            partner_key,
        } = hookd_with_every_channel(backend).await;
        let url_receiver = Receiver::start().await;
        let set = set_channel(
            &app,
            &partner_key,
            json!({"notification_email": "ops@acme.example", "notification_url": url_receiver.url()}),
        )
        .await;
        let secret = Secret::parse(
            set["notification_secret"]
                .as_str()
                .expect("the new URL's secret"),
        )
        .expect("a whsec_ secret");
        let (broken, id) = endpoint_answering(&app, 503).await;

        let event = app.publish("a.b", json!({})).await;
        attempts_made(&app, &event, &id, 1).await;
        app.advance(Duration::from_secs(HOUR - 1));
        attempts_made(&app, &event, &id, 2).await;
        app.advance(Duration::from_secs(2));

        // The partner's notification URL, signed with its own secret.
        let (request, notice) = hears(&url_receiver, "endpoint.failing").await;
        assert!(
            signed_with(&request, &secret, app.clock.now_ms()),
            "signed with the notification secret"
        );
        assert_eq!(notice["data"]["endpoint_id"], id.as_str());
        assert_eq!(notice["data"]["last_error"]["category"], "http_status");
        assert_eq!(notice["data"]["last_error"]["status_code"], 503);
        assert!(
            notice["data"].get("partner_id").is_none(),
            "the partner's own copy does not name it"
        );
        // The operator's URL, signed with the configured secret, naming the partner.
        let (request, copy) = hears(&operator, "endpoint.failing").await;
        let operator_secret = Secret::parse(OPERATOR_SECRET).expect("the operator secret");
        assert!(signed_with(&request, &operator_secret, app.clock.now_ms()));
        assert_eq!(copy["data"]["partner_id"], app.partner_id.as_str());
        assert_eq!(copy["data"]["endpoint_id"], id.as_str());
        // Both mails.
        let mails = smtp.wait_for(2, WAIT).await;
        let to_partner = mails_to(&mails, "ops@acme.example");
        assert_eq!(to_partner.len(), 1, "one mail to the partner: {mails:?}");
        let mail = to_partner[0];
        assert_eq!(mail.from, "hookd@ops.example");
        assert_eq!(
            mail.header("Subject").as_deref(),
            Some(format!("[hookd] Endpoint {id} is failing").as_str())
        );
        let body = mail.body();
        for part in [
            "Failing since:",
            "Last error:     http_status (HTTP 503)",
            "What to do:",
            broken.url().as_str(),
        ] {
            assert!(body.contains(part), "the mail lacks {part:?}:\n{body}");
        }
        assert_eq!(
            mails_to(&mails, "oncall@ops.example").len(),
            1,
            "one mail to the operator"
        );

        // It recovers: each channel hears that once too.
        broken.set_default(Reply::status(200));
        app.advance(Duration::from_secs(300));
        hears(&url_receiver, "endpoint.recovered").await;
        hears(&operator, "endpoint.recovered").await;
        let mails = smtp.wait_for(4, WAIT).await;
        settle().await;
        app.advance(Duration::from_secs(HOUR));
        settle().await;
        for (channel, receiver) in [
            ("notification URL", &url_receiver),
            ("operator URL", &operator),
        ] {
            for t in ["endpoint.failing", "endpoint.recovered"] {
                assert_eq!(
                    events_of(receiver, t).len(),
                    1,
                    "the {channel} hears `{t}` once"
                );
            }
        }
        assert_eq!(smtp.mails().len(), 4, "two mails per transition: {mails:?}");
        assert!(
            mails_to(&smtp.mails(), "ops@acme.example")
                .iter()
                .any(|m| m.header("Subject") == Some(format!("[hookd] Endpoint {id} recovered"))),
        );
    }
);

on_both_backends!(
    a_mail_the_server_refuses_for_now_is_sent_again_later_and_only_once,
    |backend: Backend| async move {
        let Scene {
            app,
            smtp,
            partner_key,
            ..
        } = hookd_with_every_channel(backend).await;
        set_channel(
            &app,
            &partner_key,
            json!({"notification_email": "ops@acme.example"}),
        )
        .await;
        smtp.refuse_next(2);
        let (_broken, id) = endpoint_answering(&app, 500).await;
        let event = app.publish("a.b", json!({})).await;
        attempts_made(&app, &event, &id, 1).await;
        app.advance(Duration::from_secs(HOUR + 1));
        wait_until(WAIT, || async {
            (app.count(
                "SELECT COUNT(*) AS n FROM mail WHERE attempts >= 1 AND last_error IS NOT NULL",
            )
            .await
                >= 2)
                .then_some(())
        })
        .await
        .expect("both mails were tried and refused");
        assert!(smtp.mails().is_empty(), "nothing was accepted yet");
        // The retry is 30 s later.
        app.advance(Duration::from_secs(31));
        let mails = smtp.wait_for(2, WAIT).await;
        assert_eq!(mails_to(&mails, "ops@acme.example").len(), 1);
        assert_eq!(mails_to(&mails, "oncall@ops.example").len(), 1);
        app.advance(Duration::from_secs(3600));
        settle().await;
        assert_eq!(smtp.mails().len(), 2, "each mail was delivered once");
        assert_eq!(
            app.count("SELECT COUNT(*) AS n FROM mail WHERE state = 'sent'")
                .await,
            2
        );
    }
);

on_both_backends!(
    a_notification_url_that_answers_410_is_never_disabled,
    |backend: Backend| async move {
        let Scene {
            app,
            partner_key,
            operator,
            ..
        } = hookd_with_every_channel(backend).await;
        let gone = Receiver::start().await;
        gone.set_default(Reply::status(410));
        let set = set_channel(&app, &partner_key, json!({"notification_url": gone.url()})).await;
        let notification_id = set["notification_endpoint_id"]
            .as_str()
            .expect("its endpoint")
            .to_string();
        let (_broken, id) = endpoint_answering(&app, 410).await;
        let event = app.publish("a.b", json!({})).await;
        attempts_made(&app, &event, &id, 1).await;
        hears(&operator, "endpoint.disabled").await;
        gone.wait_for(1, WAIT)
            .await
            .expect("the notice was sent to the notification URL");
        settle().await;
        let (_, shown, _) = app
            .request(
                "GET",
                &format!("/v1/endpoints/{notification_id}"),
                &partner_key,
                None,
            )
            .await;
        assert_eq!(shown["status"], "active", "{shown}");
        assert_eq!(shown["kind"], "notification");
        assert_eq!(
            events_of(&operator, "endpoint.disabled").len(),
            1,
            "only the partner's endpoint was disabled"
        );
    }
);

on_both_backends!(
    the_notification_channel_is_read_back_checked_and_removed,
    |backend: Backend| async move {
        let Scene {
            app, partner_key, ..
        } = hookd_with_every_channel(backend).await;
        // Stored as checked: normalised, with its path.
        let url = format!("{}/", Receiver::start().await.url());
        let first = set_channel(&app, &partner_key, json!({"notification_url": url})).await;
        assert!(
            first["notification_secret"]
                .as_str()
                .is_some_and(|s| s.starts_with("whsec_"))
        );
        let again = set_channel(
            &app,
            &partner_key,
            json!({"notification_email": "a@b.example"}),
        )
        .await;
        assert!(
            again.get("notification_secret").is_none(),
            "the secret is shown once: {again}"
        );
        let (_, read, _) = app.request("GET", "/v1/partner", &partner_key, None).await;
        assert_eq!(read["notification_email"], "a@b.example");
        assert_eq!(read["notification_url"], url.as_str());
        assert_eq!(read["id"], app.partner_id.as_str());
        let endpoint_id = read["notification_endpoint_id"]
            .as_str()
            .unwrap()
            .to_string();

        let (patch_status, patch, _) = app
            .request(
                "PATCH",
                &format!("/v1/endpoints/{endpoint_id}"),
                &partner_key,
                Some(&json!({"description": "x"})),
            )
            .await;
        assert_eq!(patch_status, 409, "{patch}");
        let (bad_email_status, bad_email, _) = app
            .request(
                "PATCH",
                "/v1/partner",
                &partner_key,
                Some(&json!({"notification_email": "not an address"})),
            )
            .await;
        assert_eq!(bad_email_status, 422, "{bad_email}");
        assert_eq!(bad_email["field"], "notification_email");
        let (bad_url_status, bad_url, _) = app
            .request(
                "PATCH",
                "/v1/partner",
                &partner_key,
                Some(&json!({"notification_url": "http://10.0.0.1/x"})),
            )
            .await;
        assert_eq!(bad_url_status, 422, "{bad_url}");

        let removed = set_channel(
            &app,
            &partner_key,
            json!({"notification_email": null, "notification_url": null}),
        )
        .await;
        assert!(
            removed["notification_email"].is_null() && removed["notification_url"].is_null(),
            "{removed}"
        );
        assert_eq!(
            app.count(&format!(
                "SELECT COUNT(*) AS n FROM endpoint WHERE id = '{endpoint_id}'"
            ))
            .await,
            0
        );

        // An operator sets it for a partner; a partner key may not.
        let operator = app.operator_key().await;
        let path = format!("/v1/admin/partners/{}", app.partner_id);
        let (status, by_operator, _) = app
            .request(
                "PATCH",
                &path,
                &operator,
                Some(&json!({"notification_email": "x@y.example"})),
            )
            .await;
        assert_eq!(status, 200, "{by_operator}");
        assert_eq!(
            app.request("GET", &path, &operator, None).await.1["notification_email"],
            "x@y.example"
        );
        assert_eq!(
            app.request("PATCH", &path, &partner_key, Some(&json!({})))
                .await
                .0,
            403
        );
        let (_, listed, _) = app
            .request("GET", "/v1/admin/partners", &operator, None)
            .await;
        assert!(
            !listed.to_string().contains("hookd:operator"),
            "the operator's own partner is not a tenant: {listed}"
        );
    }
);
