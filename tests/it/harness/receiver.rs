//! Owns the scriptable HTTP/1.1 webhook receiver for tests: it records every request and answers from a script.
//!
//! Plain tokio TCP and `httparse`: HTTP/1.1 with keep-alive (several requests per connection, one
//! after another), request bodies by `Content-Length` or `Transfer-Encoding: chunked`, and
//! `Expect: 100-continue`. Every response carries `Content-Length`. The same server can speak
//! TLS (rustls, via `start_tls`): it then records the SNI name each client presents. Per request
//! path it counts requests in flight (now and at most) and deliveries by `webhook-id`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::{JoinHandle, JoinSet};

/// How the receiver answers one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Answer with this status, optional extra headers, and body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Wait this long before answering with the inner reply.
    Delay(Duration, Box<Reply>),
    /// Close the connection after reading the request, without answering.
    Drop,
    /// Send the status line and headers (`200`, `Content-Length: 1000000`) and a few body bytes,
    /// then stall (keep the socket open, send nothing more) for this long, then close.
    StallBody(Duration),
    /// Read the request, then never answer (keep socket open) for this long, then close.
    StallHeaders(Duration),
}

impl Reply {
    /// This status with an empty body.
    pub fn status(code: u16) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// This status with a `Retry-After: value` header and an empty body.
    pub fn retry_after(code: u16, value: &str) -> Reply {
        Reply::Status {
            code,
            headers: vec![("Retry-After".to_string(), value.to_string())],
            body: Vec::new(),
        }
    }

    /// This status with this body.
    pub fn with_body(code: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

/// One request as the receiver read it.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    /// The request target as sent, query string included.
    pub path: String,
    /// In arrival order; names lowercased, values as sent (lossily decoded as UTF-8).
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked if it came chunked.
    pub body: Vec<u8>,
    /// When the body had been read in full.
    pub at: Instant,
    /// When its first bytes were read (a client stopped mid-request sends the
    /// rest later).
    pub started: Instant,
    #[allow(dead_code)] // kept for tests that look at the client side of a connection
    pub peer: SocketAddr,
}

impl Received {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A scriptable HTTP/1.1 server (on 127.0.0.1 unless started elsewhere, plain or TLS) that
/// records every request.
///
/// Dropping it stops accepting and closes the connections it has open.
pub struct Receiver {
    addr: SocketAddr,
    tls: bool,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

struct Shared {
    state: Mutex<State>,
    /// Woken whenever a request is recorded.
    arrived: Notify,
}

struct State {
    script: VecDeque<Reply>,
    default: Reply,
    received: Vec<Received>,
    connections: usize,
    /// One entry per TLS ClientHello, in arrival order.
    sni: Vec<Option<String>>,
    paths: HashMap<String, PathTally>,
}

/// One request path's requests: in flight (read, not yet fully answered) now and at most, and
/// how many came with each `webhook-id`.
#[derive(Default)]
struct PathTally {
    in_flight: usize,
    max_in_flight: usize,
    by_id: HashMap<String, usize>,
}

/// Ends a request's time in flight when it is answered, or its connection closes or is aborted.
struct Answering<'a> {
    shared: &'a Shared,
    path: String,
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        if let Some(tally) = self.shared.state().paths.get_mut(&self.path) {
            tally.in_flight -= 1;
        }
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State inconsistent: keep going.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Receiver {
    /// Binds 127.0.0.1:0 and serves in a spawned tokio task, answering 200 to everything until
    /// scripted otherwise. Must be called inside a tokio runtime (current-thread is fine).
    ///
    /// Panics if it cannot bind a port.
    pub async fn start() -> Receiver {
        Receiver::start_on(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("receiver: cannot bind 127.0.0.1:0")
    }

    /// Like `start`, but on a given address (e.g. `127.0.0.2:PORT`, to share a port number with
    /// another receiver on 127.0.0.1; port 0 picks a free one).
    pub async fn start_on(addr: SocketAddr) -> std::io::Result<Receiver> {
        Receiver::bind(addr, None).await
    }

    /// Like `start_on`, but speaking TLS (HTTP/1.1 inside) with this server config, e.g. from
    /// `TestCa::server_config`.
    ///
    /// A connection whose handshake fails (say the client rejects the certificate) counts in
    /// `connections()` but records no request; its SNI is in `sni()` if its ClientHello arrived.
    pub async fn start_tls(
        addr: SocketAddr,
        tls: Arc<rustls::ServerConfig>,
    ) -> std::io::Result<Receiver> {
        Receiver::bind(addr, Some(tls)).await
    }

    async fn bind(
        addr: SocketAddr,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> std::io::Result<Receiver> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: VecDeque::new(),
                default: Reply::status(200),
                received: Vec::new(),
                connections: 0,
                sni: Vec::new(),
                paths: HashMap::new(),
            }),
            arrived: Notify::new(),
        });
        let is_tls = tls.is_some();
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared), tls));
        Ok(Receiver {
            addr,
            tls: is_tls,
            shared,
            accept,
        })
    }

    /// `http://IP:PORT` (no trailing slash); `https://IP:PORT` for a TLS receiver.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replies used for the next requests in order (appended to what is left of the script);
    /// when the script runs out, `set_default` applies (initially 200).
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.state().script.extend(replies);
    }

    /// The reply for requests that come when the script has run out.
    pub fn set_default(&self, reply: Reply) {
        self.shared.state().default = reply;
    }

    /// All requests received so far (including ones answered with Drop/Stall).
    pub fn received(&self) -> Vec<Received> {
        self.shared.state().received.clone()
    }

    /// How many requests have been received so far.
    pub fn count(&self) -> usize {
        self.shared.state().received.len()
    }

    /// Waits until at least `n` requests have been received, or `timeout` passes; returns all
    /// requests received (Err with a message saying how many arrived, on timeout).
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Result<Vec<Received>, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.arrived.notified();
            tokio::pin!(notified);
            // Register before looking, so that a request recorded in between is not missed.
            notified.as_mut().enable();
            let count = {
                let state = self.shared.state();
                if state.received.len() >= n {
                    return Ok(state.received.clone());
                }
                state.received.len()
            };
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let count = self.count().max(count);
                return Err(format!(
                    "receiver {}: timed out after {timeout:?} waiting for {n} request(s): {count} arrived",
                    self.url()
                ));
            }
        }
    }

    /// Number of TCP connections accepted so far (for TLS, whether or not the handshake worked).
    pub fn connections(&self) -> usize {
        self.shared.state().connections
    }

    /// The SNI server names presented by TLS clients so far, in order: one entry per connection
    /// whose ClientHello arrived (whether or not the handshake then succeeded), `None` for a
    /// client that sent no SNI (e.g. one connecting to an IP address). Always empty for a plain
    /// receiver.
    pub fn sni(&self) -> Vec<Option<String>> {
        self.shared.state().sni.clone()
    }

    /// The most requests any one path has had in flight at once (read in full, not yet answered
    /// in full): for an endpoint per path, the concurrency its sender kept to.
    pub fn max_in_flight_per_path(&self) -> usize {
        let state = self.shared.state();
        state
            .paths
            .values()
            .map(|t| t.max_in_flight)
            .max()
            .unwrap_or(0)
    }

    /// Per path, the most requests it has had in flight at once (for assertion messages).
    pub fn peak_in_flight(&self) -> BTreeMap<String, usize> {
        let state = self.shared.state();
        state
            .paths
            .iter()
            .map(|(p, t)| (p.clone(), t.max_in_flight))
            .collect()
    }

    /// How many requests each (path, `webhook-id`) pair got; requests without the header are not
    /// counted.
    pub fn deliveries(&self) -> HashMap<(String, String), usize> {
        let state = self.shared.state();
        let by_pair = state.paths.iter().flat_map(|(path, t)| {
            t.by_id
                .iter()
                .map(|(id, n)| ((path.clone(), id.clone()), *n))
        });
        by_pair.collect()
    }

    /// How many distinct (path, `webhook-id`) pairs have arrived: a cheap progress check.
    pub fn distinct_deliveries(&self) -> usize {
        self.shared
            .state()
            .paths
            .values()
            .map(|t| t.by_id.len())
            .sum()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // The accept task owns the connection tasks (a JoinSet): aborting it ends them too.
        self.accept.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    shared.state().connections += 1;
                    connections.spawn(connection(stream, peer, Arc::clone(&shared), tls.clone()));
                }
                // E.g. out of file descriptors: don't spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            // Reap finished connection tasks.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Limits that keep a misbehaving client from using up memory.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;
const MAX_HEADERS: usize = 128;

/// One accepted TCP connection: the TLS handshake if the receiver speaks TLS, then requests.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let _ = stream.set_nodelay(true);
    let Some(config) = tls else {
        return serve_connection(stream, peer, shared).await;
    };
    // Read the ClientHello first, so that SNI is recorded even if the handshake then fails.
    let acceptor =
        tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), stream);
    let Ok(start) = acceptor.await else {
        return;
    };
    let sni = start.client_hello().server_name().map(str::to_string);
    shared.state().sni.push(sni);
    // A failed handshake (e.g. the client rejected the certificate) just ends the connection.
    if let Ok(stream) = start.into_stream(config).await {
        serve_connection(stream, peer, shared).await;
    }
}

/// Serves requests on one connection until it closes, fails, or a reply ends it.
async fn serve_connection<S>(mut stream: S, peer: SocketAddr, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // Bytes read but not yet used (a pipelined next request may start here).
    let mut buf = Vec::with_capacity(8192);
    while let Some(request) = read_request(&mut stream, &mut buf, peer).await {
        let keep_alive = request.keep_alive;
        let head = request.received.method == "HEAD";
        let path = request.received.path.clone();
        let reply = {
            let mut state = shared.state();
            let tally = state.paths.entry(path.clone()).or_default();
            tally.in_flight += 1;
            tally.max_in_flight = tally.max_in_flight.max(tally.in_flight);
            if let Some(id) = request.received.header("webhook-id") {
                *tally.by_id.entry(id.to_string()).or_default() += 1;
            }
            state.received.push(request.received);
            let reply = state
                .script
                .pop_front()
                .unwrap_or_else(|| state.default.clone());
            drop(state);
            shared.arrived.notify_waiters();
            reply
        };
        let _answering = Answering {
            shared: &shared,
            path,
        };
        if !answer(&mut stream, reply, keep_alive, head).await {
            return;
        }
    }
}

struct Request {
    received: Received,
    keep_alive: bool,
}

/// Reads one request (head and body); `None` if the connection closed, failed or sent garbage.
async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    peer: SocketAddr,
) -> Option<Request> {
    // The head.
    // Bytes already read (pipelined) started it now; else the first read does.
    let mut started = (!buf.is_empty()).then(Instant::now);
    let (head_len, method, path, headers, version) = loop {
        let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut slots);
        match req.parse(buf) {
            Ok(httparse::Status::Complete(len)) => {
                let headers: Vec<(String, String)> = req
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_ascii_lowercase(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect();
                break (
                    len,
                    req.method?.to_string(),
                    req.path?.to_string(),
                    headers,
                    req.version?,
                );
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {
                if !fill(stream, buf).await {
                    return None;
                }
                started.get_or_insert_with(Instant::now);
            }
            _ => {
                let _ = stream
                    .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
                // A TLS stream may hold written bytes back until flushed.
                let _ = stream.flush().await;
                return None;
            }
        }
    };
    buf.drain(..head_len);
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let has_token = |name: &str, token: &str| {
        headers
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, v)| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    let keep_alive = if version == 0 {
        has_token("connection", "keep-alive")
    } else {
        !has_token("connection", "close")
    };
    if find("expect").is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue")) {
        stream
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .ok()?;
        stream.flush().await.ok()?;
    }

    // The body.
    let body = if has_token("transfer-encoding", "chunked") {
        read_chunked(stream, buf).await?
    } else {
        let len = match find("content-length") {
            Some(v) => v.trim().parse::<usize>().ok().filter(|&n| n <= MAX_BODY)?,
            None => 0,
        };
        while buf.len() < len {
            if !fill(stream, buf).await {
                return None;
            }
        }
        buf.drain(..len).collect()
    };
    Some(Request {
        received: Received {
            method,
            path,
            headers,
            body,
            at: Instant::now(),
            started: started.unwrap_or_else(Instant::now),
            peer,
        },
        keep_alive,
    })
}

/// Reads a chunked body (trailers are read and discarded); `None` on close or malformed input.
async fn read_chunked<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(stream, buf).await?;
        let size = line.split(|&b| b == b';').next()?;
        let size = std::str::from_utf8(size).ok()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        if size == 0 {
            // Trailers, up to an empty line.
            while !read_line(stream, buf).await?.is_empty() {}
            return Some(body);
        }
        if body.len() + size > MAX_BODY {
            return None;
        }
        while buf.len() < size + 2 {
            if !fill(stream, buf).await {
                return None;
            }
        }
        if &buf[size..size + 2] != b"\r\n" {
            return None;
        }
        body.extend(buf.drain(..size));
        buf.drain(..2);
    }
}

/// One CRLF-terminated line, without the CRLF.
async fn read_line<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(pos) = buf.windows(2).position(|w| w == b"\r\n") {
            let line = buf[..pos].to_vec();
            buf.drain(..pos + 2);
            return Some(line);
        }
        if buf.len() > MAX_HEAD || !fill(stream, buf).await {
            return None;
        }
    }
}

/// Reads more bytes into `buf`; false on EOF or error.
async fn fill<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 8192];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

/// Sends `reply`; true if the connection may serve another request.
async fn answer<S: AsyncWrite + Unpin>(
    stream: &mut S,
    mut reply: Reply,
    keep_alive: bool,
    head: bool,
) -> bool {
    loop {
        match reply {
            Reply::Delay(wait, inner) => {
                tokio::time::sleep(wait).await;
                reply = *inner;
            }
            Reply::Drop => return false,
            Reply::StallHeaders(wait) => {
                tokio::time::sleep(wait).await;
                return false;
            }
            Reply::StallBody(wait) => {
                let start = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nContent-Type: text/plain\r\n\r\nstalling";
                if stream.write_all(start).await.is_ok() {
                    let _ = stream.flush().await;
                    tokio::time::sleep(wait).await;
                }
                return false;
            }
            Reply::Status {
                code,
                headers,
                body,
            } => {
                let mut out = format!("HTTP/1.1 {code} {}\r\n", reason(code)).into_bytes();
                for (name, value) in &headers {
                    out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
                }
                if !headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                {
                    out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
                }
                if !keep_alive {
                    out.extend_from_slice(b"Connection: close\r\n");
                }
                out.extend_from_slice(b"\r\n");
                if !head {
                    out.extend_from_slice(&body);
                }
                if stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
                    return false;
                }
                if !keep_alive {
                    let _ = stream.shutdown().await;
                }
                return keep_alive;
            }
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
