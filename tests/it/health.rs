//! Endpoint health on the manual clock: a failing endpoint is warned after an
//! hour and disabled after five days even when no attempt runs any more, and
//! recovers when it succeeds again (a later failure starting a new period);
//! each announced once to the partner's other endpoint, however many sweeps
//! (and instances) look.

use std::time::Duration;

use hookd::{
    domain::{clock::Clock as _, event::format_time},
    store::endpoints::{self, Endpoint, EndpointStatus},
};
use sea_orm::ConnectionTrait as _;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp, another_instance,
    outcome::assert_mentions,
    receiver::{Receiver, Reply},
    spawn_app_with, stays_quiet, wait_until,
};
use hookd_test_macros::both_backends;

use crate::harness::{QUIET, WAIT};
const MINUTE: u64 = 60;
const HOUR: u64 = 3600;
const DAY: u64 = 86_400;
/// The real thresholds (1 h, 5 d) and schedule, without jitter, a circuit
/// that stays closed, and a health sweep every 50 ms (wall time).
const SWEEPING: [(&str, &str); 3] = [
    ("HOOKD_DELIVERY__JITTER", "0"),
    ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "100"),
    ("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms"),
];

/// hookd sweeping, an endpoint whose receiver answers 500, and the
/// partner's other endpoint listening for operational events.
struct Scene {
    app: TestApp,
    receiver: Receiver,
    id: String,
    watch: Receiver,
}

async fn a_failing_endpoint_and_its_partner_watching(backend: Backend) -> Scene {
    let app = spawn_app_with(backend, &SWEEPING).await;
    let (receiver, id) = failing_endpoint(&app).await;
    let watch = partner_watching(&app).await;
    Scene {
        app,
        receiver,
        id,
        watch,
    }
}

/// A receiver that answers 500, registered for `a.b` events: (receiver, endpoint id).
async fn failing_endpoint(app: &TestApp) -> (Receiver, String) {
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(500));
    let (id, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 8)
        .await;
    (receiver, id)
}

/// The partner's other endpoint, subscribed to operational events: what the
/// partner hears.
async fn partner_watching(app: &TestApp) -> Receiver {
    let watch = Receiver::start().await;
    app.endpoint_for(&app.partner_id, &watch.url(), &["endpoint.*"], 8)
        .await;
    watch
}

/// The operational events of `event_type` the watching endpoint received.
fn heard(watch: &Receiver, event_type: &str) -> Vec<Value> {
    watch
        .received()
        .iter()
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .filter(|e| e["type"] == event_type)
        .collect()
}

/// Asserts that the watch heard `event_type` exactly once; `why` says what
/// that shows.
fn assert_heard_once(watch: &Receiver, event_type: &str, why: &str) {
    let events = heard(watch, event_type);
    assert_eq!(events.len(), 1, "{why}: {events:?}");
}

/// Waits until the watching endpoint received `n` events of `event_type`.
async fn hears(watch: &Receiver, event_type: &str, n: usize) -> Vec<Value> {
    wait_until(WAIT, || async {
        let got = heard(watch, event_type);
        (got.len() >= n).then_some(got)
    })
    .await
    .unwrap_or_else(|| panic!("the partner did not hear {n} `{event_type}` within {WAIT:?}"))
}

/// How many events of `event_type` are in the outbox.
async fn announced(app: &TestApp, event_type: &str) -> i64 {
    app.count(&format!(
        "SELECT COUNT(*) AS n FROM outbox_event WHERE type = '{event_type}'"
    ))
    .await
}

async fn endpoint(app: &TestApp, id: &str) -> Endpoint {
    endpoints::find_for_delivery(app.db(), id)
        .await
        .expect("the endpoint query runs")
        .expect("the endpoint exists")
}

/// Asserts that `n` events of `event_type` are in the outbox, and stay `n`
/// while several sweeps (50 ms apart) and deliveries run: `why` it is so.
async fn stays_announced(app: &TestApp, event_type: &str, n: i64, why: &str) {
    stays_quiet(QUIET, || async {
        let got = announced(app, event_type).await;
        (got != n).then(|| format!("{got} `{event_type}` were announced, not {n}: {why}"))
    })
    .await;
}

/// Checks that `event_type` stays announced `before` times (`why`), then
/// that once the clock moves `secs` on the partner hears one more: all the
/// partner heard of it.
async fn heard_only_after(
    app: &TestApp,
    watch: &Receiver,
    event_type: &str,
    before: i64,
    why: &str,
    secs: u64,
) -> Vec<Value> {
    stays_announced(app, event_type, before, why).await;
    advance(app, secs);
    hears(watch, event_type, before as usize + 1).await
}

fn advance(app: &TestApp, secs: u64) {
    app.advance(Duration::from_secs(secs));
}

#[both_backends]
async fn a_failing_endpoint_is_warned_once_after_an_hour(backend: Backend) {
    let Scene { app, id, watch, .. } = a_failing_endpoint_and_its_partner_watching(backend).await;
    // On PostgreSQL a second instance sweeps the same database too.
    let _second = match backend {
        Backend::Postgres => Some(another_instance(&app, &SWEEPING).await),
        Backend::Sqlite => None,
    };
    let started_failing = app.clock.now_ms();
    let event = app.publish("a.b", json!({})).await;
    app.attempts_when(&event, &id, 1).await;
    assert_eq!(
        endpoint(&app, &id).await.failing_since,
        Some(started_failing),
        "the first failure starts the failing period"
    );

    // The 5 s retry runs just before the hour is up: too early to warn.
    advance(&app, HOUR - 1);
    app.attempts_when(&event, &id, 2).await;

    // The next retry is five minutes away: only the sweep can warn now.
    let warning = heard_only_after(
        &app,
        &watch,
        "endpoint.failing",
        0,
        "no warning before an hour of failing",
        2,
    )
    .await;
    assert_eq!(warning[0]["data"]["endpoint_id"], id.as_str());
    assert_eq!(
        warning[0]["data"]["failing_since"],
        format_time(started_failing).as_str()
    );

    // Further sweeps and a further failure warn no more.
    advance(&app, 5 * MINUTE);
    app.attempts_when(&event, &id, 3).await;
    stays_announced(&app, "endpoint.failing", 1, "the warning is announced once").await;
    assert_heard_once(
        &watch,
        "endpoint.failing",
        "the partner hears the warning once",
    );
    assert_eq!(endpoint(&app, &id).await.status, EndpointStatus::Active);
}

#[both_backends]
async fn a_failing_endpoint_is_disabled_after_five_days_although_its_last_delivery_died_on_day_three(
    backend: Backend,
) {
    let Scene {
        app,
        receiver: failing,
        id,
        watch,
    } = a_failing_endpoint_and_its_partner_watching(backend).await;
    let started_failing = app.clock.now_ms();
    let event = app.publish("a.b", json!({})).await;
    let schedule = [5, 300, 1800, 7200, 18000, 36000, 43200, 50400, 57600];
    for (i, step) in schedule.iter().enumerate() {
        app.attempts_when(&event, &id, i + 1).await;
        advance(&app, *step);
    }
    app.wait_for_state(&event, &id, "dead", WAIT).await;
    let dead_after: u64 = schedule.iter().sum();
    assert!(
        (2 * DAY..3 * DAY).contains(&dead_after),
        "the delivery dies on day three"
    );

    // Nothing is attempted any more; a minute before five days it is still active.
    advance(&app, 5 * DAY - dead_after - MINUTE);
    stays_quiet(QUIET, || async {
        let attempts = failing.count();
        let status = endpoint(&app, &id).await.status;
        if attempts != 10 {
            Some(format!("attempt {attempts} ran after the last one"))
        } else if status != EndpointStatus::Active {
            Some(format!("the endpoint became {status:?} before five days"))
        } else {
            None
        }
    })
    .await;

    let notice = heard_only_after(
        &app,
        &watch,
        "endpoint.disabled",
        0,
        "not disabled before five days",
        2 * MINUTE,
    )
    .await;
    assert_eq!(notice[0]["data"]["endpoint_id"], id.as_str());
    assert_eq!(
        notice[0]["data"]["failing_since"],
        format_time(started_failing).as_str()
    );
    let disabled = endpoint(&app, &id).await;
    assert_eq!(disabled.status, EndpointStatus::Disabled);
    assert_mentions(
        disabled.disabled_reason.as_deref(),
        "disable_after",
        "the reason names the threshold",
    );

    stays_announced(&app, "endpoint.disabled", 1, "disabling is announced once").await;
    assert_eq!(heard(&watch, "endpoint.disabled").len(), 1);
    assert_heard_once(
        &watch,
        "endpoint.failing",
        "the owner was warned once on the way",
    );
}

/// A failing endpoint warned after an hour, whose receiver then answers 200
/// and whose delivery succeeds: the scene, once the recovery is heard.
async fn warned_then_recovered(backend: Backend) -> Scene {
    let scene = a_failing_endpoint_and_its_partner_watching(backend).await;
    let Scene {
        app,
        receiver,
        id,
        watch,
    } = &scene;
    let first = app.publish("a.b", json!({})).await;
    app.attempts_when(&first, id, 1).await;
    advance(app, HOUR + 1);
    hears(watch, "endpoint.failing", 1).await;
    // The 5 s retry has run (and failed): the next is due 5 min after it.
    app.attempts_when(&first, id, 2).await;

    receiver.set_default(Reply::status(200));
    advance(app, 5 * MINUTE);
    app.wait_for_state(&first, id, "delivered", WAIT).await;
    hears(watch, "endpoint.recovered", 1).await;
    scene
}

#[both_backends]
async fn a_warned_endpoint_that_succeeds_again_is_announced_recovered_once(backend: Backend) {
    let Scene { app, id, watch, .. } = warned_then_recovered(backend).await;
    let recovered = heard(&watch, "endpoint.recovered");
    assert_eq!(recovered[0]["data"]["endpoint_id"], id.as_str());
    assert_eq!(
        endpoint(&app, &id).await.failing_since,
        None,
        "the failing period is over"
    );
    stays_announced(&app, "endpoint.recovered", 1, "recovery is announced once").await;
    assert_heard_once(
        &watch,
        "endpoint.recovered",
        "the partner hears of the recovery once",
    );
}

#[both_backends]
async fn a_failure_after_recovery_starts_a_new_period_warned_an_hour_after_it(backend: Backend) {
    let Scene {
        app,
        receiver,
        id,
        watch,
    } = warned_then_recovered(backend).await;
    receiver.set_default(Reply::status(500));
    let started_again = app.clock.now_ms();
    let second = app.publish("a.b", json!({})).await;
    app.attempts_when(&second, &id, 1).await;
    assert_eq!(endpoint(&app, &id).await.failing_since, Some(started_again));
    advance(&app, HOUR - MINUTE);
    app.attempts_when(&second, &id, 2).await;
    let warnings = heard_only_after(
        &app,
        &watch,
        "endpoint.failing",
        1,
        "the new period is not warned about before its hour",
        2 * MINUTE,
    )
    .await;
    assert_eq!(
        warnings[1]["data"]["failing_since"],
        format_time(started_again).as_str(),
        "the second warning is about the new period"
    );
    stays_announced(&app, "endpoint.failing", 2, "the new period is warned once").await;
}

/// PostgreSQL only (SQLite takes one running hookd): an instance sweeps as it
/// starts, not only at its first tick.
#[hookd_test_macros::test]
async fn an_instance_sweeps_once_as_it_starts_on_postgres() {
    if crate::harness::skip_postgres() {
        return;
    }
    let hourly = [("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "1h")];
    let app = spawn_app_with(Backend::Postgres, &hourly).await;
    let (_failing, id) = failing_endpoint(&app).await;
    let swept = wait_until(WAIT, || async {
        (app.running.shared.metrics.health_sweeps.get() >= 1).then_some(())
    })
    .await;
    assert!(swept.is_some(), "the first instance swept as it started");
    let long_ago = app.clock.now_ms() - (HOUR as i64 + 1) * 1000;
    app.db()
        .execute_unprepared(&format!(
            "UPDATE endpoint SET failing_since = {long_ago} WHERE id = '{id}'"
        ))
        .await
        .expect("the endpoint has been failing for over an hour");
    stays_announced(
        &app,
        "endpoint.failing",
        0,
        "the first instance sweeps again only in an hour",
    )
    .await;

    let _second = another_instance(&app, &hourly).await;
    let warned = wait_until(WAIT, || async {
        (announced(&app, "endpoint.failing").await == 1).then_some(())
    })
    .await;
    assert!(
        warned.is_some(),
        "the new instance's first sweep warns at once"
    );
    crate::harness::quiesce().await;
}
