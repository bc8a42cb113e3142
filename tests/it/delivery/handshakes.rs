//! Handshakes that never complete: a receiver whose port takes no new
//! connection (a full accept queue drops each SYN, as a filtered port or a
//! black hole would) fails as `connect`, and one that accepts the connection
//! but never answers the TLS ClientHello fails as `tls`, each within the
//! connect timeout (1 s here, the request timeout 2 s), left to be retried.

use std::{
    net::{SocketAddr, TcpListener, TcpStream},
    time::Duration,
};

use serde_json::json;

use super::assert_ended_within;
use crate::harness::{Backend, WAIT, spawn_app};
use hookd_test_macros::both_backends;

/// A port on loopback whose handshakes never complete: listening with an
/// accept queue of one, filled, and never accepting. Keep it (and the
/// fillers) alive while the test runs.
fn black_hole() -> (TcpListener, Vec<TcpStream>, SocketAddr) {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
    let any: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    socket.bind(&any.into()).expect("bound");
    socket.listen(0).expect("listening");
    let listener: TcpListener = socket.into();
    let addr = listener.local_addr().expect("its address");
    // Fill the queue; a connect then waits for a SYN-ACK that never comes.
    let mut fillers = Vec::new();
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(s) => fillers.push(s),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => break,
            Err(e) => panic!("filling the accept queue of {addr}: {e}"),
        }
        assert!(
            fillers.len() < 16,
            "the accept queue of {addr} never filled"
        );
    }
    (listener, fillers, addr)
}

/// A port that accepts each connection and reads, but never writes a byte:
/// a TLS ClientHello goes unanswered.
fn silent_after_accept() -> (std::thread::JoinHandle<()>, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bound");
    let addr = listener.local_addr().expect("its address");
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming().flatten() {
            open.push(stream);
            if open.len() >= 8 {
                break;
            }
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    (held, addr)
}

/// Sends one event to `url` and checks its first attempt failed as
/// `category`, with a detail naming what did not complete, after at least
/// most of the 1 s connect timeout and well inside the 2 s request timeout.
async fn fails_within_the_connect_timeout(backend: Backend, url: &str, category: &str, says: &str) {
    let app = spawn_app(backend).await;
    let (endpoint, _) = app.endpoint(url).await;
    let event = app.publish("a.b", json!({})).await;
    let a = app.attempts_when(&event, &endpoint, 1).await.swap_remove(0);
    assert_eq!(
        a.error_category.as_deref(),
        Some(category),
        "{url}: {:?}",
        a.error_detail
    );
    let detail = a.error_detail.clone().unwrap_or_default();
    assert!(
        detail.contains(says),
        "the detail says what did not complete: {detail}"
    );
    assert!(
        a.latency_ms.unwrap_or(0) >= 900,
        "it waited out the 1 s connect timeout, not an instant refusal: {:?} ms",
        a.latency_ms
    );
    assert_ended_within(
        &a,
        1900,
        "the connect timeout (1 s), not the request timeout (2 s)",
    );
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
}

#[both_backends]
async fn a_tcp_handshake_that_never_completes_fails_as_connect_within_the_connect_timeout(
    backend: Backend,
) {
    let (_listener, _fillers, addr) = black_hole();
    let url = format!("http://{addr}/hooks");
    fails_within_the_connect_timeout(backend, &url, "connect", "TCP handshake did not complete")
        .await;
}

#[both_backends]
async fn a_tls_handshake_that_never_completes_fails_as_tls_within_the_connect_timeout(
    backend: Backend,
) {
    let (_held, addr) = silent_after_accept();
    let url = format!("https://{addr}/hooks");
    fails_within_the_connect_timeout(backend, &url, "tls", "handshake did not complete").await;
}
