//! Hostile clients against a real server on real sockets: stalled heads and
//! bodies, oversized lines, headers and bodies, floods without a key. Every
//! loop is bounded in count and time.

mod refusals;
mod slowloris;

use crate::harness::answer;

use std::{net::SocketAddr, time::Duration};

use awc::http::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
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
pub async fn read_answer(stream: &mut TcpStream, within: Duration) -> Option<RawAnswer> {
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
