//! The two messages of a CONNECT handshake, as pure functions: the request
//! hookd writes (to a checked IP address and port, never a name) and the
//! proxy's answer head, read up to a cap.

use std::net::SocketAddr;

/// The most of an answer head hookd reads before giving up on a proxy.
pub const MAX_HEAD: usize = 8 * 1024;

/// The CONNECT request for `target`, with `authorization` (the value of
/// `Proxy-Authorization`) if the proxy wants credentials.
pub fn connect_request(target: SocketAddr, authorization: Option<&str>) -> String {
    // `SocketAddr` writes an IPv6 address in brackets, as authority-form wants.
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(value) = authorization {
        head.push_str("Proxy-Authorization: ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head
}

/// The proxy's answer to CONNECT, once its head is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// The status line, printable and cut short, for the attempt's detail.
    pub status_line: String,
}

impl Answer {
    /// A 2xx opens the tunnel (RFC 9110, 9.3.6); anything else refuses it.
    pub fn opens_tunnel(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    #[error("the proxy's answer head is over {MAX_HEAD} bytes")]
    TooLarge,
    #[error("the proxy's answer is not HTTP: {0:?}")]
    NotHttp(String),
    #[error("the proxy sent data after its answer, before the tunnel was used")]
    Early,
}

/// Reads `buf` (everything received so far): `Ok(None)` while the head is
/// incomplete. The tunnel's first bytes are hookd's (the TLS hello or the
/// request), so bytes after a 2xx head are an error, not data to keep; a
/// refusal may carry a body, which is not read.
pub fn parse_answer(buf: &[u8]) -> Result<Option<Answer>, HeadError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() >= MAX_HEAD {
            Err(HeadError::TooLarge)
        } else {
            Ok(None)
        };
    };
    if end + 4 > MAX_HEAD {
        return Err(HeadError::TooLarge);
    }
    let line = buf[..end].split(|b| *b == b'\n').next().unwrap_or(&[]);
    let status_line = printable(line);
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let code = parts.next().unwrap_or("");
    let status = match (version.starts_with("HTTP/1."), code.parse::<u16>()) {
        (true, Ok(s)) if code.len() == 3 && (100..600).contains(&s) => s,
        _ => return Err(HeadError::NotHttp(status_line)),
    };
    let answer = Answer {
        status,
        status_line,
    };
    if answer.opens_tunnel() && end + 4 < buf.len() {
        return Err(HeadError::Early);
    }
    Ok(Some(answer))
}

/// A status line as text fit for a log: control bytes replaced, at most
/// 120 characters.
fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(120)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connect_request_names_the_checked_address_and_port_never_a_name() {
        let v4 = connect_request("203.0.113.7:443".parse().unwrap(), None);
        assert_eq!(
            v4,
            "CONNECT 203.0.113.7:443 HTTP/1.1\r\nHost: 203.0.113.7:443\r\n\r\n"
        );
        let v6 = connect_request("[2001:db8::1]:8443".parse().unwrap(), Some("Basic aDpw"));
        assert_eq!(
            v6,
            "CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n\
             Proxy-Authorization: Basic aDpw\r\n\r\n"
        );
    }

    #[test]
    fn an_answer_is_read_once_its_head_is_complete() {
        assert_eq!(parse_answer(b"HTTP/1.1 200 Connection establ"), Ok(None));
        let ok = parse_answer(b"HTTP/1.0 200 Connection established\r\nProxy-agent: x\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(ok.opens_tunnel());
        assert_eq!(ok.status_line, "HTTP/1.0 200 Connection established");
        let refused =
            parse_answer(b"HTTP/1.0 407 Proxy Authentication Required\r\n\r\n<html>denied")
                .unwrap()
                .unwrap();
        assert_eq!(refused.status, 407);
        assert!(!refused.opens_tunnel());
    }

    #[test]
    fn an_answer_that_is_not_http_too_long_or_followed_by_data_is_refused() {
        assert!(matches!(
            parse_answer(b"SSH-2.0-OpenSSH\r\n\r\n"),
            Err(HeadError::NotHttp(_))
        ));
        assert!(matches!(
            parse_answer(b"HTTP/1.1 2000 OK\r\n\r\n"),
            Err(HeadError::NotHttp(_))
        ));
        assert_eq!(
            parse_answer(&vec![b'a'; MAX_HEAD]),
            Err(HeadError::TooLarge)
        );
        assert_eq!(
            parse_answer(b"HTTP/1.1 200 OK\r\n\r\n\x16\x03"),
            Err(HeadError::Early)
        );
    }

    #[test]
    fn a_status_line_is_shown_printable_and_short() {
        let mut raw = b"HTTP/1.1 502 Bad\x1b[31m Gateway ".to_vec();
        raw.extend(vec![b'x'; 500]);
        raw.extend(b"\r\n\r\n");
        let a = parse_answer(&raw).unwrap().unwrap();
        assert!(a.status_line.starts_with("HTTP/1.1 502 Bad?[31m Gateway"));
        assert_eq!(a.status_line.chars().count(), 120);
    }
}
