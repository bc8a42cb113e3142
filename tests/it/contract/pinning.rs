//! Endpoints pinned to a version receive every event at that version: as
//! sent, projected from a newer compatible version, or from the producer's
//! rendition; an event with no valid rendering at the pin is `skipped`,
//! never sent in the wrong shape. Each body validates against its own
//! version and is signed over its exact bytes.

use std::{collections::HashMap, time::Duration};

use hookd::{catalog::Catalog, domain::clock::Clock as _, secret::Secret};
use serde_json::{Value, json};

use super::STRICT;
use crate::harness::{Backend, TestApp, receiver::Receiver, spawn_app_with};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

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

on_both_backends!(
    endpoints_pinned_to_1_to_2_and_latest_each_get_their_own_valid_version,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[STRICT]).await;
        let receiver = Receiver::start().await;
        let key = app.partner_key().await;
        let eps = pinned_endpoints(&app, &receiver, &key).await;
        let (_, shown, _) = app
            .request(
                "GET",
                &format!("/v1/endpoints/{}", eps["/v1"].0),
                &key,
                None,
            )
            .await;
        assert_eq!(shown["schema_versions"], json!({"usage.finalized": 1}));

        let (status, body) = app
            .post_events(&json!({"type": "usage.finalized", "schema_version": 2,
                                 "partner_id": app.partner_id, "data": v2_data()}))
            .await;
        assert_eq!(status, 201, "{body}");
        let event = body["event_id"].as_str().expect("an id").to_string();
        receiver.wait_for(3, WAIT).await.expect("three deliveries");

        let v1 = received(&app, &receiver, "/v1", &event, &eps["/v1"].1);
        assert_eq!(v1["schema_version"], 1);
        assert!(
            v1["data"].get("model").is_none(),
            "v1 never names model: {v1}"
        );
        assert_eq!(v1["data"]["final_cost"], "1.274800");
        let v2 = received(&app, &receiver, "/v2", &event, &eps["/v2"].1);
        assert_eq!(
            (v2["schema_version"].clone(), v2["data"]["model"].clone()),
            (json!(2), json!("gpt-x"))
        );
        let latest = received(&app, &receiver, "/latest", &event, &eps["/latest"].1);
        assert_eq!(latest, v2, "latest gets the event as sent");

        let (status, detail, _) = app
            .request(
                "GET",
                &format!("/v1/events/{event}?schema_version=1"),
                &key,
                None,
            )
            .await;
        assert_eq!(status, 200, "{detail}");
        assert_eq!(
            detail["event"], v1,
            "the API shows the rendering the v1 endpoint got"
        );
    }
);

on_both_backends!(
    an_older_event_for_a_newer_pin_uses_the_producers_rendition_or_is_skipped,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[STRICT]).await;
        let receiver = Receiver::start().await;
        let key = app.partner_key().await;
        let eps = pinned_endpoints(&app, &receiver, &key).await;

        // Sent at v1 with no rendition: nothing projects upwards.
        let (status, body) = app
            .post_events(&json!({"type": "usage.finalized", "schema_version": 1,
                                 "partner_id": app.partner_id, "data": v1_data()}))
            .await;
        assert_eq!(status, 201, "{body}");
        let bare = body["event_id"].as_str().expect("an id").to_string();
        app.wait_for_state(&bare, &eps["/v2"].0, "skipped", WAIT)
            .await;
        app.wait_for_state(&bare, &eps["/v1"].0, "delivered", WAIT)
            .await;
        app.wait_for_state(&bare, &eps["/latest"].0, "delivered", WAIT)
            .await;
        let (_, list, _) = app
            .request(
                "GET",
                &format!(
                    "/v1/deliveries?event_id={bare}&endpoint_id={}",
                    eps["/v2"].0
                ),
                &key,
                None,
            )
            .await;
        assert_eq!(
            list["data"][0]["reason"], "no-rendering-for-pinned-version",
            "{list}"
        );
        assert_eq!(list["data"][0]["attempt_count"], 0);
        let skipped = list["data"][0]["id"].as_str().expect("an id");
        let (status, body, _) = app
            .request(
                "POST",
                &format!("/v1/deliveries/{skipped}/replay"),
                &key,
                None,
            )
            .await;
        assert_eq!(
            status, 409,
            "a skipped delivery cannot be replayed into the wrong shape: {body}"
        );

        // With the producer's rendition at v2, the v2 endpoint gets exactly it.
        let (status, body) = app
            .post_events(&json!({"type": "usage.finalized", "schema_version": 1,
                                 "partner_id": app.partner_id, "data": v1_data(),
                                 "renditions": {"2": v2_data()}}))
            .await;
        assert_eq!(status, 201, "{body}");
        let rendered = body["event_id"].as_str().expect("an id").to_string();
        app.wait_for_state(&rendered, &eps["/v2"].0, "delivered", WAIT)
            .await;
        let v2 = received(&app, &receiver, "/v2", &rendered, &eps["/v2"].1);
        assert_eq!(
            (v2["schema_version"].clone(), v2["data"].clone()),
            (json!(2), v2_data())
        );
        assert!(
            !receiver
                .received()
                .iter()
                .any(|r| r.path == "/v2" && r.header("webhook-id") == Some(bare.as_str())),
            "the skipped delivery was never sent"
        );

        // A rendition that fails its version is refused at ingest.
        let (status, body) = app
            .post_events(&json!({"type": "usage.finalized", "schema_version": 1,
                                 "partner_id": app.partner_id, "data": v1_data(),
                                 "renditions": {"2": v1_data()}}))
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["field"], "renditions.2");
    }
);

on_both_backends!(
    a_pin_must_name_a_catalog_type_and_one_of_its_versions,
    |backend: Backend| async move {
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
);
