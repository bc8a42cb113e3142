//! A paused process: `hookd` is stopped (SIGSTOP) while the receiver is
//! answering, for longer than the request timeout, and continued. The
//! answer, which arrived while it slept, is what it records: a delivered
//! attempt with status 200, not a timeout, and the event is not sent again.

use std::time::{Duration, Instant};

use sea_orm::ConnectionTrait as _;

use crate::harness::{
    self, Backend, SLOW,
    process::{Hookd, prepare_store, signal},
    receiver::{Receiver, Reply},
    serve::serve_env,
    wait_until,
};
use crate::hostile::{exchange, ingest_request};

/// How long the receiver takes to answer: the pause begins within it.
const ANSWER_AFTER: Duration = Duration::from_millis(500);
/// Longer than the request timeout (2 s in the tests' configuration).
const PAUSE: Duration = Duration::from_secs(4);

#[hookd_test_macros::test]
async fn an_answer_received_while_paused_is_recorded_as_received_not_as_a_timeout() {
    let (url, _db) = harness::database(Backend::Sqlite).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Delay(ANSWER_AFTER, Box::new(Reply::status(200))));
    let (partner, service_key) = prepare_store(&url, &receiver.url(), 1).await;
    let work = tempfile::tempdir().unwrap();
    let (listen, env) = serve_env(&url, &[("HOOKD_DELIVERY__REQUEST_TIMEOUT", "2s")]);
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "paused");
    let http = awc::Client::default();
    hookd
        .wait_healthy(&http, &format!("http://{listen}"), SLOW)
        .await;

    let ingest = ingest_request(&partner, &service_key);
    let server = listen.parse().unwrap();
    let answer = exchange(server, ingest.as_bytes(), SLOW).await;
    assert_eq!(answer.map(|a| a.status), Some(201));
    let arrived = wait_until(SLOW, || async {
        (receiver.count() == 1).then(Instant::now)
    })
    .await
    .expect("the delivery reaches the receiver");
    signal(&hookd, "STOP");
    let stopped_within = arrived.elapsed();
    actix_rt::time::sleep(PAUSE).await;
    signal(&hookd, "CONT");

    let db = sea_orm::Database::connect(&url).await.unwrap();
    let backend = db.get_database_backend();
    let recorded = wait_until(SLOW, || async {
        let row = db
            .query_one_raw(sea_orm::Statement::from_string(
                backend,
                "SELECT status_code, error_category, latency_ms FROM attempt",
            ))
            .await
            .ok()??;
        let status: Option<i32> = row.try_get("", "status_code").ok()?;
        let category: Option<String> = row.try_get("", "error_category").ok()?;
        let latency: Option<i32> = row.try_get("", "latency_ms").ok()?;
        Some((status, category, latency))
    })
    .await
    .expect("the attempt is recorded once hookd wakes");
    assert!(
        stopped_within < ANSWER_AFTER,
        "the pause began before the answer was sent ({stopped_within:?}), or this tests nothing"
    );
    assert_eq!(
        (recorded.0, recorded.1.as_deref()),
        (Some(200), None),
        "the answer that arrived during the pause is recorded, not a timeout: {recorded:?}\n{}",
        hookd.stderr()
    );
    let state = db
        .query_one_raw(sea_orm::Statement::from_string(
            backend,
            "SELECT state FROM delivery",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get::<String>("", "state")
        .unwrap();
    assert_eq!(state, "delivered");
    actix_rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 1, "the event was not sent again");
}
