//! A killed instance: the others take its endpoints over within the lease
//! TTL, and no acknowledged event is lost (duplicates are allowed: the dead
//! instance's attempts in flight may go out again). A survivor looks again
//! the moment the victim's last heartbeat runs out, not at its own next
//! heartbeat (which took up to a third of the TTL more).

use std::time::{Duration, Instant};

use super::{Fleet, LEASE_TTL, busiest};
use crate::harness::{SLOW, wait_until};

/// How long after the kill its endpoints must be served again: the lease
/// TTL from the victim's last heartbeat (at most the TTL from the kill),
/// and half a second for the take, the first claim and the producer's
/// 250 ms between events.
const RESUME_WITHIN: Duration = LEASE_TTL.saturating_add(Duration::from_millis(500));

#[hookd_test_macros::test]
async fn a_killed_instances_endpoints_resume_on_the_others_and_nothing_is_lost() {
    let started = Instant::now();
    // Four events a second, 20 endpoints: well within 2 x 5 requests a second each.
    let every = Duration::from_millis(250);
    let Some((mut fleet, ids, producer)) = Fleet::flowing(3, 20, every).await else {
        return;
    };
    let leases = fleet.wait_settled().await;

    // The victim: the instance that owns the most endpoints.
    let (victim, victim_id) = busiest(&leases, &ids);
    fleet.retire(victim);
    let owned = fleet.leases_of(&victim_id).await;
    fleet.nodes[victim].hookd.kill();
    let killed_at = Instant::now();
    assert!(
        !owned.is_empty(),
        "the victim owned no endpoint: nothing to fail over"
    );

    // Its endpoints are served again: a request starts after the kill (its
    // own last requests could still be read just after it).
    let after = killed_at + Duration::from_millis(300);
    let resumed = wait_until(RESUME_WITHIN, || async {
        let received = fleet.receiver.received();
        let first_after = |path: &str| {
            received
                .iter()
                .filter(|r| r.path == path && r.at > after)
                .map(|r| r.at)
                .min()
        };
        let firsts: Option<Vec<Instant>> = owned.iter().map(|l| first_after(&l.path)).collect();
        firsts.map(|f| f.into_iter().max().unwrap_or(after) - killed_at)
    })
    .await;
    let Some(resumed_after) = resumed else {
        panic!(
            "the killed instance's endpoints {:?} were not served again within {RESUME_WITHIN:?}; leases now: {:?}\n{}",
            owned.iter().map(|l| &l.path).collect::<Vec<_>>(),
            fleet.leases().await,
            fleet.logs()
        );
    };

    // ...by instances that took the leases with a higher epoch.
    let now = fleet.leases().await;
    for before in &owned {
        let lease = now
            .iter()
            .find(|l| l.endpoint_id == before.endpoint_id)
            .expect("the endpoint is still there");
        assert!(
            lease.owner.is_some() && lease.owner != before.owner && lease.epoch > before.epoch,
            "{} should have passed from the dead {victim_id} (epoch {}) to a live instance with a higher epoch: {lease:?}",
            before.path,
            before.epoch
        );
    }

    // Events go on flowing for a while (two seconds of the producer's
    // work, on purpose), then every one reaches every endpoint.
    actix_rt::time::sleep(Duration::from_secs(2)).await;
    let produced = producer.finish().await;
    let victim_url = &fleet.nodes[victim].base_url;
    let unexpected = produced.unexpected(Duration::from_secs(2), started, victim_url);
    assert!(
        unexpected.is_empty(),
        "ingest on the live instances should take every batch: {unexpected:?}"
    );
    fleet.wait_delivered(&produced.committed, SLOW).await;
    fleet.assert_cap_held();
    fleet.assert_no_panic();
    let duplicates: usize = fleet.duplicates().values().map(|n| n - 1).sum();
    eprintln!(
        "killed an instance owning {} endpoints; they resumed {resumed_after:?} after the kill; {} events x 20 endpoints delivered, {duplicates} duplicates; {:?} in all",
        owned.len(),
        produced.committed.len(),
        started.elapsed()
    );
}
