//! The outbound connection budget, seen from the receivers' side of real
//! sockets: many endpoints share `delivery.max_connections` without anyone
//! failing or starving, idle connections close, and the gauges an operator
//! watches say what is on the wire.

use std::{collections::BTreeMap, time::Duration};

use crate::harness::{
    Backend, SLOW, TestApp, WAIT,
    bulk::{all_delivered, publish_many},
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};
use hookd_test_macros::both_backends;

const ENDPOINTS: usize = 12;
const EVENTS: usize = 5;

/// hookd configured with `env`, an operator key to scrape it with, and a
/// receiver answering 200 until scripted otherwise.
async fn scene(backend: Backend, env: &[(&str, &str)]) -> (TestApp, String, Receiver) {
    let app = spawn_app_with(backend, env).await;
    let operator = app.operator_key().await;
    (app, operator, Receiver::start().await)
}

/// Twelve endpoints on one receiver answering after 100 ms, five events
/// each, over a budget of three connections, all delivered.
async fn twelve_endpoints_on_three_connections(backend: Backend) -> (TestApp, String, Receiver) {
    let (app, operator, receiver) =
        scene(backend, &[("HOOKD_DELIVERY__MAX_CONNECTIONS", "3")]).await;
    receiver.set_default(Reply::Delay(
        Duration::from_millis(100),
        Box::new(Reply::status(200)),
    ));
    for i in 0..ENDPOINTS {
        app.endpoint_for(&app.partner_id, &format!("{}/e{i}", receiver.url()), &[], 8)
            .await;
    }
    publish_many(&app, EVENTS).await;
    all_delivered(&app, ENDPOINTS * EVENTS).await;
    (app, operator, receiver)
}

#[both_backends]
async fn twelve_endpoints_never_hold_more_than_the_three_connections_of_the_budget(
    backend: Backend,
) {
    let (app, operator, receiver) = twelve_endpoints_on_three_connections(backend).await;
    assert!(
        receiver.peak_open_connections() <= 3,
        "hookd had {} connections open at once (accepted {} in all) over a budget of 3",
        receiver.peak_open_connections(),
        receiver.connections()
    );
    assert_eq!(
        app.metric(&operator, "hookd_outbound_connections_max")
            .await,
        3
    );
}

#[both_backends]
async fn twelve_endpoints_sharing_three_connections_each_get_every_delivery_once_without_a_failure(
    backend: Backend,
) {
    let (app, _operator, receiver) = twelve_endpoints_on_three_connections(backend).await;
    let total = ENDPOINTS * EVENTS;
    let deliveries = receiver.deliveries();
    let twice: Vec<_> = deliveries.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "each delivery arrives once: {twice:?}");
    assert_eq!(deliveries.len(), total, "every delivery arrives");
    let mut per_endpoint = BTreeMap::<&str, usize>::new();
    for (path, _) in deliveries.keys() {
        *per_endpoint.entry(path.as_str()).or_default() += 1;
    }
    assert!(
        per_endpoint.len() == ENDPOINTS && per_endpoint.values().all(|&n| n == EVENTS),
        "every endpoint gets all its deliveries, none starves: {per_endpoint:?}"
    );
    let connect = app
        .count("SELECT COUNT(*) AS n FROM attempt WHERE error_category = 'connect'")
        .await;
    assert_eq!(
        connect, 0,
        "our own limit never fails an attempt as `connect`"
    );
    let attempts = app.count("SELECT COUNT(*) AS n FROM attempt").await;
    assert_eq!(
        attempts, total as i64,
        "one attempt per delivery, none failed"
    );
}

/// One delivery made with idle connections closed after 300 ms, and
/// the connection that carried it closed.
async fn idle_after_one_delivery(backend: Backend) -> (TestApp, String, Receiver) {
    let idle = [("HOOKD_DELIVERY__IDLE_CONNECTION_TIMEOUT", "300ms")];
    let (app, operator, receiver) = scene(backend, &idle).await;
    app.endpoint(&receiver.url()).await;
    publish_many(&app, 1).await;
    all_delivered(&app, 1).await;
    assert_eq!(
        receiver.connections(),
        1,
        "one connection carried the delivery"
    );
    let closed = wait_until(WAIT, || async {
        (receiver.open_connections() == 0).then_some(())
    })
    .await;
    assert!(
        closed.is_some(),
        "hookd kept {} connection(s) open {WAIT:?} after its last delivery",
        receiver.open_connections()
    );
    (app, operator, receiver)
}

#[both_backends]
async fn a_connection_left_idle_is_closed(backend: Backend) {
    let (_app, _operator, receiver) = idle_after_one_delivery(backend).await;
    assert_eq!(
        receiver.open_connections(),
        0,
        "closed, and it stays closed"
    );
    assert_eq!(receiver.connections(), 1, "no new connection was made");
}

#[both_backends]
async fn the_connection_gauges_go_back_to_zero_once_all_is_idle(backend: Backend) {
    let (app, operator, _receiver) = idle_after_one_delivery(backend).await;
    for name in [
        "hookd_outbound_connections",
        "hookd_requests_in_flight",
        "hookd_attempts_unrecorded",
        "hookd_outbound_connection_waiters",
    ] {
        assert_eq!(
            app.metric(&operator, name).await,
            0,
            "{name} once all is idle"
        );
    }
}

#[both_backends]
async fn requests_in_flight_counts_the_requests_a_receiver_holds_not_the_queue(backend: Backend) {
    // Patient enough that holding a request is not a timeout.
    let patient = [
        ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "30s"),
        ("HOOKD_DELIVERY__LEASE", "60s"),
    ];
    let (app, operator, receiver) = scene(backend, &patient).await;
    let held = || Reply::Delay(Duration::from_secs(5), Box::new(Reply::status(200)));
    receiver.script([held(), held()]);
    app.endpoint_for(&app.partner_id, &receiver.url(), &[], 2)
        .await;
    publish_many(&app, 4).await;

    receiver
        .wait_for(2, SLOW)
        .await
        .expect("two requests reach the receiver, which holds them");
    assert_eq!(
        app.metric(&operator, "hookd_requests_in_flight").await,
        2,
        "two requests are on the wire (two more wait behind them)"
    );
    assert_eq!(
        receiver.count(),
        2,
        "the scrape ran while both requests were held and the rest waited"
    );

    all_delivered(&app, 4).await;
    assert_eq!(
        app.metric(&operator, "hookd_requests_in_flight").await,
        0,
        "nothing is on the wire once all is answered and recorded"
    );
}
