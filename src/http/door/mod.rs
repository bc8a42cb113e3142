//! The front door: the listening socket and what every client connection
//! passes before HTTP is spoken. Caps on connections in all and per address
//! (refused with a 503 at once, so the accept loop never stops and health
//! checks always get in), deadlines for the head and a lingering close,
//! problem+json even for what the HTTP parser refuses on its own (logged as
//! sampled warnings, never errors), and the key check before
//! `100 Continue`.
//!
//! Besides the public address, an operations listener (`http.ops_listen`)
//! and a Unix domain socket (`http.unix_socket`) may be open, each with a
//! connection budget of its own (`budget`).
//!
//! actix-web's `HttpServer` cannot wrap the socket, so this assembles the
//! same pieces (actix-server, actix-http's HTTP/1 service, the app) itself
//! (`serve`).

pub mod budget;
pub mod canned;
pub mod gate;
pub mod noise;
pub mod serve;
pub mod stream;
pub mod unix;

pub use serve::{Door, Surface, open};

use std::{net::SocketAddr, time::Duration};

use anyhow::Context as _;

use crate::config::HttpConfig;
use unix::UnixSocketListener;

/// How long a connection whose request went unanswered (a 401 before its
/// body) may linger to take the client's unread bytes before it is closed.
const LINGER: Duration = Duration::from_secs(1);

/// How long a refused connection may linger to drain (see `serve::refuse`).
const LINGER_REFUSED: Duration = Duration::from_millis(500);

/// Backlog of the listening socket, as actix-web's own.
const BACKLOG: i32 = 1024;

/// A listening TCP socket, bound before anything else starts, so a taken
/// port stops the start before any actor runs.
pub struct Listener {
    socket: std::net::TcpListener,
    pub addr: SocketAddr,
}

/// Every socket hookd serves on.
pub struct Listeners {
    pub public: Listener,
    /// `http.ops_listen`: `/healthz`, `/readyz` and `/metrics` only.
    pub ops: Option<Listener>,
    /// `http.unix_socket`: the whole API.
    pub unix: Option<UnixSocketListener>,
}

/// Binds `addr` for the configuration key `key`.
pub fn bind(addr: SocketAddr, key: &str) -> anyhow::Result<Listener> {
    let socket = bind_socket(addr).with_context(|| format!("cannot listen on {addr} ({key})"))?;
    let addr = socket.local_addr()?;
    Ok(Listener { socket, addr })
}

/// Binds every listener `config` names; the first that cannot be bound is
/// the error.
pub fn bind_all(
    config: &HttpConfig,
    tcp: impl Fn(SocketAddr, &str) -> anyhow::Result<Listener>,
) -> anyhow::Result<Listeners> {
    let public = tcp(config.listen, "http.listen")?;
    let ops = config
        .ops_listen
        .map(|addr| tcp(addr, "http.ops_listen"))
        .transpose()?;
    let unix = config
        .unix_socket
        .as_deref()
        .map(|path| unix::bind(path, config.unix_socket_mode))
        .transpose()?;
    Ok(Listeners { public, ops, unix })
}

fn bind_socket(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}
