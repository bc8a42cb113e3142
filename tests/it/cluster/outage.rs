//! PostgreSQL stops for 20 s under a running instance: ingest and readiness
//! answer 503 at once meanwhile, and once the database is back nothing is
//! lost and no attempt is stored twice. The server is a cluster of the test's
//! own, since stopping the shared one would break the other tests.

use std::time::{Duration, Instant};

use super::{Fleet, Producer};
use crate::harness::{
    self, READY_ANSWER_WITHIN, SLOW,
    pg::PrivateCluster,
    process::{event_batch, post_events},
    wait_until,
};

const OUTAGE: Duration = Duration::from_secs(20);
/// "Within 2 s", with the half second of slack crash.rs allows too: hookd's
/// pool gives up after 2 s, so its answer comes a few ms past that.
const INGEST_WITHIN: Duration = Duration::from_millis(2500);
/// How soon after the database is back hookd must be ready again.
const READY_WITHIN: Duration = Duration::from_secs(20);

#[hookd_test_macros::test]
async fn a_20_second_database_outage_is_answered_with_503_and_loses_nothing() {
    if harness::skip_postgres() {
        return;
    }
    let started = Instant::now();
    let pg = PrivateCluster::new()
        .await
        .unwrap_or_else(|e| panic!("a PostgreSQL cluster of the test's own: {e}"));
    let fleet = Fleet::start(&pg.url(), 1, 4).await;
    let producer = Producer::start(&fleet, 1, Duration::from_millis(200));
    fleet.wait_flowing().await;
    let node = &fleet.nodes[0];

    let stopping_at = Instant::now();
    pg.stop().await.expect("PostgreSQL stops");
    let down_at = Instant::now();
    // Attempts answered while the database is down must still be recorded once.
    let cut_off = fleet
        .receiver
        .received()
        .iter()
        .filter(|r| r.at + super::REPLY_DELAY > stopping_at)
        .count();
    assert!(
        cut_off > 0,
        "the scenario needs attempts in flight when the database stops, but none were"
    );
    let mut probes = 0;
    while down_at.elapsed() < OUTAGE {
        let (_, body) = event_batch(&fleet.store.partner_id, 1);
        let asked = Instant::now();
        let answer = actix_rt::time::timeout(
            Duration::from_secs(5),
            post_events(&fleet.http, &node.base_url, &fleet.store.service_key, &body),
        )
        .await;
        let took = asked.elapsed();
        assert!(
            matches!(answer, Ok(Ok((503, Some(_))))) && took < INGEST_WITHIN,
            "{:?} into the outage, ingest should answer 503 with Retry-After within {INGEST_WITHIN:?}; got {answer:?} after {took:?}\n{}",
            asked - down_at,
            fleet.logs()
        );
        let asked = Instant::now();
        let ready =
            actix_rt::time::timeout(Duration::from_secs(5), readyz(&fleet.http, &node.base_url))
                .await;
        let took = asked.elapsed();
        assert!(
            matches!(ready, Ok(Some(503))) && took < READY_ANSWER_WITHIN,
            "{:?} into the outage, /readyz should answer 503 within {READY_ANSWER_WITHIN:?}; got {ready:?} after {took:?}",
            asked - down_at
        );
        probes += 1;
        actix_rt::time::sleep(Duration::from_secs(1)).await;
    }

    pg.start().await.expect("PostgreSQL starts again");
    let up_at = Instant::now();
    let ready = wait_until(READY_WITHIN, || async {
        (readyz(&fleet.http, &node.base_url).await == Some(200)).then_some(())
    })
    .await;
    assert!(
        ready.is_some(),
        "hookd should be ready within {READY_WITHIN:?} of the database coming back\n{}",
        fleet.logs()
    );
    let ready_after = up_at.elapsed();
    // Two more seconds of the producer's work on a healthy hookd, on purpose.
    actix_rt::time::sleep(Duration::from_secs(2)).await;
    let produced = producer.finish().await;

    // The producer, too, got prompt 503s while the database was away.
    let unexpected = produced.unexpected(INGEST_WITHIN, down_at, "");
    assert!(
        unexpected.is_empty(),
        "every ingest answer should be 2xx, or 503 with Retry-After within {INGEST_WITHIN:?} \
         (times since the database stopped; it was back after {:?}): {unexpected:?}\n{}",
        up_at - down_at,
        fleet.logs()
    );
    fleet.wait_delivered(&produced.committed, SLOW).await;
    let twice = fleet.attempts_recorded_twice().await;
    assert!(
        twice.is_empty(),
        "attempts stored twice after the outage: {twice:?}"
    );
    fleet.assert_cap_held();
    fleet.assert_no_panic();
    let refused = produced
        .answers
        .iter()
        .filter(|a| a.status == Ok(503))
        .count();
    let duplicates: usize = fleet.duplicates().values().map(|n| n - 1).sum();
    eprintln!(
        "outage: PostgreSQL took {:?} to stop, with {cut_off} attempts in flight; {probes} probes answered 503 in time, {refused} producer batches refused; ready {ready_after:?} after the restart; {} events x 4 endpoints delivered, {duplicates} duplicates; {:?} in all",
        down_at - stopping_at,
        produced.committed.len(),
        started.elapsed()
    );
}

/// The status of `GET /readyz`, or None without an answer.
async fn readyz(http: &awc::Client, base_url: &str) -> Option<u16> {
    let res = http.get(format!("{base_url}/readyz")).send().await;
    res.ok().map(|r| r.status().as_u16())
}
