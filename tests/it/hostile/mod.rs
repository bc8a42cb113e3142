//! Hostile clients against a real server on real sockets: stalled heads and
//! bodies, oversized lines, headers and bodies, floods without a key. Every
//! loop is bounded in count and time.

mod crowd;
mod noise;
mod refusals;
mod slowloris;

use crate::harness::{
    self, Backend, answer,
    process::{Hookd, prepare_store},
    receiver::{Receiver, Reply},
    serve::serve_env,
};

use std::{net::SocketAddr, time::Duration};

use awc::http::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWriteExt},
    net::{TcpSocket, TcpStream},
};

/// One answer read off a raw socket.
#[derive(Debug)]
pub struct RawAnswer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl RawAnswer {
    /// A header of the answer, as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        answer::header(&self.headers, name)
    }

    /// The problem+json body; panics (saying what came) if it is not one.
    pub fn problem(&self) -> Value {
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "every refusal is problem+json: {self:?}"
        );
        let problem: Value = serde_json::from_slice(&self.body).expect("a JSON problem body");
        assert_eq!(problem["status"], self.status, "{problem}");
        problem
    }

    /// The problem's type without its base URL.
    pub fn problem_type(&self) -> String {
        let problem = self.problem();
        let kind = problem["type"].as_str().expect("a problem type");
        kind.rsplit('/').next().unwrap_or(kind).to_string()
    }
}

/// A connection from `source` (any 127.x address) to `server`.
pub async fn connect_from(source: [u8; 4], server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((source, 0)))?;
    socket.connect(server).await
}

/// Reads one HTTP/1.1 answer (head, then a `Content-Length` body), or
/// `None` if none is whole within `within`.
pub async fn read_answer(
    stream: &mut (impl AsyncRead + Unpin),
    within: Duration,
) -> Option<RawAnswer> {
    let read = async {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut response = httparse::Response::new(&mut headers);
            if let Ok(httparse::Status::Complete(head_len)) = response.parse(&buf) {
                let mut headers = HeaderMap::new();
                for h in response.headers.iter() {
                    let name = HeaderName::from_bytes(h.name.as_bytes());
                    let value = HeaderValue::from_bytes(h.value);
                    if let (Ok(name), Ok(value)) = (name, value) {
                        headers.append(name, value);
                    }
                }
                let status = response.code.unwrap_or(0);
                let length: usize = answer::header(&headers, "content-length")
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_len + length {
                    let n = stream.read(&mut chunk).await.ok()?;
                    if n == 0 {
                        return None;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let body = buf[head_len..head_len + length].to_vec();
                return Some(RawAnswer {
                    status,
                    headers,
                    body,
                });
            }
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(within, read).await.ok().flatten()
}

/// Sends `bytes` on a new connection from 127.0.0.1 and reads the answer.
pub async fn exchange(server: SocketAddr, bytes: &[u8], within: Duration) -> Option<RawAnswer> {
    let mut stream = connect_from([127, 0, 0, 1], server).await.ok()?;
    // The server may answer and close before it has read everything.
    let _ = stream.write_all(bytes).await;
    read_answer(&mut stream, within).await
}

/// Sends `bytes` on a new connection to the Unix socket at `path` and
/// reads the answer.
pub async fn exchange_unix(
    path: &std::path::Path,
    bytes: &[u8],
    within: Duration,
) -> Option<RawAnswer> {
    let mut stream = tokio::net::UnixStream::connect(path).await.ok()?;
    let _ = stream.write_all(bytes).await;
    read_answer(&mut stream, within).await
}

/// The file limit a crowd test runs `hookd` under: half of it (512) is left
/// for client connections.
pub const FILE_LIMIT: u64 = 1024;

/// A real `hookd serve` under `FILE_LIMIT`, over SQLite, whose one partner
/// has an endpoint at `receiver` (answering 204). Head and body deadlines are
/// far beyond any test: the caps must do the work.
pub struct Limited {
    pub hookd: Hookd,
    pub server: SocketAddr,
    pub partner: String,
    pub service_key: String,
    pub receiver: Receiver,
    _work: tempfile::TempDir,
    _db: Option<tempfile::TempDir>,
}

/// Starts a `Limited` hookd with `extra` configuration and waits until it is
/// healthy. Raises this process's own file limit first: it holds the crowd.
pub async fn start_limited(extra: &[(&str, &str)]) -> Limited {
    rlimit::increase_nofile_limit(16_384).expect("a higher file limit for the test");
    let (url, db) = harness::database(Backend::Sqlite).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(204));
    let (partner, service_key) = prepare_store(&url, &receiver.url(), 4).await;
    let work = tempfile::tempdir().expect("a working folder");
    let mut keys = vec![
        ("HOOKD_HTTP__HEADER_TIMEOUT", "60s"),
        ("HOOKD_HTTP__BODY_TIMEOUT", "60s"),
        ("HOOKD_LOG__FILTER", "warn"),
    ];
    keys.extend_from_slice(extra);
    let (listen, env) = serve_env(&url, &keys);
    let mut hookd =
        Hookd::start_with_file_limit(FILE_LIMIT, &["serve"], &env, work.path(), "hookd");
    let http = awc::Client::default();
    hookd
        .wait_healthy(&http, &format!("http://{listen}"), Duration::from_secs(30))
        .await;
    Limited {
        hookd,
        server: listen.parse().expect("an address"),
        partner,
        service_key,
        receiver,
        _work: work,
        _db: db,
    }
}

/// Where a stalled connection stops.
#[derive(Debug, Clone, Copy)]
pub enum Stall<'a> {
    /// Half a head.
    Head,
    /// A whole head (a sign-in form promising 1 kB) and a sliver of its body.
    FormBody,
    /// A whole head with this valid service key, promising 1 kB of events,
    /// and a sliver of the body: it passes the key check and waits.
    KeyedBody(&'a str),
}

/// Opens a connection from `source` that stalls as `how` says.
pub async fn stall(source: [u8; 4], server: SocketAddr, how: Stall<'_>) -> Option<TcpStream> {
    let mut stream = connect_from(source, server).await.ok()?;
    let bytes = match how {
        Stall::Head => "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Le".to_string(),
        Stall::FormBody => "POST /dashboard/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nkey=".to_string(),
        Stall::KeyedBody(key) => format!(
            "POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{{\"type\":"
        ),
    };
    let _ = stream.write_all(bytes.as_bytes()).await;
    Some(stream)
}

/// A whole `POST /v1/events` with one event for `partner`, keyed with
/// `service_key`.
pub fn ingest_request(partner: &str, service_key: &str) -> String {
    let body = format!(
        r#"{{"type":"balance.updated","partner_id":"{partner}","data":{{"customer_id":"cus_204","currency":"USD","balance":"1.00"}}}}"#
    );
    format!(
        "POST /v1/events HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer {service_key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}
