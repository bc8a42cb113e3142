//! A rolling restart: each instance in turn gets a healthy replacement, then
//! a SIGTERM; it drains, hands its leases back, leaves the instance table and
//! exits 0, and while events flow every one reaches every endpoint exactly
//! once.

use std::time::{Duration, Instant};

use super::Fleet;
use crate::harness::{SLOW, WAIT, wait_until};

#[hookd_test_macros::test]
async fn a_rolling_restart_with_sigterm_loses_and_repeats_no_delivery() {
    let started = Instant::now();
    let every = Duration::from_millis(200);
    let Some((mut fleet, _, producer)) = Fleet::flowing(3, 20, every).await else {
        return;
    };

    for old in 0..3 {
        let new = fleet.add().await;
        let ids = fleet.wait_registered().await;
        assert!(ids[new].is_some(), "the replacement is registered");
        let old_id = ids[old].clone().expect("the old instance is registered");
        // Let the leases settle over four instances while events flow.
        fleet.wait_settled().await;
        let took = fleet.terminate(old).await;

        // Gone from the cluster at once: no row, no lease.
        let rows = fleet
            .query(&format!("SELECT id FROM instance WHERE id = '{old_id}'"))
            .await;
        assert!(
            rows.is_empty(),
            "{}: a stopped instance should delete its `instance` row",
            fleet.nodes[old].name
        );
        let held = fleet.leases_of(&old_id).await;
        assert!(
            held.is_empty(),
            "{}: a stopped instance should have handed its leases back, but still holds {held:?}",
            fleet.nodes[old].name
        );
        eprintln!(
            "{} stopped in {took:?}; {} events published so far",
            fleet.nodes[old].name,
            producer.committed()
        );
    }

    // A second more of the producer's work, on purpose, after the last stop.
    actix_rt::time::sleep(Duration::from_secs(1)).await;
    let produced = producer.finish().await;
    let unexpected = produced.unexpected(Duration::from_secs(2), started, "");
    assert!(
        unexpected.is_empty(),
        "ingest should take every batch on the instances taking traffic: {unexpected:?}"
    );
    fleet.wait_delivered(&produced.committed, SLOW).await;
    let duplicates = fleet.duplicates();
    assert!(
        duplicates.is_empty(),
        "{} deliveries went out more than once during the rolling restart: {:?}",
        duplicates.len(),
        duplicates.iter().take(10).collect::<Vec<_>>()
    );
    fleet.assert_cap_held();

    // The database agrees: each delivery delivered, each attempt stored once.
    let expected = (produced.committed.len() * 20) as i64;
    let recorded = wait_until(WAIT, || async {
        let rows = fleet
            .query(
                "SELECT count(*) AS n FROM delivery WHERE state = 'delivered' AND attempt_count = 1",
            )
            .await;
        let n: i64 = rows[0].try_get("", "n").expect("a count");
        (n == expected).then_some(())
    })
    .await;
    assert!(
        recorded.is_some(),
        "every one of the {expected} deliveries should be recorded delivered at its first attempt"
    );
    let twice = fleet.attempts_recorded_twice().await;
    assert!(twice.is_empty(), "attempts stored twice: {twice:?}");
    eprintln!(
        "rolling restart: {} events x 20 endpoints, each delivered once; {:?} in all",
        produced.committed.len(),
        started.elapsed()
    );
}
