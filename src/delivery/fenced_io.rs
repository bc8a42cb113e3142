//! The lease, looked at on the wire itself: every connection of an
//! endpoint's client refuses to write while the endpoint's lease is not
//! confirmed here. An attempt looks at the lease before it sends, but a
//! request may wait after that look (for a pooled connection, a connect, a
//! TLS handshake); a process paused in that wait (SIGSTOP, a frozen VM)
//! would write it on waking, under a lease another instance holds by then.
//! Looked at on each write, the window shrinks to the write call itself.

use std::{
    fmt, io,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use actix_rt::net::{ActixStream, Ready, TcpStream};
use actix_service::Service;
use actix_tls::connect::{ConnectError, ConnectInfo, Connection};
use futures_util::future::LocalBoxFuture;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What a write refused by the fence fails with.
pub const LEASE_LOST: &str =
    "the endpoint's lease was not confirmed when the request was to be written";

/// Whether writing is allowed now (the endpoint's lease is confirmed).
#[derive(Clone)]
pub struct Fence(Arc<dyn Fn() -> bool + Send + Sync>);

impl Fence {
    pub fn new(holds: impl Fn() -> bool + Send + Sync + 'static) -> Fence {
        Fence(Arc::new(holds))
    }

    /// Never closed: for clients that send under no lease (a token
    /// request, a conformance check).
    pub fn open() -> Fence {
        Fence::new(|| true)
    }

    fn holds(&self) -> bool {
        (self.0)()
    }
}

/// A TCP connection that writes only while its fence holds.
pub struct FencedStream {
    io: TcpStream,
    fence: Fence,
}

impl fmt::Debug for FencedStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FencedStream")
            .field("io", &self.io)
            .finish()
    }
}

fn refused() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, LEASE_LOST)
}

impl AsyncRead for FencedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for FencedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if !self.fence.holds() {
            return Poll::Ready(Err(refused()));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if !self.fence.holds() {
            return Poll::Ready(Err(refused()));
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl ActixStream for FencedStream {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<Ready>> {
        ActixStream::poll_read_ready(&self.io, cx)
    }

    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<Ready>> {
        ActixStream::poll_write_ready(&self.io, cx)
    }
}

/// `inner`'s connections, fenced.
#[derive(Clone)]
pub struct Fenced<S> {
    inner: S,
    fence: Fence,
}

impl<S> Fenced<S> {
    pub fn new(inner: S, fence: Fence) -> Fenced<S> {
        Fenced { inner, fence }
    }
}

impl<S, R> Service<ConnectInfo<R>> for Fenced<S>
where
    S: Service<ConnectInfo<R>, Response = Connection<R, TcpStream>, Error = ConnectError>,
    S::Future: 'static,
    R: 'static,
{
    type Response = Connection<R, FencedStream>;
    type Error = ConnectError;
    type Future = LocalBoxFuture<'static, Result<Connection<R, FencedStream>, ConnectError>>;

    actix_service::forward_ready!(inner);

    fn call(&self, req: ConnectInfo<R>) -> Self::Future {
        let (connecting, fence) = (self.inner.call(req), self.fence.clone());
        Box::pin(async move {
            let (io, connection) = connecting.await?.replace_io(());
            Ok(connection.replace_io(FencedStream { io, fence }).1)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use tokio::io::AsyncWriteExt as _;

    use super::*;

    #[actix_rt::test]
    async fn a_connection_writes_while_its_fence_holds_and_refuses_once_it_does_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let accepted = std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().expect("a connection");
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut peer, &mut got).expect("what was written");
            got
        });
        let held = Arc::new(AtomicBool::new(true));
        let fence = {
            let held = held.clone();
            Fence::new(move || held.load(Ordering::SeqCst))
        };
        let io = TcpStream::connect(addr).await.expect("connected");
        let mut stream = FencedStream { io, fence };
        stream.write_all(b"sent").await.expect("written while held");
        held.store(false, Ordering::SeqCst);
        let refused = stream.write_all(b"withheld").await.expect_err("refused");
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(refused.to_string(), LEASE_LOST);
        stream.shutdown().await.expect("closed");
        assert_eq!(accepted.join().expect("the peer"), b"sent");
    }
}
