//! Dev mode, with the real binary: it delivers to a loopback http receiver
//! on a random port, which without it is refused at registration and
//! blocked at delivery; `serve --dev` prints the dashboard, keys that work
//! and the commands to try.

use std::{
    io::{BufRead as _, BufReader},
    process::{Child, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

use crate::harness::{
    self, ApiAnswer, Backend, SLOW, call_raw,
    process::{Hookd, Prepared, event_batch, free_port, prepare_endpoints, run},
    receiver::Receiver,
};

/// The configuration with egress as shipped (public https only), on `url`.
pub(super) fn strict_env(url: &str, listen: &str) -> Vec<(String, String)> {
    harness::test_env(
        url,
        &[
            ("HOOKD_HTTP__LISTEN", listen),
            ("HOOKD_LOG__FILTER", "warn"),
            ("HOOKD_EGRESS__ALLOW_HTTP", "false"),
            ("HOOKD_EGRESS__ALLOW_CIDRS", "[]"),
            ("HOOKD_EGRESS__ALLOWED_PORTS", "[443, 8443]"),
        ],
    )
}

/// A database with a partner and its keys, a receiver on a random loopback
/// port, and the shipped egress settings for a `serve` on a free port.
struct Bed {
    env: Vec<(String, String)>,
    base: String,
    http: awc::Client,
    receiver: Receiver,
    store: Prepared,
    /// The receiver's URL, `/hooks`.
    hooks: String,
    work: tempfile::TempDir,
    _db: Option<tempfile::TempDir>,
}

impl Bed {
    async fn new() -> Bed {
        let (url, db) = harness::database(Backend::Sqlite).await;
        let receiver = Receiver::start().await;
        let store = prepare_endpoints(&url, &[], 4).await;
        let listen = format!("127.0.0.1:{}", free_port());
        Bed {
            env: strict_env(&url, &listen),
            base: format!("http://{listen}"),
            http: awc::Client::builder()
                .timeout(Duration::from_secs(30))
                .finish(),
            hooks: format!("{}/hooks", receiver.url()),
            receiver,
            store,
            work: tempfile::tempdir().expect("a working folder"),
            _db: db,
        }
    }

    /// `hookd <args>` as a child on the bed's address, healthy.
    async fn serving(&self, args: &[&str]) -> Hookd {
        let mut child = Hookd::start(args, &self.env, self.work.path(), &args.join("-"));
        child.wait_healthy(&self.http, &self.base, SLOW).await;
        child
    }

    /// `method path` on the running hookd with `key` and a JSON body.
    async fn api(&self, method: &str, path: &str, key: &str, body: Option<&Value>) -> ApiAnswer {
        let body = body.map(Value::to_string);
        call_raw(&self.http, &self.base, method, path, key, body.as_deref()).await
    }

    /// Registers the receiver as an endpoint through the partner API.
    async fn register_the_receiver(&self) -> ApiAnswer {
        let create = json!({"url": self.hooks});
        let key = &self.store.partner_key;
        self.api("POST", "/v1/endpoints", key, Some(&create)).await
    }

    /// Publishes one event for the partner; returns its id.
    async fn publish(&self) -> String {
        let (ids, batch) = event_batch(&self.store.partner_id, 1);
        let body: Value = serde_json::from_str(&batch).expect("JSON");
        let key = &self.store.service_key;
        let (status, answer, _) = self.api("POST", "/v1/events", key, Some(&body)).await;
        assert_eq!(status, 201, "{answer}");
        ids[0].clone()
    }
}

/// Stops a hookd as an operator would (SIGTERM: it hands its endpoints back).
async fn stop(child: &mut Hookd) {
    harness::process::signal(child, "TERM");
    let status = child.exited(SLOW).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "hookd stops cleanly:\n{}",
        child.stderr()
    );
}

#[hookd_test_macros::test]
async fn without_dev_mode_the_cli_refuses_a_loopback_receiver_and_points_at_dev_mode() {
    let bed = Bed::new().await;
    let partner = &bed.store.partner_id;
    let create = [
        "endpoint",
        "create",
        "--partner",
        partner,
        "--url",
        &bed.hooks,
    ];
    let refused = run(&bed.env, &create);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--dev"),
        "the refusal points at dev mode: {err}"
    );
}

#[hookd_test_macros::test]
async fn without_dev_mode_serve_refuses_a_loopback_endpoint() {
    let bed = Bed::new().await;
    let _plain = bed.serving(&["serve"]).await;
    let (status, body, _) = bed.register_the_receiver().await;
    assert_eq!(
        status, 422,
        "without --dev the loopback endpoint is refused: {body}"
    );
}

#[hookd_test_macros::test]
async fn dev_mode_says_so_and_takes_a_loopback_http_endpoint_on_any_port() {
    let bed = Bed::new().await;
    let dev = bed.serving(&["serve", "--dev"]).await;
    assert!(
        dev.stderr().contains("DEV MODE"),
        "dev mode says so:\n{}",
        dev.stderr()
    );
    let (status, created, _) = bed.register_the_receiver().await;
    assert_eq!(
        status, 201,
        "dev mode takes a loopback http endpoint on any port: {created}"
    );
}

/// In dev mode: the receiver registered and an event delivered to it.
/// Returns the endpoint's id and its secret.
async fn delivered_in_dev_mode(bed: &Bed) -> (String, hookd::secret::Secret) {
    let mut dev = bed.serving(&["serve", "--dev"]).await;
    let (status, created, _) = bed.register_the_receiver().await;
    assert_eq!(status, 201, "{created}");
    let secret = hookd::secret::Secret::parse(created["secret"].as_str().expect("a secret"))
        .expect("whsec_");
    bed.publish().await;
    bed.receiver.wait_for(1, SLOW).await.expect("a delivery");
    stop(&mut dev).await;
    (created["id"].as_str().expect("an id").to_string(), secret)
}

#[hookd_test_macros::test]
async fn dev_mode_delivers_a_signed_event_to_a_loopback_receiver() {
    let bed = Bed::new().await;
    let (_, secret) = delivered_in_dev_mode(&bed).await;
    let got = bed.receiver.received();
    let r = &got[0];
    let header = |n| r.header(n).unwrap_or_default();
    let now = chrono::Utc::now().timestamp();
    hookd::signing::verify(
        &secret,
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
        &r.body,
        now,
        300,
    )
    .expect("the delivery's signature verifies");
}

#[hookd_test_macros::test]
async fn restarted_without_dev_mode_hookd_blocks_what_dev_mode_let_in() {
    let bed = Bed::new().await;
    let (endpoint, _) = delivered_in_dev_mode(&bed).await;
    let _plain = bed.serving(&["serve"]).await;
    let event = bed.publish().await;
    let path = format!("/v1/deliveries?event_id={event}");
    let key = &bed.store.partner_key;
    let category = harness::wait_until(SLOW, || async {
        let (_, page, _) = bed.api("GET", &path, key, None).await;
        let d: &Value = &page["data"][0];
        (d["endpoint_id"] == json!(endpoint) && d["attempt_count"].as_i64() >= Some(1))
            .then(|| d["last_error_category"].clone())
    })
    .await
    .expect("the delivery is attempted");
    assert_eq!(category, "blocked", "the attempt is blocked, not sent");
    assert_eq!(bed.receiver.count(), 1, "nothing more reached the receiver");
}

/// A child whose stdout the test reads; killed when dropped.
pub(super) struct Reading(pub(super) Child);

impl Drop for Reading {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `hookd serve --dev` on a fresh database, kept running: the child, its
/// banner (stdout up to "Ctrl-C stops hookd") and its base URL.
async fn serve_dev_banner() -> (Reading, String, String, Option<tempfile::TempDir>) {
    let (url, db) = harness::database(Backend::Sqlite).await;
    let listen = format!("127.0.0.1:{}", free_port());
    let (child, banner) = serve_dev_on(&url, &listen).await;
    (child, banner, format!("http://{listen}"), db)
}

/// `hookd serve --dev` on the database `url`, listening on `listen`, kept
/// running: the child and its banner, once printed.
pub(super) async fn serve_dev_on(url: &str, listen: &str) -> (Reading, String) {
    let mut child = Reading(
        harness::process::command(&["serve", "--dev"], strict_env(url, listen))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("hookd starts"),
    );
    let stdout = child.0.stdout.take().expect("its stdout");
    // Read to the end on a thread of its own, so the pipe stays open while
    // hookd runs; the banner is sent once it is whole.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
            if line.contains("Ctrl-C stops hookd") {
                let _ = tx.send(text.clone());
            }
        }
        let _ = tx.send(text);
    });
    let banner = actix_rt::task::spawn_blocking(move || rx.recv_timeout(SLOW))
        .await
        .expect("the reader")
        .unwrap_or_else(|_| panic!("the banner within {SLOW:?}"));
    (child, banner)
}

/// The key the banner prints after `label`.
pub(super) fn printed_key(banner: &str, label: &str) -> String {
    banner
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `{label}` in:\n{banner}"))
        .to_string()
}

#[hookd_test_macros::test]
async fn serve_dev_prints_the_dashboard_and_the_commands_to_try() {
    let (_child, banner, base, _db) = serve_dev_banner().await;
    assert!(banner.contains(&format!("{base}/dashboard")), "{banner}");
    assert!(banner.contains(hookd::cli::dev::RUN_RECEIVER), "{banner}");
    assert!(banner.contains("endpoint create --dev"), "{banner}");
}

#[hookd_test_macros::test]
async fn the_operator_key_serve_dev_prints_works() {
    let (_child, banner, base, _db) = serve_dev_banner().await;
    let key = printed_key(&banner, "operator key");
    let http = awc::Client::default();
    let (status, _, _) = call_raw(&http, &base, "GET", "/v1/admin/partners", &key, None).await;
    assert_eq!(status, 200, "the printed operator key works");
}

#[hookd_test_macros::test]
async fn the_service_key_serve_dev_prints_is_a_key() {
    let (_child, banner, base, _db) = serve_dev_banner().await;
    let key = printed_key(&banner, "service key");
    let (_, batch) = event_batch("nobody", 1);
    let http = awc::Client::default();
    let (status, body, _) = call_raw(&http, &base, "POST", "/v1/events", &key, Some(&batch)).await;
    assert_ne!(status, 401, "the printed service key is a key: {body}");
}
