//! Stopping the real `hookd` binary: SIGTERM and SIGINT end `serve` with exit
//! status 0 and no panic, on both backends, after the attempts in flight
//! finish and are recorded once (ingest answers 503 meanwhile); a taken port
//! stops the start with an error that names it, and no panic.

use hookd_test_macros::both_backends;
use std::{process::ExitStatus, time::Duration};

use crate::harness::{
    self, Backend,
    process::{Hookd, prepare_store},
    receiver::{Receiver, Reply},
    serve::serve_env,
};

fn signal(hookd: &Hookd, name: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(hookd.pid().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} was delivered");
}

fn assert_clean_exit(hookd: &mut Hookd, status: Option<ExitStatus>, what: &str) {
    let log = hookd.stderr();
    let status = status.unwrap_or_else(|| panic!("{what}: hookd did not exit within 10 s:\n{log}"));
    assert!(!log.contains("panicked"), "{what}: hookd panicked:\n{log}");
    assert_eq!(
        status.code(),
        Some(0),
        "{what}: exit status {status}:\n{log}"
    );
}

/// Waits for `hookd` to give up starting, on `what`, and checks that it
/// exits with status 2 and no panic: its log.
async fn gives_up_with_status_two(hookd: &mut Hookd, what: &str) -> String {
    let status = hookd
        .exited(Duration::from_secs(20))
        .await
        .unwrap_or_else(|| panic!("hookd does not give up on {what}"));
    let log = hookd.stderr();
    assert!(
        !log.contains("panicked"),
        "hookd panicked on {what}:\n{log}"
    );
    assert_eq!(status.code(), Some(2), "{what}: {log}");
    log
}

#[both_backends]
async fn a_signal_stops_serve_with_exit_status_zero_and_no_panic(backend: Backend) {
    let (url, _db) = harness::database(backend).await;
    let work = tempfile::tempdir().expect("a working folder");
    let http = awc::Client::default();
    for signal_name in ["TERM", "INT"] {
        let (listen, env) = serve_env(&url, &[]);
        let mut hookd = Hookd::start(&["serve"], &env, work.path(), signal_name);
        hookd
            .wait_healthy(&http, &format!("http://{listen}"), Duration::from_secs(30))
            .await;
        signal(&hookd, signal_name);
        let status = hookd.exited(Duration::from_secs(10)).await;
        assert_clean_exit(&mut hookd, status, &format!("SIG{signal_name}"));
    }
}

#[both_backends]
async fn a_taken_port_stops_the_start_with_an_error_and_no_panic(backend: Backend) {
    let (url, _db) = harness::database(backend).await;
    let work = tempfile::tempdir().expect("a working folder");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to take");
    let listen = taken.local_addr().expect("its address").to_string();
    let env = harness::test_env(&url, &[("HOOKD_HTTP__LISTEN", &listen)]);
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "taken");
    let log = gives_up_with_status_two(&mut hookd, "a taken port").await;
    assert!(
        log.contains("cannot listen on") && log.contains("http.listen"),
        "the error names the address and the setting:\n{log}"
    );
}

/// One POST /v1/events on a fresh connection: status and `Retry-After`.
async fn ingest(listen: &str, key: &str, body: String) -> (u16, Option<String>) {
    let res = awc::Client::default()
        .post(format!("http://{listen}/v1/events"))
        .insert_header(("authorization", format!("Bearer {key}")))
        .insert_header(("content-type", "application/json"))
        .send_body(body)
        .await
        .expect("ingest answers");
    let retry_after = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (res.status().as_u16(), retry_after)
}

const IN_FLIGHT: usize = 8;

#[both_backends]
async fn a_stop_lets_attempts_in_flight_finish_and_records_each_once(backend: Backend) {
    let (url, _db) = harness::database(backend).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Delay(
        Duration::from_secs(2),
        Box::new(Reply::status(200)),
    ));
    let (partner, key) = prepare_store(&url, &receiver.url(), IN_FLIGHT as u32).await;
    let work = tempfile::tempdir().expect("a working folder");
    // A long lease: anything cut off would come back only long after the test.
    let (listen, env) = serve_env(
        &url,
        &[
            ("HOOKD_DELIVERY__LEASE", "60s"),
            ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "10s"),
        ],
    );
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "hookd");
    hookd
        .wait_healthy(
            &awc::Client::default(),
            &format!("http://{listen}"),
            Duration::from_secs(30),
        )
        .await;
    let events: Vec<String> = (0..IN_FLIGHT)
            .map(|i| {
                format!(
                    r#"{{"type":"balance.updated","partner_id":"{partner}","data":{{"customer_id":"cus_{i}","currency":"USD","balance":"1.00"}}}}"#
                )
            })
            .collect();
    let (status, _) = ingest(&listen, &key, format!("[{}]", events.join(","))).await;
    assert_eq!(status, 201);
    receiver
        .wait_for(IN_FLIGHT, Duration::from_secs(10))
        .await
        .expect("every attempt is in flight");

    signal(&hookd, "TERM");
    // Once the signal is taken, readiness fails at once...
    let stopping = harness::wait_until(Duration::from_secs(2), || async {
        let res = awc::Client::default()
            .get(format!("http://{listen}/readyz"))
            .send()
            .await;
        matches!(res, Ok(r) if r.status().as_u16() == 503).then_some(())
    })
    .await;
    assert!(stopping.is_some(), "readyz says 503 while stopping");
    // ...and while the attempts finish, producers are told to go elsewhere.
    let one = format!(
        r#"{{"type":"balance.updated","partner_id":"{partner}","data":{{"customer_id":"cus_204","currency":"USD","balance":"1.00"}}}}"#
    );
    let (status, retry_after) = ingest(&listen, &key, one).await;
    assert_eq!(status, 503, "ingest while stopping");
    assert!(retry_after.is_some(), "a 503 says when to retry");

    let status = hookd.exited(Duration::from_secs(20)).await;
    assert_clean_exit(&mut hookd, status, "SIGTERM with attempts in flight");
    assert_eq!(receiver.count(), IN_FLIGHT, "nothing was sent twice");
    let app_db = hookd::store::connect(
        &hookd::config::Config::load(None, harness::test_env(&url, &[]))
            .expect("a valid configuration")
            .database,
    )
    .await
    .expect("the database after the stop");
    let count = |sql: &'static str| {
        let db = app_db.clone();
        async move {
            use sea_orm::ConnectionTrait;
            let backend = db.get_database_backend();
            let row = db
                .query_one_raw(sea_orm::Statement::from_string(backend, sql))
                .await
                .expect("the count runs")
                .expect("a row");
            row.try_get::<i64>("", "n").expect("an n column")
        }
    };
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM delivery WHERE state = 'delivered' AND attempt_count = 1")
            .await,
        IN_FLIGHT as i64,
        "every attempt that started was recorded as delivered:\n{}",
        hookd.stderr()
    );
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM attempt").await,
        IN_FLIGHT as i64,
        "each attempt recorded once"
    );
    app_db.close().await.expect("closed");
}

#[hookd_test_macros::test]
async fn a_second_serve_on_one_sqlite_file_is_refused_and_says_why() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let work = tempfile::tempdir().expect("a working folder");
    let http = awc::Client::default();
    let (first_listen, env) = serve_env(&url, &[]);
    let mut first = Hookd::start(&["serve"], &env, work.path(), "first");
    first
        .wait_healthy(
            &http,
            &format!("http://{first_listen}"),
            Duration::from_secs(30),
        )
        .await;

    let (_, env2) = serve_env(&url, &[]);
    let mut second = Hookd::start(&["serve"], &env2, work.path(), "second");
    let log = gives_up_with_status_two(&mut second, "a second serve").await;
    assert!(
        log.contains("already running on this SQLite database") && log.contains("PostgreSQL"),
        "the refusal says why and what to do:\n{log}"
    );

    // One-shot commands still work beside the running serve.
    let mut cli = Hookd::start(
        &["partner", "create", "--name", "Beside"],
        &env,
        work.path(),
        "cli",
    );
    let status = cli
        .exited(Duration::from_secs(20))
        .await
        .expect("the CLI ends");
    assert_eq!(status.code(), Some(0), "{}", cli.stderr());

    signal(&first, "TERM");
    let status = first.exited(Duration::from_secs(10)).await;
    assert_clean_exit(&mut first, status, "the first serve");
}
