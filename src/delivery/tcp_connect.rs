//! The TCP connect of a direct request, bounded by `delivery.connect_timeout`
//! with an error of its own: a handshake that never completes (a filtered
//! port, a full accept queue, a black hole) fails as `connect`, told apart
//! from a TLS handshake that never completes, which awc's own timeout ends
//! (`tls`).

use std::{io, time::Duration};

use actix_service::Service;
use actix_tls::connect::{ConnectError, ConnectInfo, Connection};
use futures_util::future::LocalBoxFuture;

/// What the detail of a never-completed TCP handshake starts with.
pub const NOT_COMPLETED: &str = "the TCP handshake did not complete within";

/// `inner` with its connect cut off after `timeout`.
#[derive(Clone)]
pub struct Bounded<S> {
    inner: S,
    timeout: Duration,
}

impl<S> Bounded<S> {
    pub fn new(inner: S, timeout: Duration) -> Bounded<S> {
        Bounded { inner, timeout }
    }
}

impl<S, R, Io> Service<ConnectInfo<R>> for Bounded<S>
where
    S: Service<ConnectInfo<R>, Response = Connection<R, Io>, Error = ConnectError>,
    S::Future: 'static,
    R: 'static,
    Io: 'static,
{
    type Response = Connection<R, Io>;
    type Error = ConnectError;
    type Future = LocalBoxFuture<'static, Result<Connection<R, Io>, ConnectError>>;

    actix_service::forward_ready!(inner);

    fn call(&self, req: ConnectInfo<R>) -> Self::Future {
        let (connecting, timeout) = (self.inner.call(req), self.timeout);
        Box::pin(async move {
            match actix_rt::time::timeout(timeout, connecting).await {
                Ok(connected) => connected,
                Err(_) => Err(ConnectError::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{NOT_COMPLETED} {timeout:?}"),
                ))),
            }
        })
    }
}
