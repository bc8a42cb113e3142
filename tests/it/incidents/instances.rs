//! No instance delivering: an API-only hookd keeps taking events while the
//! last instance that delivers has stopped; once the delivery pulse has been
//! silent for `incidents.instances_down`, the partner with deliveries
//! waiting gets an `instances` incident from the last beat, and hears of it
//! (opened, then resolved) as soon as an instance delivers again; and an
//! instance that starts into such a silence reports it itself.

use std::time::Duration;

use hookd::domain::{clock::Clock, event::format_time};
use serde_json::json;

use super::{Channel, HEAR_WITHIN, api_only_hookd, incidents_of, listed, sweeping_hookd};
use crate::harness::{self, Backend, WAIT, another_instance, receiver::Receiver, wait_until};

/// A second instance of `role`, sweeping as often as the test's.
async fn instance_of(app: &harness::TestApp, role: &str) -> hookd::app::Running {
    another_instance(
        app,
        &[
            ("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms"),
            ("HOOKD_DELIVERY__JITTER", "0"),
            ("HOOKD_CLUSTER__ROLE", role),
        ],
    )
    .await
}

/// Runs an instance that delivers until it beats the pulse, then stops it
/// gracefully (its leases handed back at once): the pulse's last beat.
async fn delivered_then_stopped(app: &harness::TestApp) -> i64 {
    let delivering = instance_of(app, "all").await;
    let last_beat = wait_until(WAIT, || async {
        hookd::store::pulse::last(app.db()).await.ok().flatten()
    })
    .await
    .expect("a delivering instance beats the pulse");
    delivering.engine.drain(Duration::from_secs(2)).await;
    delivering.server.stop(true).await;
    delivering.wait().await.expect("it stops");
    last_beat
}

#[hookd_test_macros::test]
async fn an_api_only_instance_tells_the_partner_when_nothing_has_delivered_for_the_threshold() {
    if harness::skip_postgres() {
        return;
    }
    let app = sweeping_hookd(Backend::Postgres, &[("HOOKD_CLUSTER__ROLE", "api")]).await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 4)
        .await;

    // An instance delivered, then stopped: the pulse is its last beat.
    let last_beat = delivered_then_stopped(&app).await;

    let event = app.publish("a.b", json!({})).await;
    app.advance(Duration::from_secs(4 * 60));
    actix_rt::time::sleep(Duration::from_millis(500)).await;
    assert!(
        listed(&app, &key).await.is_empty(),
        "4 min of silence is under the 5 min threshold"
    );

    app.advance(Duration::from_secs(2 * 60));
    let open = wait_until(WAIT, || async {
        listed(&app, &key)
            .await
            .into_iter()
            .find(|i| i["state"] == "open")
    })
    .await
    .expect("the api-only instance opens an incident");
    assert_eq!(open["cause"], "instances", "{open}");
    assert_eq!(
        open["started_at"],
        format_time(last_beat),
        "from the last beat: {open}"
    );
    assert_eq!(receiver.count(), 0, "nothing delivered meanwhile");

    // Delivery comes back: the event, the opened notice, then the resolved one.
    let _back = instance_of(&app, "all").await;
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    let opened = channel.hears("hookd.incident.opened", HEAR_WITHIN).await;
    assert_eq!(opened["cause"], "instances", "{opened}");
    let resolved = channel.hears("hookd.incident.resolved", HEAR_WITHIN).await;
    assert_eq!(resolved["cause"], "instances", "{resolved}");
    assert_eq!(resolved["delayed_events"], 1, "{resolved}");
    assert_eq!(
        incidents_of(&app, &app.partner_id).await,
        1,
        "one incident, however many instances"
    );
    assert!(app.clock.now_ms() > last_beat);
    harness::quiesce().await;
}

#[hookd_test_macros::test]
async fn an_instance_that_starts_after_the_threshold_of_silence_tells_the_partner_itself() {
    if harness::skip_postgres() {
        return;
    }
    // The API-only instance looks for nothing: the one that starts tells.
    let app = api_only_hookd().await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 4)
        .await;
    let last_beat = delivered_then_stopped(&app).await;

    let event = app.publish("a.b", json!({})).await;
    app.advance(Duration::from_secs(6 * 60));
    let _back = instance_of(&app, "all").await;
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    let opened = channel.hears("hookd.incident.opened", HEAR_WITHIN).await;
    assert_eq!(
        (opened["cause"].as_str(), opened["started_at"].as_str()),
        (Some("instances"), Some(format_time(last_beat).as_str())),
        "{opened}"
    );
    channel.hears("hookd.incident.resolved", HEAR_WITHIN).await;
    assert_eq!(incidents_of(&app, &app.partner_id).await, 1);
    harness::quiesce().await;
}

/// PostgreSQL only (an instance that does not deliver): a delivery an actor
/// claimed and has not sent yet still waited through the silence.
#[hookd_test_macros::test]
async fn a_delivery_claimed_but_not_yet_sent_counts_as_waiting_through_the_silence() {
    use hookd::store::incident_watch;
    use sea_orm::ConnectionTrait;
    if harness::skip_postgres() {
        return;
    }
    let app = api_only_hookd().await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint_for(&app.partner_id, &receiver.url(), &["a.b"], 4)
        .await;
    let since = app.clock.now_ms();
    app.publish("a.b", json!({})).await;
    app.advance(Duration::from_secs(6 * 60));
    let back = app.clock.now_ms();
    // The first instance back has claimed it, leased for a minute.
    app.db()
        .execute_unprepared(&format!(
            "UPDATE delivery SET state = 'delivering', claim_seq = 1, next_attempt_at = {}, \
             updated_at = {back} WHERE endpoint_id = '{endpoint}'",
            back + 60_000
        ))
        .await
        .expect("claimed");
    let partners = incident_watch::due_during(app.db(), since, back)
        .await
        .expect("the watch reads");
    assert_eq!(partners, vec![app.partner_id.clone()]);
    // Stopped while the runtime runs: a claim in flight at the test's end
    // would otherwise hand its connection back after the runtime is gone.
    drop(app);
    harness::quiesce().await;
}
