//! One admitted client connection: the socket, its place at the gate
//! (released when the connection closes), and the rewriting of the HTTP
//! parser's bare error answers into problem+json on their way out.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll, ready},
};

use actix_rt::net::TcpStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{
    canned::{self, LineWatch},
    gate::Ticket,
};

/// A replacement answer still being written.
#[derive(Debug)]
struct Pending {
    bytes: Vec<u8>,
    written: usize,
}

#[derive(Debug)]
pub struct DoorStream {
    io: TcpStream,
    ticket: Ticket,
    lines: LineWatch,
    pending: Option<Pending>,
    max_uri: usize,
}

impl DoorStream {
    pub fn new(io: TcpStream, ticket: Ticket, max_uri: usize) -> DoorStream {
        DoorStream {
            io,
            ticket,
            lines: LineWatch::default(),
            pending: None,
            max_uri,
        }
    }

    /// Writes what is left of a replacement answer.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(p) = &mut self.pending {
            if p.written == p.bytes.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &p.bytes[p.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            p.written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for DoorStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Closed by the gate to make room: the dispatcher drops us.
        let slot = this.ticket.slot();
        slot.register(cx.waker());
        if slot.is_evicted() {
            return Poll::Ready(Err(io::ErrorKind::ConnectionAborted.into()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        this.lines.feed(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for DoorStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        this.ticket.slot().answered(this.ticket.now_ms());
        let rewritten = canned::rewrite(data, this.lines.longest(), this.max_uri);
        this.lines.reset();
        let Some((consumed, replacement)) = rewritten else {
            return Pin::new(&mut this.io).poll_write(cx, data);
        };
        this.pending = Some(Pending {
            bytes: replacement,
            written: 0,
        });
        // Whatever does not go now goes on the next write or flush.
        if let Poll::Ready(Err(e)) = this.drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(consumed))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}
