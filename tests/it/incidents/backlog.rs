//! A backlog older than `incidents.backlog_age` (15 min, on the injected
//! clock): deliveries held behind a slow one on an endpoint with a
//! concurrency of 1, then the clock moves 20 minutes on.

use std::time::Duration;

use hookd::domain::{clock::Clock, event::format_time};
use hookd_test_macros::both_backends;
use serde_json::json;

use super::{Channel, HEAR_WITHIN, api_only_hookd, incidents_of, listed, sweeping_hookd};
use crate::harness::{
    self, Backend, SLOW, TestApp, WAIT, another_instance,
    receiver::{Receiver, Reply},
    wait_until,
};

/// Events published for the backlog.
const EVENTS: usize = 10;

/// A partner's slow endpoint (each answer takes half a second, one at a
/// time), `EVENTS` events for it: one in flight, a few claimed behind it,
/// the rest waiting; then the clock 20 minutes on. Returns the receiver
/// and when the events were due.
async fn a_backlog(app: &TestApp) -> (Receiver, i64) {
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Delay(
        Duration::from_millis(500),
        Box::new(Reply::status(200)),
    ));
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 1)
        .await;
    let due = app.clock.now_ms();
    for n in 0..EVENTS {
        app.publish("a.b", json!({"n": n})).await;
    }
    wait_until(WAIT, || async { (receiver.count() >= 1).then_some(()) })
        .await
        .expect("the first event is in flight");
    let waiting = app
        .count(&format!(
            "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' AND state <> 'delivered'"
        ))
        .await;
    assert!(
        waiting >= 5,
        "most deliveries wait behind the slow one: {waiting}"
    );
    app.advance(Duration::from_secs(20 * 60));
    (receiver, due)
}

/// Each delivery's state and each attempt, to tell why a count is off.
async fn what_was_delivered(app: &TestApp) -> String {
    crate::harness::rows::lines(
        app,
        &[
            "SELECT id || ' ' || state || ' attempts ' || attempt_count || ' next ' || next_attempt_at \
             || ' created ' || created_at || ' updated ' || updated_at || ' claim ' || claim_seq AS x \
             FROM delivery ORDER BY id",
            "SELECT id || ' ' || status || ' failing ' || COALESCE(failing_since, -1) || ' circuit ' \
             || COALESCE(circuit_open_until, -1) || ' limit ' || COALESCE(rate_limit, -1) AS x FROM endpoint",
            "SELECT delivery_id || ' attempt ' || attempt_no || ' at ' || started_at || ' status ' \
             || COALESCE(status_code, -1) AS x FROM attempt ORDER BY delivery_id",
        ],
    )
    .await
}

#[both_backends]
async fn a_backlog_older_than_the_threshold_tells_its_partner_once_and_resolves_with_the_count(
    backend: Backend,
) {
    let app = sweeping_hookd(backend, &[]).await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let (other, other_key) = app.another_partner("Globex").await;
    let other_channel = Channel::of(&app, &other_key).await;
    let prompt = Receiver::start().await;
    app.endpoint_for(&other, &prompt.url(), &["a.b"], 8).await;
    let (status, _) = app
        .post_events(&json!({"type": "a.b", "partner_id": other, "data": {}}))
        .await;
    assert_eq!(status, 201);
    wait_until(WAIT, || async { (prompt.count() == 1).then_some(()) })
        .await
        .expect("the other partner's event is delivered at once");

    let (receiver, due) = a_backlog(&app).await;

    let opened = channel.hears("hookd.incident.opened", HEAR_WITHIN).await;
    assert_eq!(opened["cause"], "backlog", "{opened}");
    assert_eq!(
        opened["started_at"],
        format_time(due),
        "the incident starts when the oldest waiting delivery was due: {opened}"
    );
    receiver
        .wait_for(EVENTS, SLOW)
        .await
        .expect("the backlog drains");
    let resolved = channel.hears("hookd.incident.resolved", HEAR_WITHIN).await;
    assert_eq!(resolved["incident_id"], opened["incident_id"]);
    assert_eq!(resolved["started_at"], format_time(due));
    assert_eq!(
        resolved["resolved_at"],
        format_time(app.clock.now_ms()),
        "resolved on the clock's time once it drained: {resolved}"
    );
    assert_eq!(
        resolved["delayed_events"],
        EVENTS,
        "every event waited inside the range: {resolved}\n{}",
        what_was_delivered(&app).await
    );

    assert_eq!(channel.heard("hookd.incident.opened").len(), 1, "told once");
    assert_eq!(incidents_of(&app, &app.partner_id).await, 1);
    assert_eq!(
        incidents_of(&app, &other).await,
        0,
        "the other partner was on time"
    );
    assert!(
        other_channel.heard("hookd.incident.opened").is_empty(),
        "an unaffected partner hears nothing"
    );
    let mine = listed(&app, &key).await;
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["state"], "resolved");
    assert_eq!(mine[0]["delayed_events"], EVENTS);
    assert!(listed(&app, &other_key).await.is_empty());
}

#[hookd_test_macros::test]
async fn two_instances_on_one_database_open_one_incident_for_a_backlog() {
    if harness::skip_postgres() {
        return;
    }
    let app = sweeping_hookd(Backend::Postgres, &[]).await;
    let _second = another_instance(
        &app,
        &[
            ("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms"),
            ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "8s"),
            ("HOOKD_DELIVERY__LEASE", "20s"),
        ],
    )
    .await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let (receiver, _) = a_backlog(&app).await;
    channel.hears("hookd.incident.opened", HEAR_WITHIN).await;
    // Both instances sweep every 50 ms while the backlog lasts.
    receiver
        .wait_for(EVENTS, SLOW)
        .await
        .expect("the backlog drains");
    channel.hears("hookd.incident.resolved", HEAR_WITHIN).await;
    let backlog = format!(
        "SELECT COUNT(*) AS n FROM incident WHERE partner_id = '{}' AND cause = 'backlog'",
        app.partner_id
    );
    assert_eq!(app.count(&backlog).await, 1, "one backlog incident");
    let opened = channel.heard("hookd.incident.opened");
    let backlog_opened = opened.iter().filter(|o| o["cause"] == "backlog").count();
    assert_eq!(backlog_opened, 1, "{opened:?}");
    let resolved = channel.heard("hookd.incident.resolved");
    let backlog_resolved = resolved.iter().filter(|o| o["cause"] == "backlog").count();
    assert_eq!(backlog_resolved, 1, "{resolved:?}");
    harness::quiesce().await;
}

#[both_backends]
async fn two_openings_at_once_make_one_incident(backend: Backend) {
    use hookd::{
        domain::incident::{Cause, OpenedBy},
        store::incidents::{Opening, open_now},
    };
    // The detector stays out: it would resolve this backlog incident (none
    // of the partner's deliveries is overdue) between the two openings.
    let app = sweeping_hookd(backend, &[("HOOKD_INCIDENTS__ENABLED", "false")]).await;
    let opening = Opening {
        partner_id: &app.partner_id,
        cause: Cause::Backlog,
        message: "late",
        started_at: 0,
        opened_by: OpenedBy::Detector,
    };
    let now = app.clock.now_ms();
    let (a, b) = tokio::join!(
        open_now(app.db(), &opening, now),
        open_now(app.db(), &opening, now)
    );
    let opened = [a, b]
        .into_iter()
        .map(|r| r.expect("opening runs"))
        .filter(Option::is_some)
        .count();
    assert_eq!(opened, 1, "exactly one of the two opened it");
    assert_eq!(incidents_of(&app, &app.partner_id).await, 1);
}

#[both_backends]
async fn a_sweep_that_read_before_a_resolution_does_not_open_the_backlog_again(backend: Backend) {
    use hookd::{
        domain::incident::{Cause, OpenedBy},
        store::incidents::{Opening, open_now, resolve_now},
    };
    // The detector stays out: this test plays two instances' sweeps.
    let app = sweeping_hookd(backend, &[("HOOKD_INCIDENTS__ENABLED", "false")]).await;
    let due = app.clock.now_ms();
    let opening = Opening {
        partner_id: &app.partner_id,
        cause: Cause::Backlog,
        message: "late",
        started_at: due,
        opened_by: OpenedBy::Detector,
    };
    app.advance(Duration::from_secs(20 * 60));
    let now = app.clock.now_ms();
    let first = open_now(app.db(), &opening, now)
        .await
        .expect("opening runs")
        .expect("one instance opens it");
    resolve_now(app.db(), &first.id, now)
        .await
        .expect("resolving runs")
        .expect("another resolves it once the backlog drained");

    let stale = open_now(app.db(), &opening, now)
        .await
        .expect("opening runs");
    assert!(
        stale.is_none(),
        "an instance whose read came before the resolution opens nothing: {stale:?}"
    );
    assert_eq!(incidents_of(&app, &app.partner_id).await, 1);

    let later = Opening {
        started_at: now,
        ..opening.clone()
    };
    let next = open_now(app.db(), &later, now).await.expect("opening runs");
    assert!(
        next.is_some(),
        "a backlog from the end of the last one on is a new incident"
    );
    assert_eq!(incidents_of(&app, &app.partner_id).await, 2);
}

/// PostgreSQL only: an instance that does not deliver needs it, and here
/// the test plays the actor that claimed the deliveries.
#[hookd_test_macros::test]
async fn deliveries_handed_back_unsent_keep_the_time_they_were_due() {
    use hookd::store::{claims, incident_watch};
    use sea_orm::ConnectionTrait;
    if harness::skip_postgres() {
        return;
    }
    let app = api_only_hookd().await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 1)
        .await;
    let due = app.clock.now_ms();
    for n in 0..3 {
        app.publish("a.b", json!({"n": n})).await;
    }
    app.advance(Duration::from_secs(20 * 60));
    let now = app.clock.now_ms();
    let db = app.db();
    let claim = |seq: i64| {
        format!(
            "UPDATE delivery SET state = 'delivering', claim_seq = {seq}, next_attempt_at = {}, \
             updated_at = {now} WHERE endpoint_id = '{endpoint}'",
            now + 20_000
        )
    };
    let due_times = || async {
        app.count(&format!(
            "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' \
             AND state = 'pending' AND next_attempt_at = {due}"
        ))
        .await
    };

    // Claimed twenty minutes late, then handed back unsent (their lease
    // ran out in the actor's queue behind a slow receiver).
    db.execute_unprepared(&claim(7)).await.expect("claimed");
    claims::release(db, &claimed(&app, &endpoint, 7).await, now, now)
        .await
        .expect("handed back");
    assert_eq!(due_times().await, 3, "each is due when it was before");
    let overdue = incident_watch::overdue(db, now, now)
        .await
        .expect("the watch reads");
    assert_eq!(
        overdue.get(&app.partner_id),
        Some(&due),
        "the backlog keeps its age: {overdue:?}"
    );

    // Handed back for a circuit's time, they wait for it.
    db.execute_unprepared(&claim(8)).await.expect("claimed");
    claims::release(db, &claimed(&app, &endpoint, 8).await, now + 60_000, now)
        .await
        .expect("handed back");
    let later = app
        .count(&format!(
            "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' \
             AND state = 'pending' AND next_attempt_at = {}",
            now + 60_000
        ))
        .await;
    assert_eq!(later, 3, "due when the circuit lets them go");
}

/// The endpoint's deliveries, as claims numbered `seq`.
async fn claimed(app: &TestApp, endpoint: &str, seq: i64) -> Vec<(String, i64)> {
    use sea_orm::{ConnectionTrait, Statement};
    let db = app.db();
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            format!("SELECT id FROM delivery WHERE endpoint_id = '{endpoint}' ORDER BY id"),
        ))
        .await
        .expect("the store answers");
    rows.iter()
        .map(|r| (r.try_get::<String>("", "id").expect("an id"), seq))
        .collect()
}
