//! PostgreSQL fails over under hookd. A primary with a synchronous
//! streaming standby, and hookd reaching it the way users do, through an
//! address that moves (a TCP proxy stands in for a virtual IP or HAProxy).
//! Under a steady 200 events a second the primary is killed, the standby
//! promoted and the address moved to it: hookd notices by itself and needs
//! no restart, delivers again within 10 s of the promotion, loses no event
//! it acknowledged and records no attempt twice.

use std::time::{Duration, Instant};

use super::{Fleet, Producer};
use crate::harness::{
    self, SLOW,
    pg::PrivateCluster,
    process::{event_batch, post_events},
    receiver::Reply,
    tcp_proxy::TcpProxy,
    wait_until,
};

/// How soon after the promotion hookd must be delivering again.
const RESUME_WITHIN: Duration = Duration::from_secs(10);
/// 200 events a second: 4 per request, a request every 20 ms.
const BATCH: usize = 4;
const EVERY: Duration = Duration::from_millis(20);

#[hookd_test_macros::test]
async fn hookd_rides_a_postgresql_failover_without_a_restart_or_a_lost_event() {
    if harness::skip_postgres() {
        return;
    }
    let (primary, standby) = PrivateCluster::with_synchronous_standby()
        .await
        .unwrap_or_else(|e| panic!("a primary with a synchronous standby: {e}"));
    let address = TcpProxy::start(primary.port()).await;
    let fleet = Fleet::start(&address.postgres_url(), 1, 4).await;
    // Answered at once: the receiver keeps up with 200 events a second.
    fleet.receiver.set_default(Reply::status(200));
    let producer = Producer::start(&fleet, BATCH, EVERY);
    fleet.wait_flowing().await;
    actix_rt::time::sleep(Duration::from_secs(2)).await;
    let before = producer.committed();

    primary.kill().await.expect("the primary dies");
    standby.promote().await.expect("the standby is promoted");
    address.switch_to(standby.port());
    let promoted_at = Instant::now();

    // An event taken after the promotion reaches every endpoint in time.
    let node = &fleet.nodes[0].base_url;
    let (probe, body) = event_batch(&fleet.store.partner_id, 1);
    let resumed = wait_until(RESUME_WITHIN, || async {
        let taken = matches!(
            post_events(&fleet.http, node, &fleet.store.service_key, &body).await,
            Ok((200 | 201, _))
        );
        (taken && fleet.missing(&probe).is_empty()).then_some(())
    })
    .await;
    assert!(
        resumed.is_some(),
        "an event published after the promotion should be delivered within {RESUME_WITHIN:?}\n{}",
        fleet.logs()
    );
    let resumed_after = promoted_at.elapsed();
    // Events taken by the promoted server, delivered too.
    actix_rt::time::sleep(Duration::from_secs(3)).await;
    let mut produced = producer.finish().await;
    produced.committed.extend(probe.iter().cloned());
    assert!(
        produced.committed.len() > before,
        "the producer had events taken after the failover"
    );
    fleet.wait_delivered(&produced.committed, SLOW).await;
    let twice = fleet.attempts_recorded_twice().await;
    assert!(
        twice.is_empty(),
        "attempts stored twice across the failover: {twice:?}"
    );
    fleet.assert_no_panic();
    let refused = produced
        .answers
        .iter()
        .filter(|a| !matches!(a.status, Ok(200 | 201)))
        .count();
    eprintln!(
        "failover: {} events acknowledged ({before} before the kill), {refused} ingest answers other than 2xx while it failed over; delivering again {resumed_after:?} after the promotion",
        produced.committed.len()
    );
}
