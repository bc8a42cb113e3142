//! The keys `hookd serve --dev` prints die with its run, with the real
//! binary: stopped gracefully (SIGTERM), its keys are refused by the next
//! `serve`; killed (SIGKILL), they are revoked by the next `serve --dev`,
//! whose own keys work.

use std::{
    process::Command,
    time::{Duration, Instant},
};

use hookd_test_macros::both_backends;

use super::dev_mode::{Reading, printed_key, serve_dev_on, strict_env};
use crate::harness::{
    self, SLOW, call_raw,
    process::{Hookd, free_port},
};

/// A `serve --dev` child whose banner was read; killed when dropped.
struct DevRun {
    child: Reading,
    operator_key: String,
    service_key: String,
}

impl DevRun {
    /// `hookd serve --dev` on `url`, once its banner is printed.
    async fn start(url: &str, listen: &str) -> DevRun {
        let (child, banner) = serve_dev_on(url, listen).await;
        DevRun {
            operator_key: printed_key(&banner, "operator key"),
            service_key: printed_key(&banner, "service key"),
            child,
        }
    }

    /// Sends `signal` and waits for the process to end.
    async fn stop(&mut self, signal: &str) {
        let child = &mut self.child.0;
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{signal}");
        let deadline = Instant::now() + SLOW;
        while child.try_wait().expect("its status").is_none() {
            assert!(
                Instant::now() < deadline,
                "hookd did not end within {SLOW:?}"
            );
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The status of `GET /v1/admin/partners` with `key` at `base`.
async fn operator_status(base: &str, key: &str) -> u16 {
    let http = awc::Client::default();
    call_raw(&http, base, "GET", "/v1/admin/partners", key, None)
        .await
        .0
}

#[both_backends]
async fn the_keys_serve_dev_printed_are_refused_once_it_stopped_gracefully(backend: Backend) {
    let (url, _db) = harness::database(backend).await;
    let listen = format!("127.0.0.1:{}", free_port());
    let base = format!("http://{listen}");
    let mut dev = DevRun::start(&url, &listen).await;
    assert_eq!(
        operator_status(&base, &dev.operator_key).await,
        200,
        "the key works while it runs"
    );
    dev.stop("TERM").await;
    let work = tempfile::tempdir().expect("a working folder");
    let listen = format!("127.0.0.1:{}", free_port());
    let base = format!("http://{listen}");
    let mut plain = Hookd::start(&["serve"], &strict_env(&url, &listen), work.path(), "after");
    plain
        .wait_healthy(&awc::Client::default(), &base, SLOW)
        .await;
    assert_eq!(
        operator_status(&base, &dev.operator_key).await,
        401,
        "the operator key is revoked"
    );
    let http = awc::Client::default();
    let (_, batch) = harness::process::event_batch("nobody", 1);
    let (status, body, _) = call_raw(
        &http,
        &base,
        "POST",
        "/v1/events",
        &dev.service_key,
        Some(&batch),
    )
    .await;
    assert_eq!(status, 401, "the service key is revoked: {body}");
}

#[both_backends]
async fn a_killed_dev_runs_keys_are_revoked_by_the_next_dev_run_whose_keys_work(backend: Backend) {
    let (url, _db) = harness::database(backend).await;
    let listen = format!("127.0.0.1:{}", free_port());
    let base = format!("http://{listen}");
    let mut first = DevRun::start(&url, &listen).await;
    assert_eq!(
        operator_status(&base, &first.operator_key).await,
        200,
        "the key works while it runs"
    );
    first.stop("KILL").await;
    let listen = format!("127.0.0.1:{}", free_port());
    let base = format!("http://{listen}");
    let second = DevRun::start(&url, &listen).await;
    assert_eq!(
        operator_status(&base, &first.operator_key).await,
        401,
        "the killed run's operator key is revoked"
    );
    assert_eq!(
        operator_status(&base, &second.operator_key).await,
        200,
        "the new run's key works"
    );
}
