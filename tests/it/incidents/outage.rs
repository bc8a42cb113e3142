//! A real outage of PostgreSQL (closed to connections, hookd's connections
//! ended) longer than `incidents.database_down`, on the injected clock:
//! once the database is back the partner with deliveries due meanwhile is
//! told, from when the outage began, and told again when they caught up.

use std::time::Duration;

use hookd::domain::{clock::Clock, event::format_time};
use sea_orm::ConnectionTrait;
use serde_json::json;

use super::{Channel, incidents_of, sweeping_hookd};
use crate::{
    crash::outage::close_database,
    harness::{
        self, Backend, SLOW, WAIT,
        receiver::{Receiver, Reply},
        wait_until,
    },
};

#[hookd_test_macros::test]
async fn a_database_outage_longer_than_the_threshold_is_told_from_its_true_start() {
    if harness::skip_postgres() {
        return;
    }
    let app = sweeping_hookd(Backend::Postgres, &[]).await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Delay(
        Duration::from_millis(500),
        Box::new(Reply::status(200)),
    ));
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 1)
        .await;
    for n in 0..10 {
        app.publish("a.b", json!({"n": n})).await;
    }
    wait_until(WAIT, || async { (receiver.count() >= 1).then_some(()) })
        .await
        .expect("the first event is in flight");

    let went_away = app.clock.now_ms();
    let (admin, name) = close_database(&app).await;
    // Sweeps every 50 ms find it gone; then three minutes pass.
    actix_rt::time::sleep(Duration::from_secs(2)).await;
    app.advance(Duration::from_secs(3 * 60));
    actix_rt::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        channel.heard("hookd.incident.opened").len(),
        0,
        "nothing is told while the database is down"
    );
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS true"
        ))
        .await
        .expect("the database can be opened again");

    let told = wait_until(SLOW, || async {
        channel.heard("hookd.incident.opened").into_iter().next()
    })
    .await;
    let Some(opened) = told else {
        panic!(
            "no `hookd.incident.opened` arrived within {SLOW:?}\n{}",
            incidents_and_notices(&app).await
        );
    };
    assert_eq!(opened["cause"], "database", "{opened}");
    assert_eq!(
        opened["started_at"],
        format_time(went_away),
        "the incident starts when the database went away, not when it came back: {opened}"
    );
    let resolved = channel.hears("hookd.incident.resolved", SLOW).await;
    assert_eq!(resolved["incident_id"], opened["incident_id"]);
    assert_eq!(resolved["started_at"], format_time(went_away));
    assert!(
        resolved["delayed_events"].as_i64().is_some_and(|n| n >= 2),
        "the events held during the outage are counted: {resolved}"
    );
    // Attempts cut by the outage wait out their retry delay, which is not
    // overdue: the incident may end before they run, so time moves on, by
    // steps small enough that nothing turns into a backlog.
    let mut delivered = None;
    for _ in 0..60 {
        let n = app
            .count(&format!(
                "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND state = 'delivered'"
            ))
            .await;
        if n == 10 {
            delivered = Some(n);
            break;
        }
        app.advance(Duration::from_secs(10));
        actix_rt::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(
        delivered,
        Some(10),
        "every event was delivered once it was back"
    );
    assert_eq!(incidents_of(&app, &app.partner_id).await, 1);
    harness::quiesce().await;
}

/// The incidents, and each notice's deliveries, to tell why none was heard.
async fn incidents_and_notices(app: &harness::TestApp) -> String {
    crate::harness::rows::lines(
        app,
        &[
            "SELECT 'incident ' || id || ' ' || cause || ' from ' || started_at \
             || ' resolved ' || COALESCE(resolved_at, -1) AS x FROM incident ORDER BY id",
            "SELECT 'notice ' || o.event_id || ' ' || o.type || ' delivery ' || COALESCE(d.state, 'none') \
             || ' attempts ' || COALESCE(d.attempt_count, -1) AS x FROM outbox_event o \
             LEFT JOIN delivery d ON d.event_id = o.event_id WHERE o.type LIKE 'hookd.%' ORDER BY o.event_id",
        ],
    )
    .await
}
