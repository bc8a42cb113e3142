//! An event's page, in a real browser: its fields (escaped), its data as
//! stored, the envelope each pinned version's endpoints were sent (byte for
//! byte what they received, indented), and its deliveries, each linked;
//! the delivery page and search link their event to it.

use serde_json::{Value, json};

use super::{attributes, click, open, screenshot, signed_in, texts};
use crate::harness::{WAIT, receiver::Receiver, spawn_app_with};

/// What `usage.finalized` carries at version 2.
fn v2_data() -> Value {
    json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800", "usage_id": "usage_9",
           "model": "gpt-x", "input_tokens": 1200, "output_tokens": 340})
}

/// A correlation id that would be markup if it were not escaped.
const MARKUP: &str = "op_<img src=x onerror=alert(1)>";

browser_test!(
    the_event_page_shows_the_payload_as_stored_and_as_each_pinned_version_was_sent,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_CATALOG__STRICT", "true")]).await;
        let operator = app.operator_key().await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let mut eps = Vec::new();
        for (path, pin) in [("/v1", json!(1)), ("/latest", json!("latest"))] {
            let url = format!("{}{path}", receiver.url());
            let (id, _) = app
                .endpoint_for(&app.partner_id, &url, &["usage.*"], 8)
                .await;
            let change = json!({"schema_versions": {"usage.finalized": pin}});
            let (status, body, _) = app
                .request("PATCH", &format!("/v1/endpoints/{id}"), &key, Some(&change))
                .await;
            assert_eq!(status, 200, "{body}");
            eps.push(id);
        }
        let event = json!({"type": "usage.finalized", "partner_id": app.partner_id,
            "schema_version": 2, "data": v2_data(), "correlation_id": MARKUP});
        let (status, body) = app.post_events(&event).await;
        assert_eq!(status, 201, "{body}");
        let ev = body["event_id"].as_str().expect("an id").to_string();
        let got = receiver
            .wait_for(2, WAIT)
            .await
            .expect("both endpoints receive it");
        let body_at = |path: &str| -> Value {
            let r = got.iter().find(|r| r.path == path).expect("a request");
            serde_json::from_slice(&r.body).expect("JSON")
        };

        let (_browser, mut page) = signed_in(&app, &operator).await;
        open(&mut page, &app, &format!("/dashboard/events/{ev}")).await;
        assert_eq!(texts(&mut page, "#event-type").await, ["usage.finalized"]);
        let facts = texts(&mut page, "#facts").await;
        assert!(facts[0].contains(MARKUP), "shown as text: {facts:?}");
        let images = page.eval("document.querySelectorAll('img').length").await;
        assert_eq!(images, json!(0), "nothing from the event becomes markup");
        let payload: Value =
            serde_json::from_str(&texts(&mut page, "#payload").await[0]).expect("JSON");
        assert_eq!(payload, v2_data(), "the data as stored");

        let versions = attributes(&mut page, "section.sent", "data-version").await;
        assert_eq!(versions, ["1", "2"], "one envelope per version sent");
        for (version, path) in [("1", "/v1"), ("2", "/latest")] {
            let shown = texts(
                &mut page,
                &format!("section.sent[data-version='{version}'] pre"),
            )
            .await;
            let shown: Value = serde_json::from_str(&shown[0]).expect("JSON");
            assert_eq!(
                shown,
                body_at(path),
                "version {version} as {path} received it"
            );
        }
        let v1 = texts(&mut page, "section.sent[data-version='1'] pre").await;
        let sent_v1 = &got.iter().find(|r| r.path == "/v1").expect("v1").body;
        let compact: String = v1[0].lines().map(str::trim).collect::<Vec<_>>().join("");
        assert_eq!(
            compact.replace("\": ", "\":"),
            String::from_utf8_lossy(sent_v1),
            "the bytes sent, only indented"
        );

        let rows = attributes(&mut page, "#deliveries tr[data-delivery]", "data-delivery").await;
        assert_eq!(rows.len(), 2, "{rows:?}");
        let mut sent_at = texts(&mut page, "#deliveries .version").await;
        sent_at.sort();
        assert_eq!(sent_at, ["1", "2"]);
        screenshot(&mut page, backend, "event").await;

        let to_delivery = format!("#deliveries tr[data-delivery={}] a", json!(rows[0]));
        click(&mut page, &to_delivery).await;
        assert_eq!(
            page.path().await,
            format!("/dashboard/deliveries/{}", rows[0])
        );
        click(&mut page, "#facts a[href^='/dashboard/events/']").await;
        assert_eq!(
            page.path().await,
            format!("/dashboard/events/{ev}"),
            "the delivery links its event"
        );
        open(&mut page, &app, &format!("/dashboard/search?event_id={ev}")).await;
        let links = attributes(
            &mut page,
            "#deliveries a[href^='/dashboard/events/']",
            "href",
        )
        .await;
        assert_eq!(
            links,
            [
                format!("/dashboard/events/{ev}"),
                format!("/dashboard/events/{ev}")
            ]
        );
    }
);
