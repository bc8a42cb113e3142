//! A partner's one endpoint fails for an hour, then recovers: the partner
//! hears it at its notification URL (signed with its own secret) and by
//! mail, the operator at its URL (naming the partner) and by mail, each
//! once per transition.

use std::time::Duration;

use hookd::secret::Secret;
use serde_json::json;

use super::{
    HOUR, OPERATOR_SECRET, Scene, endpoint_answering, events_of, hears, mails_to, signed_with,
    with_partner_channel,
};
use crate::harness::{
    Backend, QUIET, WAIT,
    receiver::{Receiver, Reply},
    stays_quiet,
};
use hookd_test_macros::both_backends;

/// Every channel set, and the partner's one endpoint answering 503 for
/// an hour and a second: failing.
struct Failing {
    scene: Scene,
    /// At the partner's notification URL.
    url_receiver: Receiver,
    /// That URL's secret.
    secret: Secret,
    broken: Receiver,
    id: String,
}

async fn failing_for_an_hour(backend: Backend) -> Failing {
    let url_receiver = Receiver::start().await;
    let (scene, set) = with_partner_channel(
        backend,
        json!({"notification_email": "ops@acme.example", "notification_url": url_receiver.url()}),
    )
    .await;
    let app = &scene.app;
    let secret = Secret::parse(
        set["notification_secret"]
            .as_str()
            .expect("the new URL's secret"),
    )
    .expect("a whsec_ secret");
    let (broken, id) = endpoint_answering(app, 503).await;
    let event = app.publish("a.b", json!({})).await;
    app.attempts_when(&event, &id, 1).await;
    app.advance(Duration::from_secs(HOUR - 1));
    app.attempts_when(&event, &id, 2).await;
    assert!(
        events_of(&url_receiver, "endpoint.failing").is_empty(),
        "not failing yet, an hour less a second in"
    );
    app.advance(Duration::from_secs(2));
    Failing {
        scene,
        url_receiver,
        secret,
        broken,
        id,
    }
}

#[both_backends]
async fn a_failing_endpoint_is_announced_at_the_partners_url_signed_with_its_own_secret(
    backend: Backend,
) {
    let f = failing_for_an_hour(backend).await;
    let (request, notice) = hears(&f.url_receiver, "endpoint.failing").await;
    assert!(
        signed_with(&request, &f.secret),
        "signed with the notification secret"
    );
    assert_eq!(notice["data"]["endpoint_id"], f.id.as_str());
    assert_eq!(notice["data"]["last_error"]["category"], "http_status");
    assert_eq!(notice["data"]["last_error"]["status_code"], 503);
    assert!(
        notice["data"].get("partner_id").is_none(),
        "the partner's own copy does not name it"
    );
}

#[both_backends]
async fn a_failing_endpoint_is_announced_at_the_operators_url_signed_and_naming_the_partner(
    backend: Backend,
) {
    let f = failing_for_an_hour(backend).await;
    let app = &f.scene.app;
    let (request, copy) = hears(&f.scene.operator, "endpoint.failing").await;
    let operator_secret = Secret::parse(OPERATOR_SECRET).expect("the operator secret");
    assert!(signed_with(&request, &operator_secret));
    assert_eq!(copy["data"]["partner_id"], app.partner_id.as_str());
    assert_eq!(copy["data"]["endpoint_id"], f.id.as_str());
}

#[both_backends]
async fn a_failing_endpoint_is_announced_by_one_mail_to_the_partner_and_one_to_the_operator(
    backend: Backend,
) {
    let f = failing_for_an_hour(backend).await;
    let id = &f.id;
    let mails = f.scene.smtp.wait_for(2, WAIT).await;
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
        f.broken.url().as_str(),
    ] {
        assert!(body.contains(part), "the mail lacks {part:?}:\n{body}");
    }
    assert_eq!(
        mails_to(&mails, "oncall@ops.example").len(),
        1,
        "one mail to the operator"
    );
}

#[both_backends]
async fn every_channel_hears_failing_and_recovered_once_each(backend: Backend) {
    let f = failing_for_an_hour(backend).await;
    let Scene {
        app,
        smtp,
        operator,
        ..
    } = &f.scene;
    hears(&f.url_receiver, "endpoint.failing").await;
    smtp.wait_for(2, WAIT).await;
    // It recovers: each channel hears that once too.
    f.broken.set_default(Reply::status(200));
    app.advance(Duration::from_secs(300));
    hears(&f.url_receiver, "endpoint.recovered").await;
    hears(operator, "endpoint.recovered").await;
    let mails = smtp.wait_for(4, WAIT).await;
    app.advance(Duration::from_secs(HOUR));
    let channels = [
        ("notification URL", &f.url_receiver),
        ("operator URL", operator),
    ];
    stays_quiet(QUIET, || async {
        let heard: Vec<String> = channels
            .iter()
            .flat_map(|(channel, receiver)| {
                ["endpoint.failing", "endpoint.recovered"]
                    .into_iter()
                    .filter(|t| events_of(receiver, t).len() > 1)
                    .map(move |t| format!("the {channel} heard `{t}` again"))
            })
            .collect();
        let more_mail = (smtp.mails().len() > 4).then(|| "a fifth mail was sent".to_string());
        heard.into_iter().chain(more_mail).next()
    })
    .await;
    for (channel, receiver) in channels {
        for t in ["endpoint.failing", "endpoint.recovered"] {
            assert_eq!(
                events_of(receiver, t).len(),
                1,
                "the {channel} hears `{t}` once"
            );
        }
    }
    assert_eq!(smtp.mails().len(), 4, "two mails per transition: {mails:?}");
    let id = &f.id;
    assert!(
        mails_to(&smtp.mails(), "ops@acme.example")
            .iter()
            .any(|m| m.header("Subject") == Some(format!("[hookd] Endpoint {id} recovered"))),
    );
}
