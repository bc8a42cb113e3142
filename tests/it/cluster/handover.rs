//! Handover without a stall: an instance paused (SIGSTOP) past the lease
//! TTL loses its endpoints to the other; continued, it is preferred for them
//! again, and each one it wins back is delivering on it within 2 s of the
//! old owner's last request: the old owner hands the lease back as soon as
//! nothing is in flight, and the new owner, awaiting it, takes it at once.
//! Neither waits for its next heartbeat (here every 2 s, a 6 s lease TTL).

use std::time::{Duration, Instant};

use super::{Fleet, Producer, busiest};
use crate::harness::{process::signal, wait_until};

/// `cluster.lease_ttl`: heartbeats 2 s apart, so one heartbeat's wait shows.
const TTL: Duration = Duration::from_secs(6);
/// The longest a won-back endpoint may go without a request.
const GAP: Duration = Duration::from_secs(2);

/// The longest time between two requests to `path` after `since`.
fn longest_gap(received: &[(String, Instant)], path: &str, since: Instant) -> Duration {
    let mut at: Vec<Instant> = received
        .iter()
        .filter(|(p, t)| p == path && *t >= since)
        .map(|(_, t)| *t)
        .collect();
    at.sort();
    at.windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or(Duration::MAX)
}

/// The leases once no lease has changed hands for `quiet`: settled leases
/// can still be mid-handover (an owner hands back as its in-flight work
/// ends).
async fn unchanged_for(fleet: &Fleet, quiet: Duration) -> Vec<super::Lease> {
    let deadline = Instant::now() + TTL * 3;
    let mut last = fleet.leases().await;
    let mut since = Instant::now();
    while since.elapsed() < quiet {
        assert!(
            Instant::now() < deadline,
            "the leases kept moving: {last:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(100)).await;
        let now = fleet.leases().await;
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    last
}

#[hookd_test_macros::test]
async fn endpoints_won_back_by_a_resumed_instance_deliver_again_within_two_seconds() {
    let Some((fleet, ids)) = Fleet::registered_with_ttl(2, 10, TTL).await else {
        return;
    };
    // An event every 200 ms, to every endpoint.
    let producer = Producer::start(&fleet, 1, Duration::from_millis(200));
    fleet.wait_flowing().await;
    fleet.wait_settled().await;
    let leases = unchanged_for(&fleet, Duration::from_secs(2)).await;
    let (sleeper, sleeper_id) = busiest(&leases, &ids);
    let owned = fleet.leases_of(&sleeper_id).await;
    assert!(!owned.is_empty(), "the sleeper owned no endpoint");

    fleet.retire(sleeper);
    signal(&fleet.nodes[sleeper].hookd, "STOP");
    let taken = wait_until(TTL * 3, || async {
        let now = fleet.leases().await;
        now.iter()
            .all(|l| l.owner.is_some() && l.owner.as_deref() != Some(sleeper_id.as_str()))
            .then_some(())
    })
    .await;
    assert!(
        taken.is_some(),
        "the other instance took the sleeper's endpoints"
    );
    actix_rt::time::sleep(Duration::from_secs(1)).await;

    let resumed = Instant::now();
    signal(&fleet.nodes[sleeper].hookd, "CONT");
    let back = wait_until(TTL * 3, || async {
        let mine = fleet.leases_of(&sleeper_id).await;
        (!mine.is_empty()).then(|| resumed.elapsed())
    })
    .await;
    let Some(back_after) = back else {
        panic!(
            "the resumed instance did not win its endpoints back: {:?}\n{}",
            fleet.leases().await,
            fleet.logs()
        );
    };
    // What it won back: its share at rest (a handover waits for each
    // endpoint's requests in flight, so the shares move over a moment).
    let won_back: Vec<String> = unchanged_for(&fleet, Duration::from_secs(1))
        .await
        .into_iter()
        .filter(|l| l.owner.as_deref() == Some(sleeper_id.as_str()))
        .map(|l| l.path)
        .collect();
    assert!(
        !won_back.is_empty(),
        "the resumed instance kept what it won back"
    );
    // Two seconds of deliveries on the new owner after the last handover.
    actix_rt::time::sleep(GAP).await;
    let produced = producer.finish().await;
    let received: Vec<(String, Instant)> = fleet
        .receiver
        .received()
        .into_iter()
        .map(|r| (r.path, r.at))
        .collect();
    let gaps: Vec<(String, Duration)> = won_back
        .iter()
        .map(|p| (p.clone(), longest_gap(&received, p, resumed)))
        .collect();
    let worst = gaps.iter().map(|(_, g)| *g).max().unwrap_or_default();
    eprintln!(
        "resumed; its {} endpoints back on it after {back_after:?}; longest gap without a request on one of them {worst:?}",
        won_back.len()
    );
    assert!(
        gaps.iter().all(|(_, g)| *g <= GAP),
        "an endpoint won back went more than {GAP:?} without a request: {gaps:?}"
    );
    fleet.wait_delivered(&produced.committed, TTL * 3).await;
    fleet.assert_cap_held();
    fleet.assert_no_panic();
}
