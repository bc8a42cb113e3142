//! What a failed send was, in the words of the attempt log: the category a
//! connect or send error falls in, with a detail a partner can act on.

// awc does not re-export actix-http's ParseError; actix-web re-exports the
// same type, so no extra dependency is needed to name it.
use actix_web::error::ParseError;
use awc::error::{ConnectError, SendRequestError};

use super::proxy::ProxyError;
use crate::domain::outcome::ErrorCategory;

/// The detail recorded when a receiver's response head is over awc's limit.
const HEAD_TOO_LARGE: &str = "response head too large";

pub(super) fn connect_category(e: &ConnectError) -> (ErrorCategory, String) {
    // The tunnel's failures are the proxy's, whatever the I/O beneath.
    if let ConnectError::Io(io) = e
        && let Some(proxy) = ProxyError::inside(io)
    {
        return (proxy.category(), proxy.to_string());
    }
    match e {
        // The TCP connect is bounded apart (`tcp_connect`), so awc's timeout
        // is the TLS handshake's.
        ConnectError::Timeout => (
            ErrorCategory::Tls,
            "TLS: the handshake did not complete within the connect timeout".into(),
        ),
        ConnectError::Io(io) if io.kind() == std::io::ErrorKind::InvalidData => {
            (ErrorCategory::Tls, format!("TLS: {io}"))
        }
        ConnectError::Io(io) => (ErrorCategory::Connect, io.to_string()),
        ConnectError::Resolver(_) | ConnectError::NoRecords | ConnectError::Unresolved => (
            ErrorCategory::Internal,
            "the destination was not pinned".into(),
        ),
        other => (ErrorCategory::Connect, other.to_string()),
    }
}

/// Whether a TLS error is behind `e`: with TLS 1.3 a server that refuses
/// the client (no certificate, or one it does not trust) says so with an
/// alert after the client's handshake finished, so it surfaces as an I/O
/// error of the request, not of the connect.
fn tls_behind<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        let inner = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|i| i as &(dyn std::error::Error + 'static));
        next = inner.or_else(|| e.source());
    }
    None
}

pub(super) fn send_category(e: &SendRequestError) -> (ErrorCategory, String) {
    let io = match e {
        SendRequestError::Send(io)
        | SendRequestError::Connect(ConnectError::Io(io))
        | SendRequestError::Response(ParseError::Io(io)) => Some(io),
        _ => None,
    };
    if let Some(tls) = io.and_then(|io| tls_behind(io)).or_else(|| tls_behind(e)) {
        return (ErrorCategory::Tls, format!("TLS: {tls}"));
    }
    match e {
        SendRequestError::Connect(c) => connect_category(c),
        SendRequestError::Timeout => (
            ErrorCategory::Timeout,
            "no response before the request timeout".into(),
        ),
        SendRequestError::Url(u) => (ErrorCategory::Internal, format!("invalid URL: {u}")),
        // More than 96 headers, or 128 KiB without the end of the head: the
        // receiver did answer, with a head awc refuses to parse. That is the
        // receiver's fault like a 5xx, not a network failure, so it counts as
        // `http_status` (retried on the schedule) with no status code, since
        // none could be read.
        SendRequestError::Response(ParseError::TooLarge) => {
            (ErrorCategory::HttpStatus, HEAD_TOO_LARGE.into())
        }
        // A head that is not HTTP (a bad status line, version or header): the
        // receiver answered, wrongly. A head cut short is a dropped
        // connection and stays `connect`.
        SendRequestError::Response(
            e @ (ParseError::Status
            | ParseError::Version
            | ParseError::Header
            | ParseError::Method
            | ParseError::Uri(_)),
        ) => (
            ErrorCategory::HttpStatus,
            format!("malformed response head: {e}"),
        ),
        other => (
            ErrorCategory::Connect,
            format!("connection failed: {other}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_head_over_the_limit_is_the_receivers_answer_not_a_connect_failure() {
        let (category, detail) = send_category(&SendRequestError::Response(ParseError::TooLarge));
        assert_eq!(category, ErrorCategory::HttpStatus);
        assert_eq!(detail, "response head too large");
    }

    #[test]
    fn a_tunnel_that_did_not_open_is_the_proxys_failure_not_a_connect_one() {
        let closed = ProxyError::Closed {
            proxy: "http://10.0.0.9:3128".into(),
        };
        let e = ConnectError::Io(std::io::Error::other(closed));
        let (category, detail) = send_category(&SendRequestError::Connect(e));
        assert_eq!(category, ErrorCategory::Proxy);
        assert_eq!(
            detail,
            "the proxy http://10.0.0.9:3128 closed the connection before answering CONNECT"
        );
        let refused = ConnectError::Io(std::io::ErrorKind::ConnectionRefused.into());
        assert_eq!(connect_category(&refused).0, ErrorCategory::Connect);
    }

    #[test]
    fn a_head_that_is_not_http_is_the_receivers_answer_and_a_cut_one_a_dropped_connection() {
        for e in [ParseError::Header, ParseError::Status, ParseError::Version] {
            let (category, detail) = send_category(&SendRequestError::Response(e));
            assert_eq!(category, ErrorCategory::HttpStatus, "{detail}");
            assert!(detail.starts_with("malformed response head"), "{detail}");
        }
        let (category, _) = send_category(&SendRequestError::Response(ParseError::Incomplete));
        assert_eq!(category, ErrorCategory::Connect, "a head cut short");
    }
}
