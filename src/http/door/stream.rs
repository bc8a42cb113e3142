//! One admitted client connection: the socket, its place at the gate
//! (released when the connection closes), and the rewriting of the HTTP
//! parser's bare error answers into problem+json on their way out (the
//! client errors among them logged, sampled).

use std::{
    io,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{
    canned::{self, LineWatch},
    gate::Ticket,
    noise::{self, Sampled},
};

/// A replacement answer still being written, and how much of the
/// dispatcher's buffer it stands for (reported once it is all out, so the
/// dispatcher never closes the connection on a half-written answer).
#[derive(Debug)]
struct Pending {
    bytes: Vec<u8>,
    written: usize,
    consumed: usize,
}

#[derive(Debug)]
pub struct DoorStream<Io> {
    io: Io,
    ticket: Ticket,
    lines: LineWatch,
    pending: Option<Pending>,
    max_uri: usize,
    client_errors: Arc<Sampled>,
}

impl<Io: AsyncRead + AsyncWrite + Unpin> DoorStream<Io> {
    pub fn new(
        io: Io,
        ticket: Ticket,
        max_uri: usize,
        client_errors: Arc<Sampled>,
    ) -> DoorStream<Io> {
        DoorStream {
            io,
            ticket,
            lines: LineWatch::default(),
            pending: None,
            max_uri,
            client_errors,
        }
    }

    /// Writes what is left of a replacement answer (keeping it, done, until
    /// `poll_write` reports it).
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(p) = &mut self.pending {
            while p.written < p.bytes.len() {
                let n = ready!(Pin::new(&mut self.io).poll_write(cx, &p.bytes[p.written..]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                p.written += n;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Closed by the gate to make room: every direction fails, so the
    /// dispatcher drops us whatever it was waiting for.
    fn check_evicted(&self, cx: &mut Context<'_>) -> io::Result<()> {
        let slot = self.ticket.slot();
        slot.register(cx.waker());
        if slot.is_evicted() {
            Err(io::ErrorKind::ConnectionAborted.into())
        } else {
            Ok(())
        }
    }
}

impl<Io: AsyncRead + AsyncWrite + Unpin> AsyncRead for DoorStream<Io> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check_evicted(cx)?;
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        this.lines.feed(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl<Io: AsyncRead + AsyncWrite + Unpin> AsyncWrite for DoorStream<Io> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check_evicted(cx)?;
        if this.pending.is_some() {
            // The dispatcher asks again with the same buffer until we
            // report the replacement as written.
            ready!(this.drain(cx))?;
            let consumed = this.pending.take().map_or(0, |p| p.consumed);
            return Poll::Ready(Ok(consumed));
        }
        let rewritten = canned::rewrite(data, this.lines.longest(), this.max_uri);
        this.lines.reset();
        let Some(rewrite) = rewritten else {
            let written = ready!(Pin::new(&mut this.io).poll_write(cx, data))?;
            this.ticket.slot().answered(this.ticket.now_ms());
            return Poll::Ready(Ok(written));
        };
        if rewrite.status < 500 {
            let (now_ms, peer) = (this.ticket.now_ms(), this.ticket.address());
            noise::refused(
                &this.client_errors,
                now_ms,
                peer,
                rewrite.status,
                rewrite.problem,
            );
        }
        let consumed = rewrite.consumed;
        this.pending = Some(Pending {
            bytes: rewrite.bytes,
            written: 0,
            consumed,
        });
        ready!(this.drain(cx))?;
        this.pending = None;
        this.ticket.slot().answered(this.ticket.now_ms());
        Poll::Ready(Ok(consumed))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check_evicted(cx)?;
        ready!(this.drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}
