//! Slowloris against the real `hookd` binary under a file limit of 1024:
//! 200 connections from one address (its cap holds 128), then 1,500 from
//! twelve more, each stalled in its head or its body. Health checks and an
//! authenticated ingest still answer promptly (within `ANSWER_WITHIN`, half
//! the 5 s header timeout a held door would cost), the event is delivered
//! on its first attempt, no file runs out, and the places come back when the
//! crowd goes.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::net::TcpStream;

use super::{
    FILE_LIMIT, Limited, Stall, exchange, ingest_request, read_answer, stall, start_limited,
};
use crate::harness;

const CROWD: usize = 1500;
const CROWD_ADDRESSES: usize = 12;
const ONE_ADDRESS: usize = 200;
const PER_ADDRESS_CAP: usize = 128;
/// How soon a check must be answered while the crowd stalls: a free door
/// answers in milliseconds, a held one only after the crowd's 5 s header
/// timeout; the rest is room for a loaded machine.
const ANSWER_WITHIN: Duration = Duration::from_millis(2500);

/// A head stall or a form body stall, alternately.
fn head_or_body(i: usize) -> Stall<'static> {
    if i.is_multiple_of(2) {
        Stall::FormBody
    } else {
        Stall::Head
    }
}

/// What became of a stalled connection.
#[derive(Debug, PartialEq, Eq)]
enum Fate {
    /// Still open, and no answer.
    Held,
    Answered(u16),
    /// Closed without an answer: to make room for a newcomer.
    Closed,
}

/// What became of a stalled connection, seen for `within`.
async fn fate(stream: &mut TcpStream, within: Duration) -> Fate {
    let mut first = [0u8; 1];
    match tokio::time::timeout(within, stream.peek(&mut first)).await {
        Err(_) => Fate::Held,
        Ok(Ok(0) | Err(_)) => Fate::Closed,
        Ok(Ok(_)) => read_answer(stream, within)
            .await
            .map_or(Fate::Closed, |a| Fate::Answered(a.status)),
    }
}

async fn answers_promptly(server: std::net::SocketAddr, request: &[u8]) -> u16 {
    let started = Instant::now();
    let answer = exchange(server, request, ANSWER_WITHIN)
        .await
        .unwrap_or_else(|| panic!("no answer within {ANSWER_WITHIN:?} while the crowd stalls"));
    assert!(started.elapsed() < ANSWER_WITHIN);
    answer.status
}

#[hookd_test_macros::test]
async fn stalled_crowds_never_starve_health_ingest_or_delivery() {
    let Limited {
        hookd,
        server,
        partner,
        service_key,
        receiver,
        ..
    } = &start_limited(&[]).await;
    let server = *server;
    let rss_before = hookd.rss_kib();

    // One address first, while there is room, with heads no route answers:
    // past its cap it is refused at once with a 503.
    let mut one_address = Vec::new();
    for _ in 0..ONE_ADDRESS {
        one_address.extend(stall([127, 0, 0, 30], server, Stall::Head).await);
    }
    let fates = join_all(
        one_address
            .iter_mut()
            .map(|s| fate(s, Duration::from_secs(1))),
    )
    .await;
    let refused = fates.iter().filter(|f| **f == Fate::Answered(503)).count();
    let held = fates.iter().filter(|f| **f == Fate::Held).count();
    assert_eq!(
        (held, refused),
        (PER_ADDRESS_CAP, ONE_ADDRESS - PER_ADDRESS_CAP),
        "the cap held, every one past it told so with a 503: {fates:?}"
    );

    // Then the crowd, which takes the rest and the address's places past
    // its fair share.
    let mut crowd = Vec::new();
    for i in 0..CROWD {
        let source = [127, 0, 0, 2 + (i % CROWD_ADDRESSES) as u8];
        crowd.extend(stall(source, server, head_or_body(i)).await);
    }
    assert!(
        crowd.len() + one_address.len() > 1500,
        "the crowd connected"
    );

    // Room is made for health checks and producers: the stalled go first.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..5 {
        let status = answers_promptly(server, b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n").await;
        assert_eq!(status, 200);
    }
    let ingest = ingest_request(partner, service_key);
    assert_eq!(answers_promptly(server, ingest.as_bytes()).await, 201);
    receiver
        .wait_for(1, Duration::from_secs(10))
        .await
        .expect("the event is delivered while the crowd stalls");
    let files = hookd.open_files();
    // Half the file limit holds connections; the rest of the crowd was told,
    // or closed to make room.
    let probe = join_all(
        crowd
            .iter_mut()
            .map(|s| fate(s, Duration::from_millis(300))),
    )
    .await;
    let held = probe.iter().filter(|p| **p == Fate::Held).count();
    let refused = probe.iter().filter(|p| **p == Fate::Answered(503)).count();
    let closed = probe.iter().filter(|p| **p == Fate::Closed).count();
    assert!(
        held <= FILE_LIMIT as usize / 2,
        "{held} stalled connections held"
    );
    assert_eq!(
        held + refused + closed,
        CROWD,
        "every other answer is a 503: {probe:?}"
    );
    let rss_during = hookd.rss_kib();
    let log = hookd.stderr();
    assert!(
        !log.contains("Too many open files"),
        "hookd ran out of files: {log}"
    );
    assert!(files < FILE_LIMIT as usize * 3 / 4, "{files} files open");
    assert!(
        rss_during < rss_before + 96 * 1024,
        "RSS grew from {rss_before} KiB to {rss_during} KiB"
    );

    drop(crowd);
    drop(one_address);
    let drained = harness::wait_until(Duration::from_secs(10), || async {
        (hookd.open_files() < 64).then_some(())
    })
    .await;
    assert!(
        drained.is_some(),
        "the crowd's places come back: {} files still open",
        hookd.open_files()
    );
    println!(
        "slowloris: {held} held, {refused} refused, {closed} closed to make room; \
         {files} files open under attack; \
         RSS {rss_before} KiB before, {rss_during} KiB during"
    );
}
