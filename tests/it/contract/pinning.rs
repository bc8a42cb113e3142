//! Endpoints pinned to a version receive every event at that version: as
//! sent, projected from a newer compatible version, or from the producer's
//! rendition; an event with no valid rendering at the pin is `skipped`,
//! never sent in the wrong shape. Each body validates against its own
//! version and is signed over its exact bytes.

use std::collections::HashMap;

use hookd::{catalog::Catalog, domain::clock::Clock as _, secret::Secret};
use serde_json::{Value, json};

use super::STRICT;
use crate::harness::{Backend, TestApp, WAIT, receiver::Receiver, spawn_app_with};
use hookd_test_macros::both_backends;

fn v1_data() -> Value {
    json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800", "usage_id": "usage_9"})
}

fn v2_data() -> Value {
    json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800", "usage_id": "usage_9",
           "model": "gpt-x", "input_tokens": 1200, "output_tokens": 340})
}

/// Three endpoints of the test partner on one receiver: pinned to 1, to 2,
/// and to `latest` (no pin), by path.
async fn pinned_endpoints(
    app: &TestApp,
    receiver: &Receiver,
    key: &str,
) -> HashMap<&'static str, (String, Secret)> {
    let mut out = HashMap::new();
    for (path, pin) in [
        ("/v1", json!(1)),
        ("/v2", json!(2)),
        ("/latest", json!("latest")),
    ] {
        let (id, secret) = app
            .endpoint_for(
                &app.partner_id,
                &format!("{}{path}", receiver.url()),
                &["usage.*"],
                8,
            )
            .await;
        let (status, body, _) = app
            .request(
                "PATCH",
                &format!("/v1/endpoints/{id}"),
                key,
                Some(&json!({"schema_versions": {"usage.finalized": pin}})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        out.insert(path, (id, secret));
    }
    out
}

/// The body `path` received for `event`, checked: signed with `secret`
/// over its exact bytes, and valid at the version its envelope names.
fn received(app: &TestApp, receiver: &Receiver, path: &str, event: &str, secret: &Secret) -> Value {
    let got = receiver.received();
    let r = got
        .iter()
        .find(|r| r.path == path && r.header("webhook-id") == Some(event))
        .unwrap_or_else(|| panic!("{path} did not receive {event}"));
    hookd::signing::verify(
        secret,
        event,
        r.header("webhook-timestamp").expect("a timestamp"),
        r.header("webhook-signature").expect("a signature"),
        &r.body,
        app.clock.now_ms() / 1000,
        300,
    )
    .expect("signed over the exact bytes sent");
    let envelope: Value = serde_json::from_slice(&r.body).expect("a JSON envelope");
    let version = envelope["schema_version"]
        .as_u64()
        .expect("an integer version") as u32;
    Catalog::bundled()
        .check("usage.finalized", version, &envelope["data"])
        .unwrap_or_else(|e| panic!("{path} got data invalid at its version {version}: {e:?}"));
    envelope
}

/// The three pinned endpoints (see `pinned_endpoints`) on one receiver,
/// with the partner key that pinned them.
struct Pinned {
    app: TestApp,
    receiver: Receiver,
    key: String,
    eps: HashMap<&'static str, (String, Secret)>,
}

impl Pinned {
    async fn set_up(backend: Backend) -> Pinned {
        let app = spawn_app_with(backend, &[STRICT]).await;
        let receiver = Receiver::start().await;
        let key = app.partner_key().await;
        let eps = pinned_endpoints(&app, &receiver, &key).await;
        Pinned {
            app,
            receiver,
            key,
            eps,
        }
    }

    /// Publishes a `usage.finalized` event of the test partner with the
    /// envelope fields in `fields` (`schema_version`, `data`, …), which
    /// must be accepted; returns its id.
    async fn publish(&self, fields: Value) -> String {
        let mut envelope = json!({"type": "usage.finalized", "partner_id": self.app.partner_id});
        for (name, value) in fields.as_object().expect("envelope fields") {
            envelope[name] = value.clone();
        }
        let (status, body) = self.app.post_events(&envelope).await;
        assert_eq!(status, 201, "{body}");
        body["event_id"].as_str().expect("an id").to_string()
    }

    /// The checked body the endpoint at `path` received for `event`.
    fn received(&self, path: &str, event: &str) -> Value {
        received(&self.app, &self.receiver, path, event, &self.eps[path].1)
    }
}

/// The pinned endpoints, and a `usage.finalized` event published at
/// version 2 that reached all three.
struct PinnedV2 {
    pinned: Pinned,
    event: String,
}

impl PinnedV2 {
    async fn published(backend: Backend) -> PinnedV2 {
        let pinned = Pinned::set_up(backend).await;
        let event = pinned
            .publish(json!({"schema_version": 2, "data": v2_data()}))
            .await;
        pinned
            .receiver
            .wait_for(3, WAIT)
            .await
            .expect("three deliveries");
        PinnedV2 { pinned, event }
    }

    /// The checked body the endpoint at `path` received.
    fn at(&self, path: &str) -> Value {
        self.pinned.received(path, &self.event)
    }
}

#[both_backends]
async fn an_endpoints_pins_are_shown_as_set(backend: Backend) {
    let Pinned { app, key, eps, .. } = Pinned::set_up(backend).await;
    let path = format!("/v1/endpoints/{}", eps["/v1"].0);
    let (_, shown, _) = app.request("GET", &path, &key, None).await;
    assert_eq!(shown["schema_versions"], json!({"usage.finalized": 1}));
}

#[both_backends]
async fn an_endpoint_pinned_to_1_gets_a_v2_event_projected_to_version_1(backend: Backend) {
    let pinned = PinnedV2::published(backend).await;
    let v1 = pinned.at("/v1");
    assert_eq!(v1["schema_version"], 1);
    assert!(
        v1["data"].get("model").is_none(),
        "v1 never names model: {v1}"
    );
    assert_eq!(v1["data"]["final_cost"], "1.274800");
}

#[both_backends]
async fn an_endpoint_pinned_to_2_gets_a_v2_event_at_version_2(backend: Backend) {
    let pinned = PinnedV2::published(backend).await;
    let v2 = pinned.at("/v2");
    assert_eq!(
        (v2["schema_version"].clone(), v2["data"]["model"].clone()),
        (json!(2), json!("gpt-x"))
    );
}

#[both_backends]
async fn an_endpoint_on_latest_gets_the_event_as_sent(backend: Backend) {
    let pinned = PinnedV2::published(backend).await;
    let latest = pinned.at("/latest");
    assert_eq!(latest["schema_version"], 2, "{latest}");
    assert_eq!(latest, pinned.at("/v2"), "latest gets the event as sent");
}

#[both_backends]
async fn the_api_shows_an_event_at_a_version_as_the_endpoint_pinned_to_it_got_it(backend: Backend) {
    let pinned = PinnedV2::published(backend).await;
    let path = format!("/v1/events/{}?schema_version=1", pinned.event);
    let (app, key) = (&pinned.pinned.app, &pinned.pinned.key);
    let (status, detail, _) = app.request("GET", &path, key, None).await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(
        detail["event"],
        pinned.at("/v1"),
        "the API shows the rendering the v1 endpoint got"
    );
}

/// The three pinned endpoints, and a `usage.finalized` event sent at
/// version 1 without a rendition, delivered to `/v1` and `/latest` and
/// `skipped` for `/v2`: (the endpoints, the event, its `/v2` delivery as
/// the partner lists it).
async fn v1_without_a_rendition(backend: Backend) -> (Pinned, String, Value) {
    let pinned = Pinned::set_up(backend).await;
    let bare = pinned
        .publish(json!({"schema_version": 1, "data": v1_data()}))
        .await;
    for path in ["/v1", "/latest"] {
        pinned
            .app
            .wait_for_state(&bare, &pinned.eps[path].0, "delivered", WAIT)
            .await;
    }
    let v2 = &pinned.eps["/v2"].0;
    pinned.app.wait_for_state(&bare, v2, "skipped", WAIT).await;
    let skipped = listed_delivery(&pinned.app, &pinned.key, &bare, v2).await;
    (pinned, bare, skipped)
}

/// The delivery of `event` to `endpoint` as the partner lists it.
async fn listed_delivery(app: &TestApp, key: &str, event: &str, endpoint: &str) -> Value {
    let path = format!("/v1/deliveries?event_id={event}&endpoint_id={endpoint}");
    let (_, list, _) = app.request("GET", &path, key, None).await;
    list["data"][0].clone()
}

#[both_backends]
async fn an_older_event_without_a_rendition_is_skipped_for_a_newer_pin_never_sent_and_says_why(
    backend: Backend,
) {
    let (pinned, bare, skipped) = v1_without_a_rendition(backend).await;
    let receiver = &pinned.receiver;
    assert_eq!(
        skipped["reason"], "no-rendering-for-pinned-version",
        "{skipped}"
    );
    assert_eq!(skipped["attempt_count"], 0);
    receiver.stays_at(2).await;
    assert!(
        !receiver
            .received()
            .iter()
            .any(|r| r.path == "/v2" && r.header("webhook-id") == Some(bare.as_str())),
        "the skipped delivery was never sent"
    );
}

#[both_backends]
async fn a_skipped_delivery_cannot_be_replayed_into_the_wrong_shape(backend: Backend) {
    let (pinned, _, skipped) = v1_without_a_rendition(backend).await;
    let id = skipped["id"].as_str().expect("an id");
    let path = format!("/v1/deliveries/{id}/replay");
    let (status, body, _) = pinned.app.request("POST", &path, &pinned.key, None).await;
    assert_eq!(
        status, 409,
        "a skipped delivery cannot be replayed into the wrong shape: {body}"
    );
}

#[both_backends]
async fn an_older_event_reaches_a_newer_pin_as_the_producers_rendition(backend: Backend) {
    let pinned = Pinned::set_up(backend).await;
    let rendered = pinned
        .publish(json!({"schema_version": 1, "data": v1_data(),
                            "renditions": {"2": v2_data()}}))
        .await;
    pinned
        .app
        .wait_for_state(&rendered, &pinned.eps["/v2"].0, "delivered", WAIT)
        .await;
    let v2 = pinned.received("/v2", &rendered);
    assert_eq!(
        (v2["schema_version"].clone(), v2["data"].clone()),
        (json!(2), v2_data())
    );
}

#[both_backends]
async fn a_rendition_that_fails_its_version_is_refused_at_ingest(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let (status, body) = app
        .post_events(&json!({"type": "usage.finalized", "schema_version": 1,
                                 "partner_id": app.partner_id, "data": v1_data(),
                                 "renditions": {"2": v1_data()}}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["field"], "renditions.2");
    let stored = app.count("SELECT COUNT(*) AS n FROM outbox_event").await;
    assert_eq!(stored, 0, "nothing of a refused event is stored");
}

#[both_backends]
async fn a_pin_must_name_a_catalog_type_and_one_of_its_versions(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let key = app.partner_key().await;
    let (id, _) = app.endpoint("http://127.0.0.1:9/hooks").await;
    for (pins, field) in [
        (
            json!({"usage.finalized": 3}),
            "schema_versions.usage.finalized",
        ),
        (json!({"made.up": 1}), "schema_versions.made.up"),
    ] {
        let (status, body, _) = app
            .request(
                "PATCH",
                &format!("/v1/endpoints/{id}"),
                &key,
                Some(&json!({"schema_versions": pins})),
            )
            .await;
        assert_eq!(
            (status, body["field"].as_str()),
            (422, Some(field)),
            "{body}"
        );
    }
}
