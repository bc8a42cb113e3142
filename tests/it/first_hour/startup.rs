//! Start-up, with the real binary: the port is bound before anything else,
//! so a taken one (held by the test) stops `serve` and `demo` with one line
//! and exit 2, before the database is touched; a database that cannot be
//! reached does the same for `serve` and `migrate`. Dev mode delivers to a
//! loopback http receiver on a random port; without it, that endpoint is
//! refused at registration and blocked at delivery.

use std::{
    io::{BufRead as _, BufReader},
    process::{Child, Command, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

use crate::{
    cli::hookd,
    harness::{
        self, Backend, call_raw,
        process::{Hookd, event_batch, free_port, prepare_endpoints},
        receiver::Receiver,
    },
};

/// Runs `hookd <args>` until it exits; returns its status code and stderr.
async fn run_to_exit(
    args: &[&str],
    env: &[(String, String)],
    dir: &std::path::Path,
) -> (Option<i32>, String) {
    let mut child = Hookd::start(args, env, dir, &args.join("-"));
    let status = child
        .exited(Duration::from_secs(30))
        .await
        .unwrap_or_else(|| {
            panic!(
                "`hookd {}` did not stop:\n{}",
                args.join(" "),
                child.stderr()
            )
        });
    (status.code(), child.stderr())
}

/// Asserts a start-up failure: exit 2, one line naming `needle`, no panic.
fn assert_one_line(what: &str, code: Option<i32>, stderr: &str, needle: &str) {
    assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
    assert_eq!(code, Some(2), "{what} exits 2:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{what} says one line:\n{stderr}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{what}: the line names the problem ({needle}):\n{stderr}"
    );
}

#[actix_rt::test]
async fn a_taken_port_stops_serve_and_demo_with_one_line_and_exit_2_before_the_database() {
    let work = tempfile::tempdir().expect("a working folder");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to hold");
    let listen = taken.local_addr().expect("its address").to_string();
    let database = work.path().join("hookd.db");
    let env = vec![
        ("HOOKD_HTTP__LISTEN".to_string(), listen.clone()),
        (
            "HOOKD_DATABASE__URL".to_string(),
            format!("sqlite://{}", database.display()),
        ),
    ];
    for args in [
        vec!["serve"],
        vec!["serve", "--dev"],
        vec!["demo", "--exit-when-delivered"],
    ] {
        let (code, stderr) = run_to_exit(&args, &env, work.path()).await;
        let what = format!("`hookd {}` on a taken port", args.join(" "));
        assert_one_line(&what, code, &stderr, &format!("cannot listen on {listen}"));
        assert!(
            stderr.contains("in use") && stderr.contains("HOOKD_HTTP__LISTEN"),
            "{what}: says why and what to set:\n{stderr}"
        );
        assert!(!database.exists(), "{what}: the database is not touched");
    }
    drop(taken);
}

#[actix_rt::test]
async fn an_unreachable_database_stops_serve_and_migrate_with_one_line_and_exit_2() {
    let work = tempfile::tempdir().expect("a working folder");
    let env = vec![
        ("HOOKD_HTTP__LISTEN".to_string(), "127.0.0.1:0".to_string()),
        (
            "HOOKD_DATABASE__URL".to_string(),
            format!("postgres://postgres@127.0.0.1:{}/none", free_port()),
        ),
        (
            "HOOKD_SECRETS__MASTER_KEY".to_string(),
            harness::MASTER_KEY.to_string(),
        ),
    ];
    for args in [vec!["serve"], vec!["migrate"], vec!["partner", "list"]] {
        let (code, stderr) = run_to_exit(&args, &env, work.path()).await;
        let what = format!("`hookd {}` without its database", args.join(" "));
        assert_one_line(&what, code, &stderr, "cannot connect to the database");
    }
}

/// The configuration with egress as shipped (public https only), on `url`.
fn strict_env(url: &str, listen: &str) -> Vec<(String, String)> {
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

/// `hookd <args>` as a child on `listen`, healthy.
async fn serving(
    args: &[&str],
    env: &[(String, String)],
    dir: &std::path::Path,
    http: &awc::Client,
) -> Hookd {
    // The last value given wins, as in the child's environment.
    let listen = &env
        .iter()
        .rev()
        .find(|(k, _)| k == "HOOKD_HTTP__LISTEN")
        .expect("a listen address")
        .1;
    let mut child = Hookd::start(args, env, dir, &args.join("-"));
    child
        .wait_healthy(http, &format!("http://{listen}"), Duration::from_secs(30))
        .await;
    child
}

#[actix_rt::test]
async fn dev_mode_delivers_to_a_loopback_http_receiver_and_without_it_that_endpoint_is_refused() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let work = tempfile::tempdir().expect("a working folder");
    let http = awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish();
    let receiver = Receiver::start().await;
    let store = prepare_endpoints(&url, &[], 4).await;
    let hooks = format!("{}/hooks", receiver.url());
    let create = json!({"url": hooks});

    // The CLI and a plain `serve` refuse the receiver, and say how to allow it.
    let cli_env = strict_env(&url, "127.0.0.1:0");
    let refused = hookd(
        &cli_env,
        &[
            "endpoint",
            "create",
            "--partner",
            &store.partner_id,
            "--url",
            &hooks,
        ],
    );
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--dev"),
        "the refusal points at dev mode: {err}"
    );
    let listen = format!("127.0.0.1:{}", free_port());
    let env = strict_env(&url, &listen);
    let base = format!("http://{listen}");
    let mut plain = serving(&["serve"], &env, work.path(), &http).await;
    let (status, body, _) = call_raw(
        &http,
        &base,
        "POST",
        "/v1/endpoints",
        &store.partner_key,
        Some(&create.to_string()),
    )
    .await;
    assert_eq!(
        status, 422,
        "without --dev the loopback endpoint is refused: {body}"
    );
    stop(&mut plain).await;

    // In dev mode the same endpoint is taken, and a signed event arrives.
    let mut dev = serving(&["serve", "--dev"], &env, work.path(), &http).await;
    assert!(
        dev.stderr().contains("DEV MODE"),
        "dev mode says so:\n{}",
        dev.stderr()
    );
    let (status, created, _) = call_raw(
        &http,
        &base,
        "POST",
        "/v1/endpoints",
        &store.partner_key,
        Some(&create.to_string()),
    )
    .await;
    assert_eq!(
        status, 201,
        "dev mode takes a loopback http endpoint on any port: {created}"
    );
    let secret = hookd::secret::Secret::parse(created["secret"].as_str().expect("a secret"))
        .expect("whsec_");
    let endpoint = created["id"].as_str().expect("an id").to_string();
    let (_, batch) = event_batch(&store.partner_id, 1);
    let (status, _, _) = call_raw(
        &http,
        &base,
        "POST",
        "/v1/events",
        &store.service_key,
        Some(&batch),
    )
    .await;
    assert_eq!(status, 201);
    let got = receiver
        .wait_for(1, Duration::from_secs(20))
        .await
        .expect("a delivery");
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
    stop(&mut dev).await;

    // Started again without --dev, hookd blocks what dev mode let in.
    let _plain = serving(&["serve"], &env, work.path(), &http).await;
    let (ids, batch) = event_batch(&store.partner_id, 1);
    call_raw(
        &http,
        &base,
        "POST",
        "/v1/events",
        &store.service_key,
        Some(&batch),
    )
    .await;
    let path = format!("/v1/deliveries?event_id={}", ids[0]);
    let category = harness::wait_until(Duration::from_secs(20), || async {
        let (_, page, _) = call_raw(&http, &base, "GET", &path, &store.partner_key, None).await;
        let d: &Value = &page["data"][0];
        (d["endpoint_id"] == json!(endpoint) && d["attempt_count"].as_i64() >= Some(1))
            .then(|| d["last_error_category"].clone())
    })
    .await
    .expect("the delivery is attempted");
    assert_eq!(category, "blocked", "the attempt is blocked, not sent");
    assert_eq!(receiver.count(), 1, "nothing more reached the receiver");
}

/// Stops a hookd as an operator would (SIGTERM: it hands its endpoints back).
async fn stop(child: &mut Hookd) {
    harness::process::signal(child, "TERM");
    let status = child.exited(Duration::from_secs(20)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "hookd stops cleanly:\n{}",
        child.stderr()
    );
}

/// A child whose stdout the test reads; killed when dropped.
struct Reading(Child);

impl Drop for Reading {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[actix_rt::test]
async fn serve_dev_prints_the_dashboard_with_a_working_operator_key_and_the_receiver_command() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let listen = format!("127.0.0.1:{}", free_port());
    let mut child = Reading(
        Command::new(env!("CARGO_BIN_EXE_hookd"))
            .args(["serve", "--dev"])
            .env_clear()
            .envs(strict_env(&url, &listen))
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
    let banner = actix_rt::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(30)))
        .await
        .expect("the reader")
        .expect("the banner within 30 s");
    let base = format!("http://{listen}");
    assert!(banner.contains(&format!("{base}/dashboard")), "{banner}");
    assert!(
        banner.contains("cargo run --release -p hookd-example-receiver"),
        "{banner}"
    );
    assert!(banner.contains("endpoint create --dev"), "{banner}");
    let key = |label: &str| {
        banner
            .lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no `{label}` in:\n{banner}"))
            .to_string()
    };
    let http = awc::Client::default();
    let (status, _, _) = call_raw(
        &http,
        &base,
        "GET",
        "/v1/admin/partners",
        &key("operator key"),
        None,
    )
    .await;
    assert_eq!(status, 200, "the printed operator key works");
    let (_, batch) = event_batch("nobody", 1);
    let (status, body, _) = call_raw(
        &http,
        &base,
        "POST",
        "/v1/events",
        &key("service key"),
        Some(&batch),
    )
    .await;
    assert_ne!(status, 401, "the printed service key is a key: {body}");
}
