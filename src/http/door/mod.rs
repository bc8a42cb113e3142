//! The front door: the listening socket and what every client connection
//! passes before HTTP is spoken. Caps on connections in all and per address
//! (refused with a 503 at once, so the accept loop never stops and health
//! checks always get in), deadlines for the head and a lingering close,
//! problem+json even for what the HTTP parser refuses on its own (logged as
//! sampled warnings, never errors), and the key check before
//! `100 Continue`.
//!
//! actix-web's `HttpServer` cannot wrap the socket, so this assembles the
//! same pieces (actix-server, actix-http's HTTP/1 service, the app) itself.

pub mod canned;
pub mod gate;
pub mod noise;
pub mod stream;

use std::{fmt, future::Future, net::SocketAddr, sync::Arc, time::Duration};

use actix_http::{
    HttpService, Request, Response,
    body::{BoxBody, MessageBody},
};
use actix_rt::net::TcpStream;
use actix_server::Server;
use actix_service::{
    IntoServiceFactory, Service, ServiceFactory, ServiceFactoryExt as _, map_config,
};
use actix_web::dev::AppConfig;
use anyhow::Context as _;

use crate::config::HttpConfig;
use gate::{Caps, Gate, Refusal};
use noise::Sampled;
use stream::DoorStream;

/// How long a connection whose request went unanswered (a 401 before its
/// body) may linger to take the client's unread bytes before it is closed.
const LINGER: Duration = Duration::from_secs(1);

/// How long a refused connection may linger to drain (see `refuse`).
const LINGER_REFUSED: Duration = Duration::from_millis(500);

/// Backlog of the listening socket, as actix-web's own.
const BACKLOG: i32 = 1024;

/// What the process's file limit leaves for client connections: half of it,
/// so delivery's connections, the database's and the files keep the other
/// half. Raises the soft limit to the hard one first, as servers do.
pub fn connection_cap(configured: usize) -> usize {
    use rlimit::Resource;
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    match Resource::NOFILE.get() {
        Ok((soft, _)) => configured
            .min(usize::try_from(soft / 2).unwrap_or(usize::MAX))
            .max(1),
        Err(_) => configured,
    }
}

/// Sockets the server may hold at once for `cap` admitted connections:
/// those, the ones being closed to make room, the refused ones lingering,
/// and a few being refused. The acceptor stops taking sockets past this
/// (spread over `workers`), so a flood can never run the process out of
/// files between accept and refusal.
pub fn sockets_per_worker(cap: usize, workers: usize) -> usize {
    let in_flight = cap + gate::max_closing(cap) + gate::max_lingering(cap) + 32;
    in_flight.div_ceil(workers.max(1))
}

/// The listening socket, bound before anything else starts, so a taken
/// port stops the start before any actor runs.
pub struct Listener {
    socket: std::net::TcpListener,
    pub addr: SocketAddr,
}

/// Binds `config.listen`.
pub fn bind(config: &HttpConfig) -> anyhow::Result<Listener> {
    let socket = bind_socket(config.listen)
        .with_context(|| format!("cannot listen on {} (http.listen)", config.listen))?;
    let addr = socket.local_addr()?;
    Ok(Listener { socket, addr })
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

/// What the door lets through, per connection.
fn admit(
    gate: &Gate,
    io: TcpStream,
    max_uri: usize,
    client_errors: &Arc<Sampled>,
) -> Option<(DoorStream, Option<SocketAddr>)> {
    let peer = io.peer_addr().ok()?;
    match gate.admit(peer.ip()) {
        Ok(ticket) => {
            let _ = io.set_nodelay(true);
            let stream = DoorStream::new(io, ticket, max_uri, client_errors.clone());
            Some((stream, Some(peer)))
        }
        Err(refusal) => {
            tracing::debug!(peer = %peer.ip(), ?refusal, "connection refused at the door");
            refuse(gate, io, refusal);
            None
        }
    }
}

/// Answers a refused connection with a 503 and closes it. Closing a socket
/// with unread bytes resets it, and a reset can destroy the 503 before the
/// client reads it; so the socket lingers briefly, reading and dropping what
/// the client sends, as long as few others linger (`Gate::linger`).
fn refuse(gate: &Gate, io: TcpStream, refusal: Refusal) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    // A fresh socket's send buffer takes this whole. Straight to the socket:
    // tokio's `try_write` refuses until the reactor has seen it writable.
    let _ = socket2::SockRef::from(&io).send(&canned::refused(refusal == Refusal::AddressFull));
    let Some(lingering) = gate.linger() else {
        return;
    };
    actix_rt::spawn(async move {
        let (_lingering, mut io) = (lingering, io);
        let _ = io.shutdown().await;
        let mut sink = [0u8; 1024];
        let drain = async { while matches!(io.read(&mut sink).await, Ok(n) if n > 0) {} };
        let _ = tokio::time::timeout(LINGER_REFUSED, drain).await;
    });
}

/// A bound, not yet running front door.
pub struct Door {
    pub addr: SocketAddr,
    pub gate: Gate,
    server: Server,
}

impl Door {
    pub fn server(self) -> Server {
        self.server
    }
}

/// Serves on `listener` the app `factory` makes (once per worker). A request
/// with `Expect: 100-continue` hears `100 Continue` only once `expect` has
/// let it through; what `expect` refuses with is its answer.
pub fn open<F, I, S, B, E, EF>(
    listener: Listener,
    config: &HttpConfig,
    workers: usize,
    handle_signals: bool,
    factory: F,
    expect: E,
) -> anyhow::Result<Door>
where
    E: Fn(Request) -> EF + Send + Clone + 'static,
    EF: Future<Output = Result<Request, Response<BoxBody>>> + 'static,
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let Listener {
        socket: listener,
        addr,
    } = listener;
    let caps = Caps {
        total: connection_cap(config.max_connections),
        per_address: config.max_connections_per_ip,
    };
    let gate = Gate::new(caps);
    let (header_timeout, max_uri) = (config.header_timeout, config.max_uri_bytes);
    let door_gate = gate.clone();
    let client_errors = Arc::new(Sampled::new(noise::EVERY));
    let mut builder = Server::build()
        .workers(workers)
        .max_concurrent_connections(sockets_per_worker(caps.total, workers))
        .listen("hookd-http", listener, move || {
            let gate = door_gate.clone();
            let client_errors = client_errors.clone();
            let app = factory()
                .into_factory()
                .map_err(|e| e.into().error_response());
            let http = HttpService::<DoorStream, _, _>::build()
                .client_request_timeout(header_timeout)
                .client_disconnect_timeout(LINGER)
                .local_addr(addr)
                .expect(actix_service::fn_service(expect.clone()))
                .h1(map_config(app, |_| AppConfig::default()));
            actix_service::fn_service(move |io: TcpStream| {
                let admitted = admit(&gate, io, max_uri, &client_errors);
                async move { admitted.ok_or(()) }
            })
            .and_then(http.map_err(|_| ()))
        })?;
    if !handle_signals {
        builder = builder.disable_signals();
    }
    // A stop waits this long for open connections (idle keep-alives too).
    builder = builder.shutdown_timeout(5);
    Ok(Door {
        addr,
        gate,
        server: builder.run(),
    })
}
