//! A mail the SMTP server refuses for now is sent again later, once; a
//! notification URL answering 410 is never disabled.

use std::time::Duration;

use serde_json::json;

use super::{HOUR, Scene, endpoint_answering, events_of, hears, mails_to, with_partner_channel};
use crate::harness::{QUIET, WAIT, receiver::Receiver, receiver::Reply, stays_quiet, wait_until};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_mail_the_server_refuses_for_now_is_sent_again_later_and_only_once(backend: Backend) {
    let email = json!({"notification_email": "ops@acme.example"});
    let (Scene { app, smtp, .. }, _) = with_partner_channel(backend, email).await;
    smtp.refuse_next(2);
    let (_broken, id) = endpoint_answering(&app, 500).await;
    let event = app.publish("a.b", json!({})).await;
    app.attempts_when(&event, &id, 1).await;
    app.advance(Duration::from_secs(HOUR + 1));
    wait_until(WAIT, || async {
        (app.count("SELECT COUNT(*) AS n FROM mail WHERE attempts >= 1 AND last_error IS NOT NULL")
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
    stays_quiet(QUIET, || async {
        let n = smtp.mails().len();
        (n > 2).then(|| format!("mail {n} was sent"))
    })
    .await;
    assert_eq!(smtp.mails().len(), 2, "each mail was delivered once");
    assert_eq!(
        app.count("SELECT COUNT(*) AS n FROM mail WHERE state = 'sent'")
            .await,
        2
    );
}

#[both_backends]
async fn a_notification_url_that_answers_410_is_never_disabled(backend: Backend) {
    let gone = Receiver::start().await;
    gone.set_default(Reply::status(410));
    let url = json!({"notification_url": gone.url()});
    let (scene, set) = with_partner_channel(backend, url).await;
    let Scene {
        app,
        partner_key,
        operator,
        ..
    } = scene;
    let notification_id = set["notification_endpoint_id"]
        .as_str()
        .expect("its endpoint")
        .to_string();
    let (_broken, id) = endpoint_answering(&app, 410).await;
    let event = app.publish("a.b", json!({})).await;
    app.attempts_when(&event, &id, 1).await;
    hears(&operator, "endpoint.disabled").await;
    gone.wait_for(1, WAIT)
        .await
        .expect("the notice was sent to the notification URL");
    let path = format!("/v1/endpoints/{notification_id}");
    stays_quiet(QUIET, || async {
        let (_, shown, _) = app.request("GET", &path, &partner_key, None).await;
        let disabled = events_of(&operator, "endpoint.disabled").len();
        (shown["status"] != "active" || disabled > 1)
            .then(|| format!("the notification endpoint is {shown}; {disabled} disabled notices"))
    })
    .await;
    let (_, shown, _) = app.request("GET", &path, &partner_key, None).await;
    assert_eq!(shown["status"], "active", "{shown}");
    assert_eq!(shown["kind"], "notification");
    assert_eq!(
        events_of(&operator, "endpoint.disabled").len(),
        1,
        "only the partner's endpoint was disabled"
    );
}
