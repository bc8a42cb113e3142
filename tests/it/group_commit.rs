//! Single-event requests in flight together are committed in groups, and
//! each keeps its own answer: a request that collides with another in its
//! group (the same new `event_id`) is committed alone, and answered as a
//! repeat or a conflict, without failing the rest.

use std::time::Duration;

use futures_util::future::join_all;
use serde_json::json;

use crate::harness::{Backend, receiver::Receiver, wait_until};
use hookd_test_macros::both_backends;

const DISTINCT: usize = 24;

#[both_backends]
async fn requests_committed_together_keep_their_own_answers_and_each_event_is_delivered_once(
    app: TestApp,
) {
    let receiver = Receiver::start().await;
    app.endpoint(&receiver.url()).await;
    let event = |id: String, x: i64| json!({"type": "a.b", "partner_id": app.partner_id, "event_id": id, "data": {"x": x}});
    // Distinct events, one per request, all at once: grouped.
    let first: Vec<_> = (0..DISTINCT).map(|i| event(uuid_id(i), 1)).collect();
    let answers = join_all(first.iter().map(|b| app.post_events(b))).await;
    assert!(
        answers.iter().all(|(s, _)| *s == 201),
        "each new event is created: {answers:?}"
    );
    let operator = app.operator_key().await;
    let commits = app.metric(&operator, "hookd_ingest_commits_total").await;
    assert!(
        commits < DISTINCT as i64,
        "{DISTINCT} events in as many requests took {commits} commits: they were grouped"
    );

    // Then every new event twice with the same content, and the first a
    // third time with other content, all at once: a group with a
    // collision is committed request by request.
    let mut second = Vec::new();
    for i in DISTINCT..2 * DISTINCT {
        second.push(event(uuid_id(i), 1));
        second.push(event(uuid_id(i), 1));
    }
    second.push(event(uuid_id(DISTINCT), 2));
    let answers = join_all(second.iter().map(|b| app.post_events(b))).await;
    let count = |status: u16| answers.iter().filter(|(s, _)| *s == status).count();
    assert_eq!(
        count(201),
        DISTINCT,
        "each event is created once: {answers:?}"
    );
    // The first event's three requests: one is created; a repeat of the
    // winner's content is answered 200 and the other content 409.
    assert!(
        [(DISTINCT, 1), (DISTINCT - 1, 2)].contains(&(count(200), count(409))),
        "repeats are answered 200 and the other content 409: {answers:?}"
    );
    let stored = app.count("SELECT COUNT(*) AS n FROM outbox_event").await;
    assert_eq!(stored, 2 * DISTINCT as i64, "each event is stored once");

    let arrived = wait_until(Duration::from_secs(20), || async {
        (receiver.distinct_deliveries() == 2 * DISTINCT).then_some(())
    })
    .await;
    assert!(arrived.is_some(), "every event arrives");
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    let counts = receiver.deliveries();
    assert!(
        counts.values().all(|&n| n == 1),
        "each event arrives once: {counts:?}"
    );
}

/// A valid event id (`evt_` and a UUID) numbered `i`.
fn uuid_id(i: usize) -> String {
    format!("evt_00000000-0000-4000-8000-{i:012}")
}

/// PostgreSQL only: events the fast path stores are published in their own
/// transaction, so their insert wakes no fanout (`hookd_outbox` stays quiet),
/// while an event another writer commits unpublished still wakes it.
#[hookd_test_macros::test]
async fn a_fast_path_commit_sends_no_outbox_notice_and_another_writers_event_does() {
    use sea_orm::sqlx::postgres::PgListener;
    if crate::harness::skip_postgres() {
        return;
    }
    let app = crate::harness::spawn_app(Backend::Postgres).await;
    let pool = app.db().get_postgres_connection_pool().clone();
    let mut listener = PgListener::connect_with(&pool).await.expect("a listener");
    listener.listen("hookd_outbox").await.expect("LISTEN");

    app.publish("a.b", json!({"n": 1})).await;
    let quiet = actix_rt::time::timeout(Duration::from_millis(700), listener.recv()).await;
    assert!(
        quiet.is_err(),
        "an event published on the fast path woke the fanouts: {quiet:?}"
    );

    use sea_orm::TransactionTrait as _;
    let txn = app.db().begin().await.expect("a transaction");
    // `enqueue` checks against the bundled (strict) catalog: a known type.
    let event = hookd::outbox::Event::new(
        "balance.updated",
        &app.partner_id,
        json!({"customer_id": "cus_2", "currency": "USD", "balance": "1.00"}),
    );
    hookd::outbox::enqueue(&txn, event)
        .await
        .expect("the outbox row");
    txn.commit().await.expect("commit");
    let notice = actix_rt::time::timeout(Duration::from_secs(5), listener.recv()).await;
    assert!(
        matches!(notice, Ok(Ok(_))),
        "an unpublished event committed by another writer wakes the fanouts: {notice:?}"
    );
    drop(listener);
    drop(app);
    crate::harness::quiesce().await;
}

/// Requests that keep coming while the deliveries of the ones before are
/// being recorded: every group commit meets other writers (the recorder,
/// the claims), and each request is still answered 201. On SQLite a group
/// transaction that read before its first write could not take the write
/// lock once another writer had committed, and answered 500.
#[both_backends]
async fn events_posted_while_deliveries_are_recorded_are_each_created(app: TestApp) {
    const WAVES: usize = 12;
    const IN_FLIGHT: usize = 16;
    let receiver = Receiver::start().await;
    for n in 0..4 {
        app.endpoint(&format!("{}/{n}", receiver.url().trim_end_matches('/')))
            .await;
    }
    let mut refused = Vec::new();
    for wave in 0..WAVES {
        let bodies: Vec<_> = (0..IN_FLIGHT)
            .map(|i| json!({"type": "a.b", "partner_id": app.partner_id, "data": {"wave": wave, "i": i}}))
            .collect();
        let answers = join_all(bodies.iter().map(|b| app.post_events(b))).await;
        refused.extend(answers.into_iter().filter(|(s, _)| *s != 201));
    }
    assert!(refused.is_empty(), "every request is created: {refused:?}");
    let events = WAVES * IN_FLIGHT;
    let arrived = wait_until(Duration::from_secs(30), || async {
        (receiver.distinct_deliveries() == 4 * events).then_some(())
    })
    .await;
    assert!(
        arrived.is_some(),
        "every event reaches every endpoint: {} of {}",
        receiver.distinct_deliveries(),
        4 * events
    );
}
