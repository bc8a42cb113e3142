//! PostgreSQL goes away while hookd runs (docs/operating.md, "When the database is
//! unreachable"): ingest and `/readyz` answer 503 at once, `/healthz` stays
//! 200 (the process is alive: an orchestrator must not restart it), and once
//! the database is back every event is delivered and recorded.

use std::time::{Duration, Instant};

use sea_orm::ConnectionTrait;

use super::received_ids;
use crate::harness::{
    self, Backend, READY_ANSWER_WITHIN, SLOW, TestApp, WAIT, answer,
    process::event_batch,
    receiver::{Receiver, Reply},
    sets::assert_none_missing,
};

/// `GET <path>` on the app, bounded by `WAIT`: status, body and headers, and
/// how long the answer took.
async fn probe(app: &TestApp, path: &str) -> (harness::ApiAnswer, Duration) {
    let asked = Instant::now();
    let answer = actix_rt::time::timeout(WAIT, app.request("GET", path, "", None))
        .await
        .unwrap_or_else(|_| panic!("{path} did not answer within {WAIT:?}"));
    (answer, asked.elapsed())
}

/// Closes the app's database to connections and ends the ones open; returns
/// the admin connection that opens it again.
pub(crate) async fn close_database(app: &TestApp) -> (sea_orm::DatabaseConnection, String) {
    let url = app.running.shared.config.database.url.clone();
    let (server, name) = url
        .rsplit_once('/')
        .expect("a database URL with a database name");
    let admin = sea_orm::Database::connect(format!("{server}/postgres"))
        .await
        .expect("an admin connection to the cluster");
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS false"
        ))
        .await
        .expect("the database can be closed to connections");
    admin
        .execute_unprepared(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ))
        .await
        .expect("hookd's connections can be terminated");
    (admin, name.to_string())
}

#[hookd_test_macros::test]
async fn a_database_outage_while_running_loses_no_work() {
    if harness::skip_postgres() {
        return;
    }
    let app = harness::spawn_app(Backend::Postgres).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let ingest = |body: String| {
        let app = &app;
        async move { app.post_events_with(Some(&app.service_key), &body).await }
    };

    // Work flows, and hookd is alive and ready.
    let (first, body) = event_batch(&app.partner_id, 2);
    let (status, answer, _) = ingest(body).await;
    assert_eq!(status, 201, "the first events should be accepted: {answer}");
    for id in &first {
        app.wait_for_state(id, &endpoint, "delivered", WAIT).await;
    }
    for path in ["/healthz", "/readyz"] {
        let ((status, body, _), _) = probe(&app, path).await;
        assert_eq!(status, 200, "{path} before the outage: {body}");
    }

    // Slow deliveries are in flight when the database goes away.
    receiver.set_default(Reply::Delay(
        Duration::from_millis(500),
        Box::new(Reply::status(200)),
    ));
    let (slow, body) = event_batch(&app.partner_id, 24);
    let (status, answer, _) = ingest(body).await;
    assert_eq!(status, 201, "the slow batch should be accepted: {answer}");
    receiver
        .wait_for(first.len() + 1, WAIT)
        .await
        .expect("the slow deliveries should start");
    let outage_start = Instant::now();
    let (admin, name) = close_database(&app).await;

    // While it is down, ingest says so at once.
    let (_, body) = event_batch(&app.partner_id, 1);
    let asked = Instant::now();
    let (status, answer, content_type) = actix_rt::time::timeout(WAIT, ingest(body))
        .await
        .expect("ingest should answer while the database is down, not hang");
    assert!(
        asked.elapsed() < Duration::from_millis(2500),
        "ingest answered after {:?}, not within about 2 s",
        asked.elapsed()
    );
    assert_eq!(status, 503, "ingest without a database: {answer}");
    assert_eq!(
        answer["type"], "https://hookd.dev/problems/database-unavailable",
        "{answer}"
    );
    assert!(
        content_type.starts_with("application/problem+json"),
        "the outage answer should be problem+json, got `{content_type}`: {answer}"
    );

    // Readiness says so within a second; liveness does not.
    let ((status, body, headers), took) = probe(&app, "/readyz").await;
    assert_eq!(status, 503, "not ready without a database: {body}");
    assert!(
        answer::header(&headers, "retry-after").is_some(),
        "a 503 from /readyz says when to ask again"
    );
    assert!(
        took < READY_ANSWER_WITHIN,
        "readyz answered after {took:?}, not within {READY_ANSWER_WITHIN:?}"
    );
    let ((status, body, _), _) = probe(&app, "/healthz").await;
    assert_eq!(
        status, 200,
        "the process is alive without its database: {body}"
    );

    // About four seconds of outage, then the database comes back.
    actix_rt::time::sleep(Duration::from_secs(4).saturating_sub(outage_start.elapsed())).await;
    let ((status, body, _), _) = probe(&app, "/readyz").await;
    assert_eq!(
        status, 503,
        "still not ready while the database is down: {body}"
    );
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS true"
        ))
        .await
        .expect("the database can be opened again");
    let outage_end = Instant::now();
    let answered_during_outage = receiver
        .received()
        .iter()
        .filter(|r| {
            let answered = r.at + Duration::from_millis(500);
            answered > outage_start && answered < outage_end
        })
        .count();
    assert!(
        answered_during_outage > 0,
        "the scenario needs attempts that finish while the database is down, but none did"
    );

    // Ready again, and ingest works again.
    let ready = harness::wait_until(SLOW, || async {
        let ((status, _, _), _) = probe(&app, "/readyz").await;
        (status == 200).then_some(())
    })
    .await;
    assert!(
        ready.is_some(),
        "hookd should be ready within {SLOW:?} of the database coming back"
    );
    let ((status, body, _), _) = probe(&app, "/healthz").await;
    assert_eq!(status, 200, "alive after the outage: {body}");
    let (after, body) = event_batch(&app.partner_id, 1);
    let (status, answer, _) = ingest(body).await;
    assert_eq!(
        status, 201,
        "ingest should work again once the database is back: {answer}"
    );

    // Nothing was lost: every event is delivered, and recorded as such.
    let published: Vec<&String> = first.iter().chain(&slow).chain(&after).collect();
    for id in &published {
        app.wait_for_state(id, &endpoint, "delivered", SLOW).await;
    }
    let got = received_ids(&receiver);
    assert_none_missing(
        published.iter().map(|id| id.as_str()),
        |id| got.contains_key(id),
        "events recorded as delivered never reached the receiver",
    );
    harness::quiesce().await;
}
