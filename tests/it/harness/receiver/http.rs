//! Owns the HTTP/1.1 side of the receiver: accepting connections (with the TLS handshake and its
//! SNI when the receiver speaks TLS) and counting them while open, reading requests (head,
//! `Content-Length` or chunked body, `Expect: 100-continue`) one after another on a keep-alive
//! connection, and recording each one before it is answered.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::reply::answer;
use super::tally::Answering;
use super::{Received, Shared};

pub(super) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let open = Open::counted(Arc::clone(&shared));
                    let served = connection(stream, peer, Arc::clone(&shared), tls.clone());
                    connections.spawn(async move {
                        served.await;
                        drop(open);
                    });
                }
                // E.g. out of file descriptors: don't spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            // Reap finished connection tasks.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// One accepted connection, counted open from its accept until its task ends (the peer closed
/// it, a reply ended it, or the receiver was dropped).
struct Open(Arc<Shared>);

impl Open {
    fn counted(shared: Arc<Shared>) -> Open {
        let mut state = shared.state();
        state.connections += 1;
        state.open += 1;
        state.peak_open = state.peak_open.max(state.open);
        drop(state);
        Open(shared)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.state().open -= 1;
    }
}

/// Limits that keep a misbehaving client from using up memory.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;
const MAX_HEADERS: usize = 128;

/// One accepted TCP connection: the TLS handshake if the receiver speaks TLS, then requests.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let _ = stream.set_nodelay(true);
    let Some(config) = tls else {
        return serve_connection(stream, peer, shared).await;
    };
    // Read the ClientHello first, so that SNI is recorded even if the handshake then fails.
    let acceptor =
        tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), stream);
    let Ok(start) = acceptor.await else {
        return;
    };
    let sni = start.client_hello().server_name().map(str::to_string);
    shared.state().sni.push(sni);
    // A failed handshake (e.g. the client rejected the certificate) just ends the connection.
    if let Ok(stream) = start.into_stream(config).await {
        serve_connection(stream, peer, shared).await;
    }
}

/// Serves requests on one connection until it closes, fails, or a reply ends it.
async fn serve_connection<S>(mut stream: S, peer: SocketAddr, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // Bytes read but not yet used (a pipelined next request may start here).
    let mut buf = Vec::with_capacity(8192);
    while let Some(request) = read_request(&mut stream, &mut buf, peer).await {
        let keep_alive = request.keep_alive;
        let head = request.received.method == "HEAD";
        let path = request.received.path.clone();
        let reply = {
            let mut state = shared.state();
            state
                .paths
                .entry(path.clone())
                .or_default()
                .arrived(request.received.header("webhook-id"));
            let ruled = state.rule.clone().and_then(|rule| rule(&request.received));
            state.received.push(request.received);
            let index = state.received.len() - 1;
            let reply = ruled.unwrap_or_else(|| {
                state
                    .script
                    .pop_front()
                    .unwrap_or_else(|| state.default.clone())
            });
            drop(state);
            shared.arrived.notify_waiters();
            (reply, index)
        };
        let (reply, index) = reply;
        let _answering = Answering {
            shared: &shared,
            path,
            index,
        };
        if !answer(&mut stream, reply, keep_alive, head).await {
            return;
        }
    }
}

struct Request {
    received: Received,
    keep_alive: bool,
}

/// Reads one request (head and body); `None` if the connection closed, failed or sent garbage.
async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    peer: SocketAddr,
) -> Option<Request> {
    // The head.
    // Bytes already read (pipelined) started it now; else the first read does.
    let mut started = (!buf.is_empty()).then(Instant::now);
    let (head_len, method, path, headers, version) = loop {
        let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut slots);
        match req.parse(buf) {
            Ok(httparse::Status::Complete(len)) => {
                let headers: Vec<(String, String)> = req
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_ascii_lowercase(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect();
                break (
                    len,
                    req.method?.to_string(),
                    req.path?.to_string(),
                    headers,
                    req.version?,
                );
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {
                if !fill(stream, buf).await {
                    return None;
                }
                started.get_or_insert_with(Instant::now);
            }
            _ => {
                let _ = stream
                    .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
                // A TLS stream may hold written bytes back until flushed.
                let _ = stream.flush().await;
                return None;
            }
        }
    };
    buf.drain(..head_len);
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let has_token = |name: &str, token: &str| {
        headers
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, v)| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    let keep_alive = if version == 0 {
        has_token("connection", "keep-alive")
    } else {
        !has_token("connection", "close")
    };
    if find("expect").is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue")) {
        stream
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .ok()?;
        stream.flush().await.ok()?;
    }

    // The body.
    let body = if has_token("transfer-encoding", "chunked") {
        read_chunked(stream, buf).await?
    } else {
        let len = match find("content-length") {
            Some(v) => v.trim().parse::<usize>().ok().filter(|&n| n <= MAX_BODY)?,
            None => 0,
        };
        while buf.len() < len {
            if !fill(stream, buf).await {
                return None;
            }
        }
        buf.drain(..len).collect()
    };
    Some(Request {
        received: Received {
            method,
            path,
            headers,
            body,
            at: Instant::now(),
            started: started.unwrap_or_else(Instant::now),
            answered: None,
            peer,
        },
        keep_alive,
    })
}

/// Reads a chunked body (trailers are read and discarded); `None` on close or malformed input.
async fn read_chunked<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(stream, buf).await?;
        let size = line.split(|&b| b == b';').next()?;
        let size = std::str::from_utf8(size).ok()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        if size == 0 {
            // Trailers, up to an empty line.
            while !read_line(stream, buf).await?.is_empty() {}
            return Some(body);
        }
        if body.len() + size > MAX_BODY {
            return None;
        }
        while buf.len() < size + 2 {
            if !fill(stream, buf).await {
                return None;
            }
        }
        if &buf[size..size + 2] != b"\r\n" {
            return None;
        }
        body.extend(buf.drain(..size));
        buf.drain(..2);
    }
}

/// One CRLF-terminated line, without the CRLF.
async fn read_line<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(pos) = buf.windows(2).position(|w| w == b"\r\n") {
            let line = buf[..pos].to_vec();
            buf.drain(..pos + 2);
            return Some(line);
        }
        if buf.len() > MAX_HEAD || !fill(stream, buf).await {
            return None;
        }
    }
}

/// Reads more bytes into `buf`; false on EOF or error.
async fn fill<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 8192];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}
