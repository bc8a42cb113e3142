//! What malformed requests leave in the real binary's log: never an ERROR
//! line (they are the client's fault), and their refusals as one WARN line
//! every ten seconds at most.

use std::time::Duration;

use super::{exchange, refusals::malformed};
use crate::harness::{self, Backend, process::Hookd, serve::serve_env};

#[hookd_test_macros::test]
async fn malformed_requests_log_no_error_and_one_warning_a_period() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let work = tempfile::tempdir().expect("a working folder");
    let (listen, env) = serve_env(&url, &[("HOOKD_LOG__FILTER", "info")]);
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "hookd");
    let http = awc::Client::default();
    hookd
        .wait_healthy(&http, &format!("http://{listen}"), Duration::from_secs(30))
        .await;
    let server = listen.parse().expect("an address");
    let mut refused = 0;
    for _ in 0..3 {
        for (what, bytes, status, _) in malformed() {
            let answer = exchange(server, &bytes, Duration::from_secs(3))
                .await
                .unwrap_or_else(|| panic!("{what}: no answer"));
            assert_eq!(answer.status, status, "{what}");
            refused += 1;
        }
    }
    // The last answers' lines are written by now; give the log a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = hookd.stderr();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert!(
        errors.is_empty(),
        "{refused} malformed requests wrote {} ERROR lines: {errors:#?}",
        errors.len()
    );
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains("HTTP parser"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "{refused} refusals in under ten seconds make one sampled line: {warnings:#?}"
    );
}
