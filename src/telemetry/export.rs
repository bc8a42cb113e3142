//! The OTLP/HTTP client: one blocking `POST` per batch over a fresh
//! connection (plain TCP or rustls with ring), on the SDK's exporter thread,
//! never on an actor's. A failing collector is logged once when it starts
//! failing and once when it answers again, not per batch.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream, ToSocketAddrs},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// The most of a collector's answer read (its status line is what counts).
const MAX_ANSWER: u64 = 64 * 1024;

pub(super) struct Collector {
    endpoint: String,
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
    failing: AtomicBool,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Collector {
    pub(super) fn new(endpoint: &str, tls: Arc<rustls::ClientConfig>, timeout: Duration) -> Self {
        Collector {
            endpoint: endpoint.to_string(),
            tls,
            timeout,
            failing: AtomicBool::new(false),
        }
    }

    /// Logs a change between answering and failing, and nothing else.
    fn note(&self, failure: Option<String>) {
        match (change(&self.failing, failure.is_some()), failure) {
            (Some(Change::Failing), Some(why)) => tracing::warn!(
                endpoint = %self.endpoint,
                error = %why,
                "the trace collector cannot be reached; spans are dropped until it answers (deliveries are not affected)"
            ),
            (Some(Change::Recovered), _) => {
                tracing::info!(endpoint = %self.endpoint, "the trace collector answers again");
            }
            _ => {}
        }
    }
}

/// A change worth one log line.
#[derive(Debug, PartialEq)]
enum Change {
    Failing,
    Recovered,
}

/// Records one export's outcome in `failing`; what changed, if anything.
fn change(failing: &AtomicBool, failed: bool) -> Option<Change> {
    match (failing.swap(failed, Ordering::Relaxed), failed) {
        (false, true) => Some(Change::Failing),
        (true, false) => Some(Change::Recovered),
        _ => None,
    }
}

#[async_trait::async_trait]
impl HttpClient for Collector {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        // Blocking I/O is right here: the batch processor runs each export on
        // its own thread (`futures_executor::block_on`), not on a runtime.
        let answer = post(&request, &self.tls, self.timeout);
        self.note(match &answer {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!("it answered {}", r.status())),
            Err(e) => Some(e.to_string()),
        });
        answer
    }
}

/// Either side of the connection.
trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

fn post(
    request: &Request<Bytes>,
    tls: &Arc<rustls::ClientConfig>,
    timeout: Duration,
) -> Result<Response<Bytes>, HttpError> {
    let uri = request.uri();
    let host = uri.host().ok_or("the collector URL has no host")?;
    let https = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tcp = connect(host, port, timeout)?;
    tcp.set_read_timeout(Some(timeout))?;
    tcp.set_write_timeout(Some(timeout))?;
    let mut stream: Box<dyn Stream> = if https {
        let name = rustls::pki_types::ServerName::try_from(host.to_string())?;
        let conn = rustls::ClientConnection::new(tls.clone(), name)?;
        Box::new(rustls::StreamOwned::new(conn, tcp))
    } else {
        Box::new(tcp)
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
        uri.authority().map_or(host, |a| a.as_str()),
        request.body().len()
    );
    for (name, value) in request.headers() {
        if let Ok(value) = value.to_str() {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(request.body())?;
    stream.flush()?;
    let mut answer = Vec::new();
    // A TLS peer that closes without close_notify is an error to rustls;
    // what was read before it is the answer all the same.
    let read = stream.take(MAX_ANSWER).read_to_end(&mut answer);
    if answer.is_empty() {
        read?;
    }
    let status = status_of(&answer).ok_or("the collector's answer is not HTTP")?;
    Ok(Response::builder().status(status).body(Bytes::new())?)
}

/// The status code of an HTTP/1.x answer.
fn status_of(answer: &[u8]) -> Option<u16> {
    let line = answer.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split_whitespace();
    parts.next().filter(|v| v.starts_with("HTTP/1."))?;
    parts.next()?.parse().ok()
}

/// Connects to the first of the collector's addresses that answers.
#[allow(
    clippy::disallowed_methods,
    reason = "the collector is the operator's own address, not a partner's: the egress policy is for callbacks"
)]
fn connect(host: &str, port: u16, timeout: Duration) -> std::io::Result<TcpStream> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    let mut last = std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{host} has no address"),
    );
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_collector_is_reported_once_and_its_recovery_once() {
        let failing = AtomicBool::new(false);
        let seen: Vec<Option<Change>> = [true, true, true, false, false, true]
            .into_iter()
            .map(|failed| change(&failing, failed))
            .collect();
        assert_eq!(
            seen,
            [
                Some(Change::Failing),
                None,
                None,
                Some(Change::Recovered),
                None,
                Some(Change::Failing)
            ]
        );
    }

    #[test]
    fn the_status_comes_from_the_status_line() {
        assert_eq!(status_of(b"HTTP/1.1 200 OK\r\n\r\n"), Some(200));
        assert_eq!(status_of(b"HTTP/1.0 503 Busy\r\nx: y\r\n"), Some(503));
        assert_eq!(status_of(b"SSH-2.0-OpenSSH\r\n"), None);
        assert_eq!(status_of(b""), None);
    }
}
