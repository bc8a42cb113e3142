//! What hookd answers to requests it will not take: the key before the body
//! (401 before 413), problem+json even for what the HTTP parser refuses,
//! deadlines for heads and bodies, and a budget for requests without a key.

use hookd_test_macros::both_backends;
use std::{net::SocketAddr, time::Duration};

use tokio::io::AsyncWriteExt;

use super::{connect_from, exchange, read_answer};
use crate::harness::spawn_app_with;

const SOON: Duration = Duration::from_secs(1);

fn post_head(path: &str, key: Option<&str>, content_type: &str, length: usize) -> String {
    let auth = key.map_or(String::new(), |k| format!("Authorization: Bearer {k}\r\n"));
    format!(
        "POST {path} HTTP/1.1\r\nHost: hookd\r\n{auth}Content-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n"
    )
}

fn addr(base_url: &str) -> SocketAddr {
    base_url
        .trim_start_matches("http://")
        .parse()
        .expect("the test server's address")
}

#[both_backends]
async fn the_key_is_checked_before_any_body_is_read(app: TestApp) {
    let server = addr(&app.base_url);
    let routes = [
        "/v1/events",
        "/v1/endpoints",
        "/v1/endpoints/ep_x/secret/rotate",
        "/v1/endpoints/ep_x/recover",
        "/v1/admin/partners",
    ];
    for route in routes {
        // A head that promises 100 kB, then ten bytes, then nothing.
        let request = post_head(route, Some("hks_garbage"), "application/json", 100_000);
        let answer = exchange(server, format!("{request}{{\"a\":\"bc\"").as_bytes(), SOON)
            .await
            .unwrap_or_else(|| panic!("{route}: no answer within 1 s to a stalled body"));
        assert_eq!(answer.status, 401, "{route}: {answer:?}");
        assert_eq!(answer.problem_type(), "unauthorized", "{route}");
    }
    let patch = "PATCH /v1/endpoints/ep_x HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
    let answer = exchange(server, patch.as_bytes(), SOON)
        .await
        .expect("PATCH without a key is answered at once");
    assert_eq!(answer.status, 401);

    // A body declared over the limit: 401 without a key, 413 with one.
    let huge = post_head("/v1/events", None, "application/json", 1 << 30);
    let answer = exchange(server, huge.as_bytes(), SOON)
        .await
        .expect("an answer");
    assert_eq!(
        answer.status, 401,
        "an unauthenticated client never learns sizes"
    );
    let huge = post_head(
        "/v1/events",
        Some(&app.service_key),
        "application/json",
        1 << 30,
    );
    let answer = exchange(server, huge.as_bytes(), SOON)
        .await
        .expect("an answer");
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(answer.problem_type(), "payload-too-large");

    let partner_key = app.partner_key().await;
    let big = format!("{{\"url\":\"https://x.example/{}\"}}", "a".repeat(100_000));
    let request = post_head(
        "/v1/endpoints",
        Some(&partner_key),
        "application/json",
        big.len(),
    );
    let answer = exchange(server, format!("{request}{big}").as_bytes(), SOON)
        .await
        .expect("an answer");
    assert_eq!(answer.status, 413, "partner bodies are small: {answer:?}");
    answer.problem();
}

#[both_backends]
async fn a_body_must_be_json_on_every_route_that_takes_one(app: TestApp) {
    let server = addr(&app.base_url);
    let partner_key = app.partner_key().await;
    let operator_key = app.operator_key().await;
    let cases = [
        ("/v1/events", app.service_key.clone()),
        ("/v1/endpoints", partner_key),
        ("/v1/admin/partners", operator_key),
    ];
    for (route, key) in cases {
        for content_type in ["text/plain", "application/x-www-form-urlencoded"] {
            let body = r#"{"name":"x"}"#;
            let head = post_head(route, Some(&key), content_type, body.len());
            let answer = exchange(server, format!("{head}{body}").as_bytes(), SOON)
                .await
                .expect("an answer");
            assert_eq!(
                answer.status, 415,
                "{route} with {content_type}: {answer:?}"
            );
            assert_eq!(answer.problem_type(), "unsupported-media-type");
        }
    }
}

/// A head that asks for `100 Continue` before its `length`-byte JSON body.
fn expecting_head(path: &str, key: Option<&str>, length: usize) -> String {
    let head = post_head(path, key, "application/json", length);
    head.replacen("\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n", 1)
}

#[both_backends]
async fn a_client_expecting_100_continue_hears_it_only_with_a_valid_key(app: TestApp) {
    let server = addr(&app.base_url);
    for key in [None, Some("hks_garbage")] {
        let head = expecting_head("/v1/events", key, 100);
        let answer = exchange(server, head.as_bytes(), SOON)
            .await
            .expect("an answer to the head alone");
        assert_eq!(
            answer.status, 401,
            "key {key:?}: no 100 before the key: {answer:?}"
        );
        assert_eq!(answer.problem_type(), "unauthorized");
    }

    // A valid key hears 100, sends its body, and the event is taken.
    let body = format!(
        r#"{{"type":"balance.updated","partner_id":"{}","data":{{"customer_id":"cus_1","currency":"USD","balance":"1.00"}}}}"#,
        app.partner_id
    );
    let head = expecting_head("/v1/events", Some(&app.service_key), body.len());
    let mut stream = connect_from([127, 0, 0, 1], server)
        .await
        .expect("a connection");
    stream
        .write_all(head.as_bytes())
        .await
        .expect("the head is sent");
    let go_on = read_answer(&mut stream, SOON).await.expect("an answer");
    assert_eq!(
        go_on.status, 100,
        "a valid key may send its body: {go_on:?}"
    );
    stream
        .write_all(body.as_bytes())
        .await
        .expect("the body is sent");
    let answer = read_answer(&mut stream, SOON).await.expect("an answer");
    assert_eq!(answer.status, 201, "{answer:?}");

    // A form without a key (the dashboard's sign-in) still hears 100 at once.
    let form = "POST /dashboard/login HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n";
    let answer = exchange(server, form.as_bytes(), SOON)
        .await
        .expect("an answer");
    assert_eq!(answer.status, 100, "{answer:?}");
}

/// Raw requests the HTTP parser itself refuses, and what each must get.
pub(super) fn malformed() -> Vec<(&'static str, Vec<u8>, u16, &'static str)> {
    let long_target = format!(
        "GET /v1/endpoints?q={} HTTP/1.1\r\nHost: h\r\n\r\n",
        "a".repeat(100_000)
    );
    let medium_target = format!(
        "GET /v1/endpoints?q={} HTTP/1.1\r\nHost: h\r\n\r\n",
        "a".repeat(10_000)
    );
    let huge_header = format!(
        "GET /healthz HTTP/1.1\r\nHost: h\r\nX-Big: {}\r\n\r\n",
        "b".repeat(200_000)
    );
    let many_headers = format!(
        "GET /healthz HTTP/1.1\r\nHost: h\r\n{}\r\n",
        (0..120)
            .map(|i| format!("X-H{i}: v\r\n"))
            .collect::<String>()
    );
    vec![
        ("a 100 kB request target", long_target.into_bytes(), 414, "uri-too-long"),
        ("a 10 kB request target", medium_target.into_bytes(), 414, "uri-too-long"),
        ("a 200 kB header", huge_header.into_bytes(), 431, "headers-too-large"),
        ("120 headers", many_headers.into_bytes(), 431, "headers-too-large"),
        (
            "Content-Length with chunked",
            b"POST /v1/events HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec(),
            400,
            "bad-request",
        ),
        ("HTTP/0.9", b"GET /\r\n".to_vec(), 400, "bad-request"),
        (
            "a TLS client hello",
            vec![0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a],
            400,
            "bad-request",
        ),
    ]
}

#[both_backends]
async fn what_the_parser_refuses_is_answered_with_problem_json(app: TestApp) {
    let server = addr(&app.base_url);
    for (what, bytes, status, kind) in malformed() {
        let answer = exchange(server, &bytes, Duration::from_secs(3))
            .await
            .unwrap_or_else(|| panic!("{what}: no answer"));
        assert_eq!(answer.status, status, "{what}: {answer:?}");
        assert_eq!(answer.problem_type(), kind, "{what}");
    }
    // And the server is none the worse for it.
    let answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", SOON)
        .await
        .expect("health after the garbage");
    assert_eq!(answer.status, 200);
}

/// Sends `bytes`, a request that stops short, and checks that hookd answers
/// it 408 `request-timeout` near its 1 s deadline; `what` names it.
async fn cut_near_one_second(server: SocketAddr, bytes: &[u8], what: &str) {
    let started = std::time::Instant::now();
    let answer = exchange(server, bytes, Duration::from_secs(4))
        .await
        .unwrap_or_else(|| panic!("{what} is answered"));
    assert_eq!(answer.status, 408, "{what}: {answer:?}");
    assert_eq!(answer.problem_type(), "request-timeout", "{what}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{what}: cut near 1 s"
    );
}

#[both_backends]
async fn heads_and_bodies_that_stall_are_cut_at_their_deadlines(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[
            ("HOOKD_HTTP__HEADER_TIMEOUT", "1s"),
            ("HOOKD_HTTP__BODY_TIMEOUT", "1s"),
        ],
    )
    .await;
    let server = addr(&app.base_url);
    let head = b"GET /healthz HTTP/1.1\r\nHost: h\r\n";
    cut_near_one_second(server, head, "a stalled head").await;
    let head = post_head(
        "/v1/events",
        Some(&app.service_key),
        "application/json",
        1000,
    );
    let body = format!("{head}[{{\"type\":");
    cut_near_one_second(server, body.as_bytes(), "a stalled body").await;
    assert_eq!(app.count("SELECT COUNT(*) AS n FROM outbox_event").await, 0);
}

#[both_backends]
async fn a_flood_without_a_key_is_throttled_per_address(app: TestApp) {
    let server = addr(&app.base_url);
    let request =
        b"GET /v1/endpoints HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer hkp_guess\r\n\r\n";
    let mut stream = connect_from([127, 0, 0, 3], server)
        .await
        .expect("a connection");
    let (mut unauthorized, mut throttled) = (0, 0);
    for _ in 0..200 {
        stream
            .write_all(request)
            .await
            .expect("the request is sent");
        let answer = read_answer(&mut stream, SOON).await.expect("an answer");
        match answer.status {
            401 => unauthorized += 1,
            429 => {
                throttled += 1;
                assert_eq!(answer.problem_type(), "rate-limited");
                assert!(answer.header("retry-after").is_some(), "{answer:?}");
            }
            other => panic!("a guess got {other}: {answer:?}"),
        }
    }
    assert!(throttled >= 100, "{throttled} of 200 guesses throttled");
    assert!(
        unauthorized <= 70,
        "at most the burst and its refill: {unauthorized}"
    );
    // Another address has its own budget.
    let mut other = connect_from([127, 0, 0, 4], server)
        .await
        .expect("a connection");
    other.write_all(request).await.expect("sent");
    let answer = read_answer(&mut other, SOON).await.expect("an answer");
    assert_eq!(answer.status, 401, "{answer:?}");
}
