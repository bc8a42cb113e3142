//! A reconnecting crowd against the real `hookd` binary under a file limit
//! of 1024: 1,500 connections from twelve addresses stall a head or a keyed
//! body, and every one hookd closes or refuses comes back a second later,
//! for thirteen seconds. Once a second, from an address of its own, a health
//! check and an authenticated ingest are answered promptly all the same
//! (within `WITHIN`), and every event is delivered: a newcomer below its fair share makes
//! room at once from the heaviest address, so the crowd competes with
//! itself. The operations listener and the Unix socket, with budgets of
//! their own, answer as promptly.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use futures_util::future::join_all;
use tokio::io::AsyncReadExt as _;

use super::{Limited, Stall, exchange, exchange_unix, ingest_request, stall, start_limited};
use crate::harness::process::free_port;

const CROWD: usize = 1500;
const CROWD_ADDRESSES: usize = 12;
/// How soon a member of the crowd comes back after hookd closed it.
const COME_BACK: Duration = Duration::from_secs(1);
/// Checks from 127.0.0.1, one a second.
const ROUNDS: usize = 13;
/// How soon a check must be answered: a free door answers in milliseconds,
/// a held one only after the crowd's 5 s header timeout; the rest is room
/// for a loaded machine.
const WITHIN: Duration = Duration::from_millis(2500);

/// One member of the crowd, from its first stalled connection on: waits
/// until hookd closes it (a refusal's 503, an eviction), comes back
/// `COME_BACK` later, and again, until `until`. Returns how often it came
/// back.
async fn member(
    first: Option<tokio::net::TcpStream>,
    source: [u8; 4],
    server: SocketAddr,
    how: Stall<'_>,
    until: Instant,
) -> usize {
    let until = tokio::time::Instant::from_std(until);
    let mut stream = first;
    let mut returns = 0;
    loop {
        if let Some(mut open) = stream.take() {
            let closed = async {
                let mut sink = [0u8; 1024];
                while matches!(open.read(&mut sink).await, Ok(n) if n > 0) {}
            };
            if tokio::time::timeout_at(until, closed).await.is_err() {
                return returns;
            }
        }
        if tokio::time::Instant::now() + COME_BACK >= until {
            return returns;
        }
        tokio::time::sleep(COME_BACK).await;
        stream = stall(source, server, how).await;
        returns += 1;
    }
}

/// One check: its status, if it was answered within `WITHIN`, and how long
/// it took.
async fn check(server: SocketAddr, request: &[u8]) -> (Option<u16>, Duration) {
    let started = Instant::now();
    let status = exchange(server, request, WITHIN).await.map(|a| a.status);
    (status, started.elapsed())
}

/// The same check on the Unix socket at `path`.
async fn check_unix(path: &std::path::Path, request: &[u8]) -> (Option<u16>, Duration) {
    let started = Instant::now();
    let status = exchange_unix(path, request, WITHIN).await.map(|a| a.status);
    (status, started.elapsed())
}

/// One round of checks: `/healthz` and an ingest on the public listener,
/// `/healthz` on the operations listener, `/healthz` and an ingest on the
/// Unix socket.
type Round = [(Option<u16>, Duration); 5];

/// How many rounds had `expected` status at `place` (an index into `Round`).
fn answered(seen: &[Round], place: usize, expected: u16) -> usize {
    seen.iter().filter(|r| r[place].0 == Some(expected)).count()
}

#[hookd_test_macros::test]
async fn a_reconnecting_crowd_never_holds_the_door_against_health_or_ingest() {
    let sockets = tempfile::tempdir().expect("a folder for the socket");
    let socket = sockets.path().join("hookd.sock");
    let ops: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let Limited {
        hookd,
        server,
        partner,
        service_key,
        receiver,
        ..
    } = &start_limited(&[
        // The crowd's keyed bodies must not spend the producer's budget.
        ("HOOKD_API__SERVICE_RATE_LIMIT_PER_SECOND", "100000"),
        ("HOOKD_API__SERVICE_RATE_LIMIT_BURST", "100000"),
        ("HOOKD_HTTP__OPS_LISTEN", &ops.to_string()),
        ("HOOKD_HTTP__UNIX_SOCKET", socket.to_str().unwrap()),
    ])
    .await;
    let server = *server;

    // Opened one by one (a burst of 1,500 SYNs would overflow the backlog),
    // then each member keeps coming back on its own.
    let mut first = Vec::with_capacity(CROWD);
    for i in 0..CROWD {
        let source = [127, 0, 0, 2 + (i % CROWD_ADDRESSES) as u8];
        let how = if i.is_multiple_of(2) {
            Stall::KeyedBody(service_key)
        } else {
            Stall::Head
        };
        first.push((stall(source, server, how).await, source, how));
    }
    let connected = first.iter().filter(|(s, _, _)| s.is_some()).count();
    assert!(
        connected > CROWD * 9 / 10,
        "the crowd connected: {connected}"
    );
    let until = Instant::now() + COME_BACK * (ROUNDS as u32 + 2);
    let crowd = join_all(
        first
            .into_iter()
            .map(|(stream, source, how)| member(stream, source, server, how, until)),
    );

    let health = b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n";
    let ingest = ingest_request(partner, service_key);
    let checks = async {
        let mut seen = Vec::new();
        let start = tokio::time::Instant::now() + COME_BACK;
        for round in 0..ROUNDS {
            tokio::time::sleep_until(start + COME_BACK * round as u32).await;
            let (h, i, o, uh, ui) = futures_util::join!(
                check(server, health),
                check(server, ingest.as_bytes()),
                check(ops, health),
                check_unix(&socket, health),
                check_unix(&socket, ingest.as_bytes()),
            );
            seen.push([h, i, o, uh, ui]);
        }
        seen
    };
    let (returns, seen) = futures_util::join!(crowd, checks);
    let returns: usize = returns.iter().sum();
    let seen: Vec<Round> = seen;
    let every = [
        answered(&seen, 0, 200),
        answered(&seen, 1, 201),
        answered(&seen, 2, 200),
        answered(&seen, 3, 200),
        answered(&seen, 4, 201),
    ];
    let slowest = seen.iter().flat_map(|r| r.iter().map(|c| c.1)).max();
    println!(
        "crowd: {returns} comebacks; of {ROUNDS} rounds answered within {WITHIN:?}: /healthz {}, \
         ingest {}, ops /healthz {}, unix /healthz {}, unix ingest {}; slowest {slowest:?}",
        every[0], every[1], every[2], every[3], every[4]
    );
    assert!(
        returns > CROWD,
        "the crowd kept coming back ({returns} comebacks), or this test tests nothing"
    );
    assert_eq!(
        every, [ROUNDS; 5],
        "every check answered within {WITHIN:?} (None: no answer in time): {seen:?}"
    );
    receiver
        .wait_for(2 * ROUNDS, Duration::from_secs(15))
        .await
        .expect("every event ingested is delivered");
    let log = hookd.stderr();
    assert!(
        !log.contains("Too many open files"),
        "hookd ran out of files: {log}"
    );
}
