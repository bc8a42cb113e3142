//! Serving the listeners: one actix-server for all of them, each listener
//! behind a gate of its own (its budget from `budget::split`), each
//! connection wrapped in a `DoorStream` and handed to actix-http's HTTP/1
//! service with the app for its surface.

use std::{
    fmt,
    future::Future,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    os::fd::AsFd,
    sync::Arc,
    time::Duration,
};

use actix_http::{
    HttpService, Request, Response,
    body::{BoxBody, MessageBody},
};
use actix_rt::net::{TcpStream, UnixStream};
use actix_server::Server;
use actix_service::{
    IntoServiceFactory, Service, ServiceFactory, ServiceFactoryExt as _, map_config,
};
use actix_web::dev::AppConfig;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{
    LINGER, LINGER_REFUSED, Listeners, budget, canned,
    gate::{Caps, Gate, Refusal},
    noise::{self, Sampled},
    stream::DoorStream,
    unix::SocketFile,
};
use crate::config::HttpConfig;

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Everything: the API, the dashboard, the portal, the docs.
    Whole,
    /// `/healthz`, `/readyz` and `/metrics` only.
    Ops,
}

/// The address every connection on the Unix socket counts under at its
/// gate: the socket is one host's, one address's worth.
const UNIX_PEER: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

/// A client connection the door can admit.
pub trait Socket: AsyncRead + AsyncWrite + AsFd + Unpin + Sized + 'static {
    /// The address its gate counts it under, and the peer handlers see.
    fn peer(&self) -> Option<(IpAddr, Option<SocketAddr>)>;
}

impl Socket for TcpStream {
    fn peer(&self) -> Option<(IpAddr, Option<SocketAddr>)> {
        let peer = self.peer_addr().ok()?;
        let _ = self.set_nodelay(true);
        Some((peer.ip(), Some(peer)))
    }
}

impl Socket for UnixStream {
    fn peer(&self) -> Option<(IpAddr, Option<SocketAddr>)> {
        Some((UNIX_PEER, None))
    }
}

/// One listener's gate and what its streams share.
#[derive(Clone)]
struct Entry {
    gate: Gate,
    max_uri: usize,
    client_errors: Arc<Sampled>,
}

/// What the door lets through, per connection.
fn admit<Io: Socket>(entry: &Entry, io: Io) -> Option<(DoorStream<Io>, Option<SocketAddr>)> {
    let (address, peer) = io.peer()?;
    match entry.gate.admit(address) {
        Ok(ticket) => {
            let stream = DoorStream::new(io, ticket, entry.max_uri, entry.client_errors.clone());
            Some((stream, peer))
        }
        Err(refusal) => {
            tracing::debug!(peer = %address, ?refusal, "connection refused at the door");
            refuse(&entry.gate, io, refusal);
            None
        }
    }
}

/// Answers a refused connection with a 503 and closes it. Closing a socket
/// with unread bytes resets it, and a reset can destroy the 503 before the
/// client reads it; so the socket lingers briefly, reading and dropping what
/// the client sends, as long as few others linger (`Gate::linger`).
fn refuse<Io: Socket>(gate: &Gate, io: Io, refusal: Refusal) {
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

/// One connection's way in on a listener: the gate, then HTTP/1 with `app`;
/// a request with `Expect: 100-continue` hears `100 Continue` only once
/// `expect` has let it through.
fn connection<Io, I, S, B, E, EF>(
    entry: Entry,
    app: I,
    expect: E,
    header_timeout: Duration,
    local_addr: Option<SocketAddr>,
) -> impl ServiceFactory<Io, Config = (), Response = (), Error = (), InitError = ()>
where
    Io: Socket,
    E: Fn(Request) -> EF + Clone + 'static,
    EF: Future<Output = Result<Request, Response<BoxBody>>> + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let app = app.into_factory().map_err(|e| e.into().error_response());
    let mut http = HttpService::<DoorStream<Io>, _, _>::build()
        .client_request_timeout(header_timeout)
        .client_disconnect_timeout(LINGER);
    if let Some(addr) = local_addr {
        http = http.local_addr(addr);
    }
    let http = http
        .expect(actix_service::fn_service(expect))
        .h1(map_config(app, |_| AppConfig::default()));
    actix_service::fn_service(move |io: Io| {
        let admitted = admit(&entry, io);
        async move { admitted.ok_or(()) }
    })
    .and_then(http.map_err(|_| ()))
}

/// The front door's addresses, its server (not yet running) and the Unix
/// socket's file.
pub struct Door {
    pub addr: SocketAddr,
    pub ops_addr: Option<SocketAddr>,
    /// The Unix socket's file, removed when this is dropped.
    pub socket_file: Option<SocketFile>,
    pub server: Server,
}

/// Serves on `listeners`, each with the app `factory` makes for its surface
/// (once per worker).
pub fn open<F, I, S, B, E, EF>(
    listeners: Listeners,
    config: &HttpConfig,
    workers: usize,
    handle_signals: bool,
    factory: F,
    expect: E,
) -> anyhow::Result<Door>
where
    E: Fn(Request) -> EF + Send + Clone + 'static,
    EF: Future<Output = Result<Request, Response<BoxBody>>> + 'static,
    F: Fn(Surface) -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let Listeners { public, ops, unix } = listeners;
    let budgets = budget::split(
        budget::files_for_clients(),
        config.max_connections,
        config.max_connections_per_ip,
        ops.is_some(),
        unix.is_some(),
    );
    let client_errors = Arc::new(Sampled::new(noise::EVERY));
    let entry = |caps: Caps| Entry {
        gate: Gate::new(caps),
        max_uri: config.max_uri_bytes,
        client_errors: client_errors.clone(),
    };
    let timeout = config.header_timeout;
    let (addr, ops_addr) = (public.addr, ops.as_ref().map(|l| l.addr));
    let public_entry = entry(budgets.public);

    let mut builder = Server::build().workers(workers);
    let (f, e) = (factory.clone(), expect.clone());
    builder = builder.listen("hookd-http", public.socket, move || {
        let entry = public_entry.clone();
        connection::<TcpStream, _, _, _, _, _>(
            entry,
            f(Surface::Whole),
            e.clone(),
            timeout,
            Some(addr),
        )
    })?;
    if let (Some(listener), Some(caps)) = (ops, budgets.ops) {
        let (ops_entry, f, e) = (entry(caps), factory.clone(), expect.clone());
        let local = listener.addr;
        builder = builder.listen("hookd-ops", listener.socket, move || {
            connection::<TcpStream, _, _, _, _, _>(
                ops_entry.clone(),
                f(Surface::Ops),
                e.clone(),
                timeout,
                Some(local),
            )
        })?;
    }
    let mut socket_file = None;
    if let (Some(listener), Some(caps)) = (unix, budgets.unix) {
        let (unix_entry, f, e) = (entry(caps), factory.clone(), expect.clone());
        socket_file = Some(listener.file);
        builder = builder.listen_uds("hookd-unix", listener.socket, move || {
            connection::<UnixStream, _, _, _, _, _>(
                unix_entry.clone(),
                f(Surface::Whole),
                e.clone(),
                timeout,
                None,
            )
        })?;
    }
    builder = builder.max_concurrent_connections(budgets.sockets_per_worker(workers));
    if !handle_signals {
        builder = builder.disable_signals();
    }
    // A stop waits this long for open connections (idle keep-alives too).
    builder = builder.shutdown_timeout(5);
    Ok(Door {
        addr,
        ops_addr,
        socket_file,
        server: builder.run(),
    })
}
