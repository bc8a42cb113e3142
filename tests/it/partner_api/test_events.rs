//! A test event: a signed `webhook.test` event to one endpoint, and to none
//! of the partner's others.

use hookd::domain::clock::Clock as _;
use serde_json::Value;

use super::{Callers, endpoint_at_receiver, expect_hidden_from_strangers, expect_status};
use crate::harness::{WAIT, signatures::verifies};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_test_event_reaches_only_the_endpoint_it_was_sent_to(app: TestApp) {
    let key = app.partner_key().await;
    let (target, id, secret) = endpoint_at_receiver(&app, &key).await;
    let (sibling, sibling_id, _) = endpoint_at_receiver(&app, &key).await;

    let sent = app
        .request("POST", &format!("/v1/endpoints/{id}/test"), &key, None)
        .await;
    let sent = expect_status(&sent, 202);
    let event = sent["event_id"].as_str().expect("an event id").to_string();
    let delivery = sent["delivery_id"]
        .as_str()
        .expect("a delivery id")
        .to_string();

    let got = target
        .wait_for(1, WAIT)
        .await
        .expect("the test event arrives");
    assert_eq!(got[0].header("webhook-id"), Some(event.as_str()));
    assert!(
        verifies(&secret, &got[0], app.clock.now_ms()),
        "the test event is signed"
    );
    let body: Value = serde_json::from_slice(&got[0].body).expect("a JSON envelope");
    assert_eq!(body["type"], "webhook.test");
    assert_eq!(body["partner_id"], app.partner_id.as_str());
    app.wait_for_state(&event, &id, "delivered", WAIT).await;
    let detail = app
        .request("GET", &format!("/v1/deliveries/{delivery}"), &key, None)
        .await;
    let detail = expect_status(&detail, 200);
    assert_eq!(detail["endpoint_id"], id.as_str());
    assert_eq!(detail["event_type"], "webhook.test");
    assert!(
        app.delivery(&event, &sibling_id).await.is_none(),
        "the partner's other endpoint must get no delivery of the test event"
    );
    target.stays_at(1).await;
    sibling.stays_at(0).await;
}

#[both_backends]
async fn no_test_event_goes_to_another_partners_endpoint_or_one_that_does_not_exist(app: TestApp) {
    let callers = Callers::of(&app).await;
    let (target, id, _) = endpoint_at_receiver(&app, &callers.partner).await;
    let path = format!("/v1/endpoints/{id}/test");
    let unknown = "/v1/endpoints/ep_nope/test";
    expect_hidden_from_strangers(&app, &callers, "POST", &path, unknown).await;
    target.stays_at(0).await;
}
