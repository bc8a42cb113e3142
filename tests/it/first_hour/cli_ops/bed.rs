//! The bed the CLI tests run on: a `hookd serve` child on a fresh database
//! with a partner, its keys and endpoints on a test receiver, the CLI on the
//! same database, and the checks every test makes of a command's end.

use std::{process::Output, time::Duration};

use serde_json::Value;

use crate::{
    cli::json_of,
    harness::{
        self, Backend, SLOW, call_raw,
        process::{Hookd, Prepared, free_port, prepare_endpoints},
        receiver::Receiver,
        wait_until,
    },
};

/// A `hookd serve` child on a fresh database with a partner, its keys and
/// one endpoint per path on a test receiver; and the CLI on the same database.
pub struct Bed {
    /// The CLI's environment: the configuration `serve` reads.
    pub env: Vec<(String, String)>,
    pub base: String,
    pub http: awc::Client,
    pub receiver: Receiver,
    pub store: Prepared,
    _hookd: Hookd,
    _work: tempfile::TempDir,
    _db: Option<tempfile::TempDir>,
}

impl Bed {
    pub async fn start(backend: Backend, paths: &[&str]) -> Bed {
        let (url, db) = harness::database(backend).await;
        let receiver = Receiver::start().await;
        let urls: Vec<String> = paths
            .iter()
            .map(|p| format!("{}{p}", receiver.url()))
            .collect();
        let store = prepare_endpoints(&url, &urls, 4).await;
        let listen = format!("127.0.0.1:{}", free_port());
        let serve_env = harness::test_env(
            &url,
            &[
                ("HOOKD_HTTP__LISTEN", &listen),
                ("HOOKD_LOG__FILTER", "warn"),
            ],
        );
        let work = tempfile::tempdir().expect("a working folder");
        let mut child = Hookd::start(&["serve"], &serve_env, work.path(), "serve");
        let http = awc::Client::builder()
            .timeout(Duration::from_secs(30))
            .finish();
        let base = format!("http://{listen}");
        child.wait_healthy(&http, &base, SLOW).await;
        Bed {
            env: harness::test_env(&url, &[("HOOKD_LOG__FILTER", "warn")]),
            base,
            http,
            receiver,
            store,
            _hookd: child,
            _work: work,
            _db: db,
        }
    }

    /// `hookd <args>` on this bed's database, off the test's runtime (the
    /// receiver keeps answering meanwhile).
    pub async fn cli(&self, args: &[&str]) -> Output {
        let args = args.iter().map(|a| a.to_string()).collect();
        harness::process::run_off_runtime(self.env.clone(), args).await
    }

    /// `hookd <args> --json`, which must succeed: the JSON it printed.
    pub async fn cli_json(&self, args: &[&str]) -> Value {
        json_of(&self.cli(&[args, &["--json"]].concat()).await)
    }

    /// Waits until the receiver got `event_id` on `path` more than `times`
    /// times (the engine of the `serve` child delivers it).
    pub async fn receives(&self, path: &str, event_id: &str, times: usize) {
        wait_until(SLOW, || async {
            (self.got(path, event_id) > times).then_some(())
        })
        .await
        .unwrap_or_else(|| {
            panic!("{path} did not get {event_id} more than {times} time(s) within {SLOW:?}")
        });
    }

    /// The endpoint `id` as the operator API shows it: status and body.
    pub async fn admin_endpoint(&self, id: &str) -> (u16, Value) {
        let path = format!("/v1/admin/endpoints/{id}");
        self.api("GET", &path, &self.store.operator_key, None).await
    }

    /// The API with a key: status and JSON body.
    pub async fn api(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let body = body.map(|b| b.to_string());
        let (status, value, _) =
            call_raw(&self.http, &self.base, method, path, key, body.as_deref()).await;
        (status, value)
    }

    /// Publishes one event for the partner; returns its id.
    pub async fn publish(&self) -> String {
        let (ids, body) = harness::process::event_batch(&self.store.partner_id, 1);
        let (status, body) = self
            .api(
                "POST",
                "/v1/events",
                &self.store.service_key,
                Some(serde_json::from_str(&body).expect("JSON")),
            )
            .await;
        assert_eq!(status, 201, "the event is accepted: {body}");
        ids[0].clone()
    }

    /// The audit entries about `target`, newest first, as the API lists them.
    pub async fn audit(&self, target: &str) -> Vec<Value> {
        let path = format!("/v1/admin/audit?target={target}");
        let (status, body) = self.api("GET", &path, &self.store.operator_key, None).await;
        assert_eq!(status, 200, "{body}");
        body["data"].as_array().cloned().unwrap_or_default()
    }

    /// Requests the receiver got on `path` carrying `event_id`.
    pub fn got(&self, path: &str, event_id: &str) -> usize {
        self.receiver
            .received()
            .iter()
            .filter(|r| r.path == path && r.header("webhook-id") == Some(event_id))
            .count()
    }
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the command failed with `code` and one line on stderr, nothing on stdout.
pub fn assert_refused(out: &Output, code: i32, what: &str) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: nothing on stdout");
    assert!(err.starts_with("error: "), "{what}: {err}");
    err
}

/// The one audit entry of `action`, which must be the CLI's.
pub fn cli_entry(entries: &[Value], action: &str) -> Value {
    let entry = entries
        .iter()
        .find(|e| e["action"] == action)
        .unwrap_or_else(|| panic!("no `{action}` entry in {entries:?}"));
    assert_eq!(entry["via"], "cli", "{entry}");
    entry.clone()
}
