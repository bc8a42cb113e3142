//! Owns the scripted answers: `Reply`, what the receiver answers one request with, and writing a
//! reply to the connection (status line, headers, `Content-Length`, body; or a delay, a drop, or a
//! stall).

use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};

/// How the receiver answers one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Answer with this status, optional extra headers, and body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Wait this long before answering with the inner reply.
    Delay(Duration, Box<Reply>),
    /// Close the connection after reading the request, without answering.
    Drop,
    /// Send the status line and headers (`200`, `Content-Length: 1000000`) and a few body bytes,
    /// then stall (keep the socket open, send nothing more) for this long, then close.
    StallBody(Duration),
    /// Read the request, then never answer (keep socket open) for this long, then close.
    StallHeaders(Duration),
}

impl Reply {
    /// This status with an empty body.
    pub fn status(code: u16) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// This status with a `Retry-After: value` header and an empty body.
    pub fn retry_after(code: u16, value: &str) -> Reply {
        Reply::Status {
            code,
            headers: vec![("Retry-After".to_string(), value.to_string())],
            body: Vec::new(),
        }
    }

    /// A `302 Found` to `location`, with an empty body.
    pub fn redirect_to(location: &str) -> Reply {
        Reply::Status {
            code: 302,
            headers: vec![("location".to_string(), location.to_string())],
            body: Vec::new(),
        }
    }

    /// This status with this body.
    pub fn with_body(code: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

/// Sends `reply`; true if the connection may serve another request.
pub(super) async fn answer<S: AsyncWrite + Unpin>(
    stream: &mut S,
    mut reply: Reply,
    keep_alive: bool,
    head: bool,
) -> bool {
    loop {
        match reply {
            Reply::Delay(wait, inner) => {
                tokio::time::sleep(wait).await;
                reply = *inner;
            }
            Reply::Drop => return false,
            Reply::StallHeaders(wait) => {
                tokio::time::sleep(wait).await;
                return false;
            }
            Reply::StallBody(wait) => {
                let start = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nContent-Type: text/plain\r\n\r\nstalling";
                if stream.write_all(start).await.is_ok() {
                    let _ = stream.flush().await;
                    tokio::time::sleep(wait).await;
                }
                return false;
            }
            Reply::Status {
                code,
                headers,
                body,
            } => {
                let mut out = format!("HTTP/1.1 {code} {}\r\n", reason(code)).into_bytes();
                for (name, value) in &headers {
                    out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
                }
                if !headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                {
                    out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
                }
                if !keep_alive {
                    out.extend_from_slice(b"Connection: close\r\n");
                }
                out.extend_from_slice(b"\r\n");
                if !head {
                    out.extend_from_slice(&body);
                }
                if stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
                    return false;
                }
                if !keep_alive {
                    let _ = stream.shutdown().await;
                }
                return keep_alive;
            }
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
