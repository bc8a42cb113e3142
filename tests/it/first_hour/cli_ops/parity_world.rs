//! The world the parity table's rows run on: a `serve` child with a
//! partner, two endpoints on a receiver, one event delivered to the first,
//! a partner key and a manual incident made through the API.

use std::process::Output;

use serde_json::{Value, json};

use super::bed::Bed;
use crate::harness::{SLOW, wait_until};

/// What the rows run on.
pub struct World {
    pub bed: Bed,
    /// The first endpoint (at `/a`), active throughout.
    pub ep: String,
    /// The second endpoint (at `/b`): disabled, then deleted.
    pub ep_b: String,
    /// An event delivered to `ep`, and its delivery.
    pub event: String,
    pub delivery: String,
    /// A partner key made through the API, for `key revoke`.
    pub key_id: String,
    /// A manual incident opened through the API, for `incident resolve`.
    pub incident: String,
    /// An hour ago, RFC 3339: inside the replay window.
    pub since: String,
    pub dir: tempfile::TempDir,
}

impl World {
    pub async fn new(bed: Bed) -> World {
        let ep = bed.store.endpoint_ids[0].clone();
        let ep_b = bed.store.endpoint_ids.get(1).cloned().unwrap_or_default();
        let event = bed.publish().await;
        bed.receives("/a", &event, 0).await;
        let list = [
            "delivery",
            "list",
            "--endpoint",
            &ep,
            "--state",
            "delivered",
        ];
        let delivery = wait_until(SLOW, || async {
            let page = bed.cli_json(&list).await;
            page["data"][0]["id"].as_str().map(str::to_string)
        })
        .await
        .expect("the delivery is listed as delivered");
        let path = format!("/v1/admin/partners/{}/keys", bed.store.partner_id);
        let (status, key) = bed
            .api("POST", &path, &bed.store.operator_key, Some(json!({})))
            .await;
        assert_eq!(status, 201, "a partner key: {key}");
        let body = json!({"partner_id": bed.store.partner_id, "message": "opened by the API"});
        let (status, incident) = bed
            .api(
                "POST",
                "/v1/admin/incidents",
                &bed.store.operator_key,
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "an incident: {incident}");
        World {
            incident: incident["id"].as_str().expect("an incident id").to_string(),
            key_id: key["id"].as_str().expect("a key id").to_string(),
            since: (chrono::Utc::now() - chrono::Duration::hours(1))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            dir: tempfile::tempdir().expect("a folder for files"),
            bed,
            ep,
            ep_b,
            event,
            delivery,
        }
    }

    /// A file with one new event for the bed's partner; its path.
    pub fn event_file(&self, name: &str) -> String {
        let (_, batch) = crate::harness::process::event_batch(&self.bed.store.partner_id, 1);
        let events: Value = serde_json::from_str(&batch).expect("JSON");
        let path = self.dir.path().join(format!("{name}.json"));
        std::fs::write(&path, events[0].to_string()).expect("the event file");
        path.display().to_string()
    }

    /// `serve`'s row: the bed's own `hookd serve` answering `/healthz`,
    /// as an `Output` with its status.
    pub async fn serving(&self) -> Output {
        let (status, _) = self.bed.api("GET", "/healthz", "", None).await;
        let code = if status == 200 { 0 } else { 1 };
        Output {
            status: std::os::unix::process::ExitStatusExt::from_raw(code << 8),
            stdout: format!("healthz {status}").into_bytes(),
            stderr: Vec::new(),
        }
    }

    pub fn partner(&self) -> String {
        self.bed.store.partner_id.clone()
    }

    pub fn receiver(&self, path: &str) -> String {
        format!("{}{path}", self.bed.receiver.url())
    }
}
