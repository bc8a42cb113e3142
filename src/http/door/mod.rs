//! The front door: the listening socket and what every client connection
//! passes before HTTP is spoken. Caps on connections in all and per address
//! (refused with a 503 at once, so the accept loop never stops and health
//! checks always get in), deadlines for the head and a lingering close, and
//! problem+json even for what the HTTP parser refuses on its own.
//!
//! actix-web's `HttpServer` cannot wrap the socket, so this assembles the
//! same pieces (actix-server, actix-http's HTTP/1 service, the app) itself.

pub mod canned;
pub mod gate;
pub mod stream;

use std::{fmt, net::SocketAddr, time::Duration};

use actix_http::{HttpService, Request, Response, body::MessageBody};
use actix_rt::net::TcpStream;
use actix_server::Server;
use actix_service::{
    IntoServiceFactory, Service, ServiceFactory, ServiceFactoryExt as _, map_config,
};
use actix_web::dev::AppConfig;
use anyhow::Context as _;

use crate::config::HttpConfig;
use gate::{Caps, Gate, Refusal};
use stream::DoorStream;

/// How long a connection whose request went unanswered (a 401 before its
/// body) may linger to take the client's unread bytes before it is closed.
const LINGER: Duration = Duration::from_secs(1);

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
fn admit(gate: &Gate, io: TcpStream, max_uri: usize) -> Option<(DoorStream, Option<SocketAddr>)> {
    let peer = io.peer_addr().ok()?;
    match gate.admit(peer.ip()) {
        Ok(ticket) => {
            let _ = io.set_nodelay(true);
            Some((DoorStream::new(io, ticket, max_uri), Some(peer)))
        }
        Err(refusal) => {
            // The send buffer of a fresh socket takes this whole; if not,
            // the client gets the close alone.
            let _ = io.try_write(&canned::refused(refusal == Refusal::AddressFull));
            tracing::debug!(peer = %peer.ip(), ?refusal, "connection refused at the door");
            None
        }
    }
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

/// Serves on `listener` the app `factory` makes (once per worker).
pub fn open<F, I, S, B>(
    listener: Listener,
    config: &HttpConfig,
    workers: usize,
    handle_signals: bool,
    factory: F,
) -> anyhow::Result<Door>
where
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
    let mut builder = Server::build()
        .workers(workers)
        // Never the one to stop accepting: the gate refuses past its cap.
        .max_concurrent_connections(caps.total.saturating_mul(2).max(1024))
        .listen("hookd-http", listener, move || {
            let gate = door_gate.clone();
            let app = factory()
                .into_factory()
                .map_err(|e| e.into().error_response());
            let http = HttpService::<DoorStream, _, _>::build()
                .client_request_timeout(header_timeout)
                .client_disconnect_timeout(LINGER)
                .local_addr(addr)
                .h1(map_config(app, |_| AppConfig::default()));
            actix_service::fn_service(move |io: TcpStream| {
                let admitted = admit(&gate, io, max_uri);
                async move { admitted.ok_or(()) }
            })
            .and_then(http.map_err(|_| ()))
        })?;
    if !handle_signals {
        builder = builder.disable_signals();
    }
    Ok(Door {
        addr,
        gate,
        server: builder.run(),
    })
}
