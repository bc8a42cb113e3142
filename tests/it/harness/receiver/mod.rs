//! Owns the scriptable HTTP/1.1 webhook receiver for tests: it records every request and answers from a script.
//!
//! Plain tokio TCP and `httparse`: HTTP/1.1 with keep-alive (several requests per connection, one
//! after another), request bodies by `Content-Length` or `Transfer-Encoding: chunked`, and
//! `Expect: 100-continue`. Every response carries `Content-Length`. The same server can speak
//! TLS (rustls, via `start_tls`): it then records the SNI name each client presents. Per request
//! path it counts requests in flight (now and at most) and deliveries by `webhook-id`; it also
//! counts the connections open (now and at most).
//!
//! - `reply`: `Reply`, the scripted answers, and writing one to the connection;
//! - `http`: accepting connections (and TLS) and counting them open, reading requests, recording
//!   them;
//! - `tally`: per-path counting of requests in flight and deliveries by `webhook-id`.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

mod http;
mod reply;
mod tally;

pub use reply::Reply;

use http::accept_loop;
use tally::PathTally;

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
    /// When its answer had been written in full, or its connection closed
    /// unanswered (`None` while it is in flight).
    pub answered: Option<Instant>,
    #[allow(dead_code)] // kept for tests that look at the client side of a connection
    pub peer: SocketAddr,
}

impl Received {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(&self.headers, name)
    }
}

/// The first value of header `name` among `headers`, compared
/// case-insensitively.
pub fn header_in<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
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

/// Answers a request by what it carries, before the script is asked;
/// `None` leaves it to the script.
pub type Rule = Arc<dyn Fn(&Received) -> Option<Reply> + Send + Sync>;

struct State {
    rule: Option<Rule>,
    script: VecDeque<Reply>,
    default: Reply,
    received: Vec<Received>,
    connections: usize,
    /// Connections accepted and not yet closed: now, and the most at once.
    open: usize,
    peak_open: usize,
    /// One entry per TLS ClientHello, in arrival order.
    sni: Vec<Option<String>>,
    paths: HashMap<String, PathTally>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        crate::harness::lock_through_poison(&self.state)
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
                rule: None,
                script: VecDeque::new(),
                default: Reply::status(200),
                received: Vec::new(),
                connections: 0,
                open: 0,
                peak_open: 0,
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

    /// Answers each request by `rule` first (by its id, its body…); what
    /// the rule leaves (`None`) goes to the script.
    pub fn answer_by(&self, rule: impl Fn(&Received) -> Option<Reply> + Send + Sync + 'static) {
        self.shared.state().rule = Some(Arc::new(rule));
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

    /// No request beyond the first `n` arrives while `QUIET` passes (the
    /// engine polls every 50 ms in tests, so a due request would show).
    pub async fn stays_at(&self, n: usize) {
        assert_eq!(self.count(), n, "receiver {}: requests so far", self.url());
        crate::harness::stays_quiet(crate::harness::QUIET, || async {
            let count = self.count();
            (count != n).then(|| format!("receiver {} got request {count}", self.url()))
        })
        .await;
    }

    /// Number of TCP connections accepted so far (for TLS, whether or not the handshake worked).
    pub fn connections(&self) -> usize {
        self.shared.state().connections
    }

    /// TCP connections accepted and not yet closed (by either side).
    pub fn open_connections(&self) -> usize {
        self.shared.state().open
    }

    /// The most TCP connections it has had open at once.
    pub fn peak_open_connections(&self) -> usize {
        self.shared.state().peak_open
    }

    /// The SNI server names presented by TLS clients so far, in order: one entry per connection
    /// whose ClientHello arrived (whether or not the handshake then succeeded), `None` for a
    /// client that sent no SNI (e.g. one connecting to an IP address). Always empty for a plain
    /// receiver.
    pub fn sni(&self) -> Vec<Option<String>> {
        self.shared.state().sni.clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // The accept task owns the connection tasks (a JoinSet): aborting it ends them too.
        self.accept.abort();
    }
}
