//! The flow of requests: an endpoint's concurrency and rate limit, a stalled
//! endpoint beside a fast one, kept-alive connections, which endpoints the
//! fanout reaches, and (on PostgreSQL) an event from another writer.

use std::time::Duration;

use serde_json::json;

use super::usage;
use crate::harness::{
    Backend, WAIT,
    bulk::publish_many,
    quiesce,
    receiver::{Receiver, Reply},
    spawn_app, spawn_app_with,
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn an_endpoint_never_has_more_than_its_concurrency_in_flight(app: TestApp) {
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::Delay(
        Duration::from_millis(200),
        Box::new(Reply::status(200)),
    ));
    app.endpoint_for(&app.partner_id, &receiver.url(), &[], 2)
        .await;
    publish_many(&app, 8).await;
    receiver.wait_for(8, WAIT).await.expect("all arrive");
    assert_eq!(
        receiver.max_in_flight_per_path(),
        2,
        "the endpoint's two requests at a time, no more (and no fewer: 200 ms each)"
    );
}

#[both_backends]
async fn a_stalled_endpoint_does_not_slow_another(app: TestApp) {
    let stalled = Receiver::start().await;
    stalled.set_default(Reply::StallHeaders(Duration::from_secs(8)));
    let fast = Receiver::start().await;
    app.endpoint_for(&app.partner_id, &stalled.url(), &[], 2)
        .await;
    app.endpoint_for(&app.partner_id, &fast.url(), &[], 2).await;
    publish_many(&app, 20).await;
    fast.wait_for(20, Duration::from_secs(2))
        .await
        .expect("the fast endpoint gets everything while the other stalls");
}

#[both_backends]
async fn connections_to_an_endpoint_are_kept_alive(app: TestApp) {
    let receiver = Receiver::start().await;
    app.endpoint_for(&app.partner_id, &receiver.url(), &[], 1)
        .await;
    for i in 0..5 {
        app.publish("a.b", json!({"i": i})).await;
        receiver.wait_for(i + 1, WAIT).await.expect("delivered");
    }
    assert_eq!(
        receiver.connections(),
        1,
        "five deliveries in turn share one kept-alive connection"
    );
}

#[both_backends]
async fn an_endpoint_rate_limit_spaces_its_requests(backend: Backend) {
    use sea_orm::ConnectionTrait;
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    app.db()
        .execute_unprepared(&format!(
            "UPDATE endpoint SET rate_limit = 4 WHERE id = '{endpoint}'"
        ))
        .await
        .expect("rate limited");
    publish_many(&app, 10).await;
    receiver.wait_for(4, WAIT).await.expect("a burst of four");
    receiver.stays_at(4).await;
    app.advance(Duration::from_secs(1));
    receiver
        .wait_for(8, WAIT)
        .await
        .expect("four more a second later");
    receiver.stays_at(8).await;
    app.advance(Duration::from_secs(1));
    receiver.wait_for(10, WAIT).await.expect("the rest");
}

#[both_backends]
async fn the_fanout_reaches_only_subscribed_active_endpoints_of_the_events_partner(app: TestApp) {
    let receiver = Receiver::start().await;
    let other_partner = hookd::store::partners::create(app.db(), None, "Other", 0)
        .await
        .expect("a partner");
    let url = receiver.url();
    let (usage_subscriber, _) = app
        .endpoint_for(&app.partner_id, &url, &["usage.*"], 8)
        .await;
    let (balance, _) = app
        .endpoint_for(&app.partner_id, &url, &["balance.updated"], 8)
        .await;
    let (paused, _) = app.endpoint_for(&app.partner_id, &url, &[], 8).await;
    let (foreign, _) = app.endpoint_for(&other_partner.id, &url, &[], 8).await;
    hookd::store::endpoints::disable(app.db(), &paused, "paused for the test", 0)
        .await
        .expect("paused");
    let event = app.publish("usage.finalized", usage(9182)).await;
    receiver.wait_for(1, WAIT).await.expect("one delivery");
    receiver.stays_at(1).await;
    assert!(
        app.delivery(&event, &usage_subscriber).await.is_some(),
        "the usage.* subscriber gets it"
    );
    for (name, id) in [
        ("balance", &balance),
        ("paused", &paused),
        ("other partner's", &foreign),
    ] {
        assert!(
            app.delivery(&event, id).await.is_none(),
            "the {name} endpoint must not get a delivery"
        );
    }
}

/// PostgreSQL only: an event another writer commits straight into the outbox
/// (the host service's own transaction, no API call) is fanned out at once by
/// LISTEN/NOTIFY, long before the (here one-minute) poll would find it.
#[hookd_test_macros::test]
async fn an_event_committed_by_another_writer_is_delivered_at_once_on_postgres() {
    if crate::harness::skip_postgres() {
        return;
    }
    let app = spawn_app_with(
        Backend::Postgres,
        &[("HOOKD_DELIVERY__POLL_INTERVAL", "60s")],
    )
    .await;
    let receiver = Receiver::start().await;
    app.endpoint(&receiver.url()).await;
    // The fanout's first poll ran at start; the listener may still be
    // connecting, so commit until one event is in, then time the next.
    let commit = |n: i32| {
        let app = &app;
        async move {
            use sea_orm::TransactionTrait as _;
            let txn = app.db().begin().await.expect("a transaction");
            let event = hookd::outbox::Event::new(
                "usage.finalized",
                &app.partner_id,
                json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.20", "usage_id": format!("usage_{n}")}),
            )
            .schema_version(1);
            hookd::outbox::enqueue(&txn, event)
                .await
                .expect("the outbox row");
            txn.commit().await.expect("commit");
        }
    };
    let mut n = 0;
    while receiver.count() == 0 {
        n += 1;
        assert!(n <= 50, "no event arrived in 10 s: is the LISTEN running?");
        commit(n).await;
        actix_rt::time::sleep(Duration::from_millis(200)).await;
    }
    let arrived = receiver
        .wait_for(n as usize, WAIT)
        .await
        .expect("the first events")
        .len();
    let started = std::time::Instant::now();
    commit(1000).await;
    receiver
        .wait_for(arrived + 1, Duration::from_secs(5))
        .await
        .expect("the NOTIFY woke the fanout well before the 60 s poll");
    assert!(started.elapsed() < Duration::from_secs(5));
    quiesce().await;
}
