//! A full disk, with the real binary: the SQLite file on a small `tmpfs`
//! (mounted by the test, which runs as root) that a ballast file fills up
//! while events arrive one by one. Ingest answers 503 `storage-full` with
//! `Retry-After` (never a 500, never silence), the log says so once rather
//! than per request, and nothing acknowledged is lost: once the ballast is
//! deleted, ingest and delivery resume by themselves within seconds and
//! every acknowledged event reaches the receiver.

use std::time::{Duration, Instant};

use super::received_ids;
use crate::{
    harness::{
        self, SLOW,
        process::{Hookd, prepare_store},
        receiver::{Receiver, Reply},
        small_disk::SmallDisk,
        wait_until,
    },
    hostile::exchange,
};

/// The filesystem's size: room for the schema and a few hundred events.
const SIZE: &str = "8m";
/// What the ballast leaves free.
const LEFT_FREE: u64 = 1024 * 1024;

/// One single-event ingest: its event id and the status (None: no answer
/// within 5 s), with the problem type of a refusal.
pub async fn ingest_one(
    server: std::net::SocketAddr,
    partner: &str,
    key: &str,
    n: usize,
) -> (String, Option<u16>, Option<String>, Option<String>) {
    let id = format!("evt_{}", ulid::Ulid::new());
    let body = format!(
        r#"{{"event_id":"{id}","type":"balance.updated","partner_id":"{partner}","data":{{"customer_id":"cus_{n}","currency":"USD","balance":"1.00"}}}}"#
    );
    let request = format!(
        "POST /v1/events HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let answer = exchange(server, request.as_bytes(), Duration::from_secs(5)).await;
    let status = answer.as_ref().map(|a| a.status);
    let kind = answer
        .as_ref()
        .filter(|a| a.status >= 400)
        .map(|a| a.problem_type());
    let retry_after = answer
        .as_ref()
        .and_then(|a| a.header("retry-after").map(str::to_string));
    (id, status, kind, retry_after)
}

/// A `hookd serve` on `url` (retries a second apart), healthy; its address.
pub async fn serve_on(url: &str, dir: &std::path::Path) -> (Hookd, std::net::SocketAddr) {
    let (listen, env) = harness::serve::serve_env(
        url,
        &[
            (
                "HOOKD_DELIVERY__SCHEDULE",
                r#"["0s","1s","1s","1s","1s","1s","1s","1s"]"#,
            ),
            ("HOOKD_LOG__FILTER", "warn"),
        ],
    );
    let mut hookd = Hookd::start(&["serve"], &env, dir, "disk-full");
    let http = awc::Client::default();
    hookd
        .wait_healthy(&http, &format!("http://{listen}"), SLOW)
        .await;
    (hookd, listen.parse().expect("an address"))
}

/// A refused ingest: its status, problem type and `Retry-After`.
pub type Refusal = (Option<u16>, Option<String>, Option<String>);

/// Events one by one until three are refused (or `within` passes): the
/// acknowledged ids, and the refusals.
pub async fn ingest_until_refused(
    server: std::net::SocketAddr,
    partner: &str,
    key: &str,
    within: Duration,
) -> (Vec<String>, Vec<Refusal>) {
    let mut acknowledged = Vec::new();
    let mut refusals = Vec::new();
    let started = Instant::now();
    for n in 0.. {
        let (id, status, kind, retry_after) = ingest_one(server, partner, key, n).await;
        match status {
            Some(201) => acknowledged.push(id),
            other => refusals.push((other, kind, retry_after)),
        }
        if refusals.len() >= 3 || started.elapsed() > within {
            break;
        }
    }
    (acknowledged, refusals)
}

/// Once space is freed: ingest answers 201 again within `within.0` (the
/// event joins `acknowledged`) and every acknowledged event reaches the
/// receiver within `within.1`. Returns how long ingest took to resume.
pub async fn resume_and_deliver(
    hookd: &Hookd,
    server: std::net::SocketAddr,
    (partner, key): (&str, &str),
    receiver: &Receiver,
    acknowledged: &mut Vec<String>,
    within: (Duration, Duration),
) -> Duration {
    let freed = Instant::now();
    let resumed = wait_until(within.0, || async {
        let (id, status, _, _) = ingest_one(server, partner, key, 0).await;
        (status == Some(201)).then_some(id)
    })
    .await;
    let Some(after) = resumed else {
        panic!(
            "ingest did not resume within {:?} of freeing space\n{}",
            within.0,
            hookd.stderr()
        );
    };
    let resumed_after = freed.elapsed();
    acknowledged.push(after);
    let all_delivered = wait_until(within.1, || async {
        let got = received_ids(receiver);
        acknowledged
            .iter()
            .all(|id| got.contains_key(id))
            .then_some(())
    })
    .await;
    let got = received_ids(receiver);
    let missing = acknowledged
        .iter()
        .filter(|id| !got.contains_key(*id))
        .count();
    assert!(
        all_delivered.is_some(),
        "every acknowledged event is delivered once space is back: {missing} of {} missing\n{}",
        acknowledged.len(),
        hookd.stderr()
    );
    resumed_after
}

#[hookd_test_macros::test]
async fn a_full_disk_is_a_503_loses_nothing_acknowledged_and_resumes_once_space_is_freed() {
    let disk = SmallDisk::mount(SIZE);
    let url = format!("sqlite://{}/hookd.db", disk.path().display());
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(200));
    let (partner, key) = prepare_store(&url, &receiver.url(), 4).await;
    let work = tempfile::tempdir().unwrap();
    let (hookd, server) = serve_on(&url, work.path()).await;
    let ballast = disk.fill(LEFT_FREE);
    let (mut acknowledged, refusals) =
        ingest_until_refused(server, &partner, &key, Duration::from_secs(60)).await;
    assert!(
        !acknowledged.is_empty() && refusals.len() >= 3,
        "the disk filled up after some events: {} acknowledged, refusals {refusals:?}\n{}",
        acknowledged.len(),
        hookd.stderr()
    );
    for (status, kind, retry_after) in &refusals {
        assert_eq!(
            (*status, kind.as_deref()),
            (Some(503), Some("storage-full")),
            "a full disk is a 503 storage-full problem: {refusals:?}\n{}",
            hookd.stderr()
        );
        assert!(retry_after.is_some(), "with Retry-After: {refusals:?}");
    }

    std::fs::remove_file(&ballast).expect("the ballast goes");
    let resumed_after = resume_and_deliver(
        &hookd,
        server,
        (&partner, &key),
        &receiver,
        &mut acknowledged,
        (Duration::from_secs(15), Duration::from_secs(30)),
    )
    .await;
    let log = hookd.stderr();
    let loud: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .collect();
    let full_lines = loud.len();
    eprintln!(
        "{} events acknowledged before the disk was full; ingest resumed {resumed_after:?} after space was freed; {full_lines} WARN/ERROR lines in the log",
        acknowledged.len() - 1
    );
    assert!(
        full_lines <= 3,
        "the log says the disk is full once, not per request ({full_lines} lines):\n{log}"
    );
}
