//! A full disk under PostgreSQL, with the real binary: a private server
//! whose data folder is on a small `tmpfs` that a ballast file fills while
//! events arrive one by one. The server refuses the writes (its
//! `disk_full` error, or, if its write-ahead log cannot grow, a crash and a
//! restart): ingest answers 503, never a 500 or silence, and nothing
//! acknowledged is lost. Once the ballast is deleted (and the server
//! started again if it went down, as its supervisor would), ingest and
//! delivery resume without restarting hookd.

use std::time::Duration;

use super::disk_full::{ingest_until_refused, resume_and_deliver, serve_on};
use crate::harness::{
    self,
    pg::PrivateCluster,
    process::prepare_store,
    receiver::{Receiver, Reply},
    small_disk::SmallDisk,
};

/// Room for a cluster (about 40 MiB after initdb) and its first WAL segments.
const SIZE: &str = "96m";
const LEFT_FREE: u64 = 1024 * 1024;

/// Whether the server at `url` takes a connection within 2 s.
async fn is_up(url: &str) -> bool {
    let connect = sea_orm::Database::connect(url);
    match tokio::time::timeout(Duration::from_secs(2), connect).await {
        Ok(Ok(db)) => {
            let _ = db.close().await;
            true
        }
        _ => false,
    }
}

#[hookd_test_macros::test]
async fn a_full_postgresql_disk_is_a_503_and_hookd_resumes_without_a_restart() {
    if harness::skip_postgres() {
        return;
    }
    let disk = SmallDisk::mount(SIZE);
    let cluster = PrivateCluster::new_in(disk.path())
        .await
        .expect("a PostgreSQL cluster on the small disk");
    let url = cluster.url();
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(200));
    let (partner, key) = prepare_store(&url, &receiver.url(), 4).await;
    let work = tempfile::tempdir().unwrap();
    let (hookd, server) = serve_on(&url, work.path()).await;
    let ballast = disk.fill(LEFT_FREE);
    let (mut acknowledged, refusals) =
        ingest_until_refused(server, &partner, &key, Duration::from_secs(90)).await;
    assert!(
        !acknowledged.is_empty() && refusals.len() >= 3,
        "the disk filled up after some events: {} acknowledged, refusals {refusals:?}\n{}",
        acknowledged.len(),
        hookd.stderr()
    );
    for (status, kind, retry_after) in &refusals {
        assert!(
            *status == Some(503)
                && matches!(
                    kind.as_deref(),
                    Some("storage-full" | "database-unavailable")
                )
                && retry_after.is_some(),
            "a full disk is a 503 with Retry-After (storage-full, or database-unavailable while \
             the server restarts): {refusals:?}\n{}",
            hookd.stderr()
        );
    }

    std::fs::remove_file(&ballast).expect("the ballast goes");
    let restarted = !is_up(&url).await;
    if restarted {
        cluster.start().await.expect("the server starts again");
    }
    let resumed_after = resume_and_deliver(
        &hookd,
        server,
        (&partner, &key),
        &receiver,
        &mut acknowledged,
        (Duration::from_secs(30), Duration::from_secs(60)),
    )
    .await;
    eprintln!(
        "{} events acknowledged before the disk was full; refusals {:?}; server restarted: {restarted}; \
         ingest resumed {resumed_after:?} after space was freed",
        acknowledged.len() - 1,
        refusals.iter().map(|r| r.1.clone()).collect::<Vec<_>>()
    );
}
