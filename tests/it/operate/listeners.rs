//! The side listeners, with the real binary: the operations listener
//! (`http.ops_listen`) serves `/healthz`, `/readyz` and `/metrics` (behind
//! the operator key, as on the public address) and nothing else; the Unix
//! socket (`http.unix_socket`) serves the whole API with the file mode it
//! was given, is taken back after a SIGKILL left its file behind, and is
//! removed on a clean stop; a file at its path that is not a socket stops
//! the start, untouched.

use std::{os::unix::fs::PermissionsExt as _, path::Path, time::Duration};

use crate::{
    harness::{
        self, Backend, SLOW,
        process::{Hookd, free_port, prepare_endpoints, signal},
        receiver::{Receiver, Reply},
        serve::serve_env,
    },
    hostile::{exchange, exchange_unix, ingest_request},
};

const WITHIN: Duration = Duration::from_secs(5);

fn get(path: &str, key: Option<&str>) -> String {
    let auth = key.map_or(String::new(), |k| format!("Authorization: Bearer {k}\r\n"));
    format!("GET {path} HTTP/1.1\r\nHost: h\r\n{auth}Connection: close\r\n\r\n")
}

/// A `hookd serve` on SQLite with `extra` configuration, healthy.
async fn serve(url: &str, extra: &[(&str, &str)], dir: &Path, name: &str) -> (Hookd, String) {
    let (listen, env) = serve_env(url, extra);
    let mut hookd = Hookd::start(&["serve"], &env, dir, name);
    let http = awc::Client::default();
    hookd
        .wait_healthy(&http, &format!("http://{listen}"), SLOW)
        .await;
    (hookd, listen)
}

#[hookd_test_macros::test]
async fn the_operations_listener_serves_probes_and_metrics_and_nothing_else() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let prepared = prepare_endpoints(&url, &["https://example.com/hooks".into()], 1).await;
    let work = tempfile::tempdir().unwrap();
    let ops = format!("127.0.0.1:{}", free_port());
    let (_hookd, _) = serve(
        &url,
        &[("HOOKD_HTTP__OPS_LISTEN", &ops)],
        work.path(),
        "ops",
    )
    .await;
    let ops = ops.parse().unwrap();
    let status = |path: &'static str, key: Option<String>| async move {
        exchange(ops, get(path, key.as_deref()).as_bytes(), WITHIN)
            .await
            .map(|a| a.status)
    };
    assert_eq!(status("/healthz", None).await, Some(200));
    assert_eq!(status("/readyz", None).await, Some(200));
    assert_eq!(
        status("/metrics", None).await,
        Some(401),
        "the scrape needs the operator key here too"
    );
    let metrics = exchange(
        ops,
        get("/metrics", Some(&prepared.operator_key)).as_bytes(),
        WITHIN,
    )
    .await
    .expect("an answer");
    assert_eq!(metrics.status, 200);
    assert!(String::from_utf8_lossy(&metrics.body).contains("hookd_"));
    for elsewhere in ["/v1/endpoints", "/dashboard", "/docs", "/v1/openapi.json"] {
        let key = Some(prepared.operator_key.clone());
        assert_eq!(
            status(elsewhere, key).await,
            Some(404),
            "{elsewhere} is not served on the operations listener"
        );
    }
}

#[hookd_test_macros::test]
async fn the_unix_socket_serves_the_api_with_its_mode_and_is_taken_back_after_a_kill() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(204));
    let prepared = prepare_endpoints(&url, &[format!("{}/hooks", receiver.url())], 1).await;
    let work = tempfile::tempdir().unwrap();
    let socket = work.path().join("hookd.sock");
    let extra = [
        ("HOOKD_HTTP__UNIX_SOCKET", socket.to_str().unwrap()),
        ("HOOKD_HTTP__UNIX_SOCKET_MODE", "0600"),
    ];
    let (mut hookd, _) = serve(&url, &extra, work.path(), "unix").await;
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the socket has the configured mode");
    let ingest = ingest_request(&prepared.partner_id, &prepared.service_key);
    let answer = exchange_unix(&socket, ingest.as_bytes(), WITHIN).await;
    assert_eq!(
        answer.map(|a| a.status),
        Some(201),
        "ingest over the socket"
    );
    receiver
        .wait_for(1, SLOW)
        .await
        .expect("the event ingested over the socket is delivered");

    hookd.kill();
    assert!(socket.exists(), "a SIGKILL leaves the socket file behind");
    let (mut again, _) = serve(&url, &extra, work.path(), "unix-again").await;
    let answer = exchange_unix(&socket, ingest.as_bytes(), WITHIN).await;
    assert_eq!(
        answer.map(|a| a.status),
        Some(201),
        "the stale socket file was replaced: {}",
        again.stderr()
    );
    signal(&again, "TERM");
    assert!(again.exited(SLOW).await.is_some(), "SIGTERM stops hookd");
    assert!(!socket.exists(), "a clean stop removes the socket file");
}

#[hookd_test_macros::test]
async fn a_file_at_the_socket_path_that_is_not_a_socket_stops_the_start_untouched() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("hookd.sock");
    std::fs::write(&path, "not a socket").unwrap();
    let (_, env) = serve_env(&url, &[("HOOKD_HTTP__UNIX_SOCKET", path.to_str().unwrap())]);
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "not-a-socket");
    let status = hookd.exited(SLOW).await.expect("hookd stops");
    let stderr = hookd.stderr();
    assert_eq!(status.code(), Some(2), "a start-up error: {stderr}");
    assert!(
        stderr.contains("http.unix_socket") && stderr.contains("is not a socket"),
        "the error names the key and the problem: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a socket");
}
