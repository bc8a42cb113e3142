//! The connector awc dials through when a proxy is set: it connects to the
//! proxy, asks it to CONNECT to the request's pinned address, and on a 2xx
//! hands awc the stream, over which awc speaks TLS with the URL's host
//! name (SNI and certificate checks) or plain HTTP.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use actix_http::Uri;
use actix_service::Service;
use actix_tls::connect::{ConnectError, ConnectInfo, Connection};
use futures_util::future::LocalBoxFuture;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

use super::{Proxy, ProxyError, parse_answer};
use crate::config::ProxyHost;

/// The connector service; `timeout` bounds reaching the proxy and its
/// answer together.
#[derive(Clone)]
pub struct Tunnel {
    proxy: Arc<Proxy>,
    timeout: Duration,
}

impl Tunnel {
    pub fn new(proxy: Arc<Proxy>, timeout: Duration) -> Tunnel {
        Tunnel { proxy, timeout }
    }
}

impl Service<ConnectInfo<Uri>> for Tunnel {
    type Response = Connection<Uri, TcpStream>;
    type Error = ConnectError;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    actix_service::always_ready!();

    fn call(&self, req: ConnectInfo<Uri>) -> Self::Future {
        let (proxy, timeout) = (self.proxy.clone(), self.timeout);
        // The address the egress policy passed, set on every request; the
        // name in the URI is never resolved here nor sent to the proxy.
        let target = req.addrs().next();
        let uri = req.request().clone();
        Box::pin(async move {
            let opened = match target {
                None => Err(ProxyError::Unpinned {
                    proxy: proxy.url.to_string(),
                }),
                Some(target) => tokio::time::timeout(timeout, open(&proxy, target))
                    .await
                    .unwrap_or_else(|_| {
                        Err(ProxyError::TimedOut {
                            proxy: proxy.url.to_string(),
                        })
                    }),
            };
            match opened {
                Ok(stream) => Ok(Connection::new(uri, stream)),
                Err(e) => Err(ConnectError::Io(std::io::Error::other(e))),
            }
        })
    }
}

/// Connects to the proxy and opens the tunnel to `target`.
async fn open(proxy: &Proxy, target: SocketAddr) -> Result<TcpStream, ProxyError> {
    let name = || proxy.url.to_string();
    let mut stream = dial(proxy).await?;
    stream
        .write_all(proxy.request(target).as_bytes())
        .await
        .map_err(|source| ProxyError::Broken {
            proxy: name(),
            source,
        })?;
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|source| ProxyError::Broken {
                proxy: name(),
                source,
            })?;
        if n == 0 {
            return Err(ProxyError::Closed { proxy: name() });
        }
        buf.extend_from_slice(&chunk[..n]);
        match parse_answer(&buf) {
            Ok(None) => continue,
            Ok(Some(answer)) if answer.opens_tunnel() => return Ok(stream),
            Ok(Some(answer)) => {
                return Err(ProxyError::Refused {
                    proxy: name(),
                    status_line: answer.status_line,
                });
            }
            Err(source) => {
                return Err(ProxyError::BadAnswer {
                    proxy: name(),
                    source,
                });
            }
        }
    }
}

/// A TCP connection to the proxy, trying each of its addresses in turn.
async fn dial(proxy: &Proxy) -> Result<TcpStream, ProxyError> {
    let port = proxy.url.port;
    let addrs: Vec<SocketAddr> = match &proxy.url.host {
        ProxyHost::Ip(ip) => vec![SocketAddr::new(*ip, port)],
        ProxyHost::Name(name) => resolve(name, port)
            .await
            .map_err(|e| ProxyError::Unresolved {
                proxy: proxy.url.to_string(),
                detail: e.to_string(),
            })?,
    };
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no addresses");
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => {
                s.set_nodelay(true).ok();
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(ProxyError::Unreachable {
        proxy: proxy.url.to_string(),
        source: last,
    })
}

/// The proxy's addresses, by the system resolver (the hosts file included),
/// at each connection so a moved proxy is followed. Destinations never come
/// here: they are resolved by the egress resolver and judged by the policy.
async fn resolve(name: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    #[allow(
        clippy::disallowed_methods,
        reason = "the proxy is the operator's choice, not a destination: no policy applies"
    )]
    let found = tokio::net::lookup_host((name, port)).await?;
    Ok(found.collect())
}
