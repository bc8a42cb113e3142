//! Sending through an egress proxy: how a request leaves (`Route`), and the
//! connector that opens a CONNECT tunnel to the checked address. The
//! destination is resolved and judged by the egress policy before any of
//! this runs; the proxy is only ever asked for that IP address and port.
//! The proxy's own address is not judged: the operator chose it.

mod head;
mod tunnel;

use std::{fmt, sync::Arc};

use base64::Engine as _;

pub use head::{Answer, HeadError, MAX_HEAD, connect_request, parse_answer};
pub use tunnel::Tunnel;

use crate::{
    config::{EgressConfig, ProxyUrl},
    domain::outcome::ErrorCategory,
};

/// How outbound connections are made: straight to the checked address, or
/// through the proxy. Cheap to clone; every `PinnedClient` takes one.
#[derive(Debug, Clone, Default)]
pub enum Route {
    #[default]
    Direct,
    Proxy(Arc<Proxy>),
}

impl Route {
    pub fn from_config(egress: &EgressConfig) -> Route {
        egress.proxy.as_ref().map_or(Route::Direct, |url| {
            Route::Proxy(Arc::new(Proxy::new(url.clone())))
        })
    }
}

/// The proxy and the `Proxy-Authorization` value it is sent, made once.
pub struct Proxy {
    pub url: ProxyUrl,
    authorization: Option<String>,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `ProxyUrl`'s Display has no credentials.
        write!(f, "Proxy({})", self.url)
    }
}

impl Proxy {
    pub fn new(url: ProxyUrl) -> Proxy {
        let authorization = url.credentials.as_ref().map(|c| {
            let pair = format!("{}:{}", c.user, c.password);
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        });
        Proxy { url, authorization }
    }

    /// The CONNECT request for `target`.
    pub fn request(&self, target: std::net::SocketAddr) -> String {
        connect_request(target, self.authorization.as_deref())
    }
}

/// Why the tunnel did not open. Each is an attempt failure of category
/// `proxy`; the words name the proxy (without credentials) and its answer.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("the proxy {proxy} refused the tunnel: {status_line}")]
    Refused { proxy: String, status_line: String },
    #[error("cannot reach the proxy {proxy}: {source}")]
    Unreachable {
        proxy: String,
        source: std::io::Error,
    },
    #[error("the connection to the proxy {proxy} failed during CONNECT: {source}")]
    Broken {
        proxy: String,
        source: std::io::Error,
    },
    #[error("the proxy {proxy}'s name does not resolve: {detail}")]
    Unresolved { proxy: String, detail: String },
    #[error("the proxy {proxy} closed the connection before answering CONNECT")]
    Closed { proxy: String },
    #[error("the proxy {proxy} did not answer CONNECT within the connect timeout")]
    TimedOut { proxy: String },
    #[error("the proxy {proxy} answered CONNECT wrongly: {source}")]
    BadAnswer { proxy: String, source: HeadError },
    #[error("no checked address to ask the proxy {proxy} for")]
    Unpinned { proxy: String },
}

impl ProxyError {
    /// The attempt's category: the proxy's own failures are `proxy`, but a
    /// proxy that answers CONNECT with 500, 502 or 503 says it could not
    /// reach the receiver (tinyproxy and squid do), which is the receiver's
    /// `connect` failure, and 504 its `timeout`: they count toward the
    /// endpoint's health like the same failures without a proxy.
    pub fn category(&self) -> ErrorCategory {
        let ProxyError::Refused { status_line, .. } = self else {
            return ErrorCategory::Proxy;
        };
        match status_line.split_ascii_whitespace().nth(1) {
            Some("500" | "502" | "503") => ErrorCategory::Connect,
            Some("504") => ErrorCategory::Timeout,
            _ => ErrorCategory::Proxy,
        }
    }

    /// The `ProxyError` inside an I/O error, as the connector returns it.
    pub fn inside(e: &std::io::Error) -> Option<&ProxyError> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ProxyError>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_that_could_not_reach_the_receiver_is_the_receivers_failure_its_own_refusal_is_proxy()
    {
        let refused = |line: &str| ProxyError::Refused {
            proxy: "http://10.0.0.9:3128".into(),
            status_line: line.into(),
        };
        assert_eq!(
            refused("HTTP/1.0 500 Unable to connect").category(),
            ErrorCategory::Connect
        );
        assert_eq!(
            refused("HTTP/1.1 503 Service Unavailable").category(),
            ErrorCategory::Connect
        );
        assert_eq!(
            refused("HTTP/1.1 504 Gateway Timeout").category(),
            ErrorCategory::Timeout
        );
        assert_eq!(
            refused("HTTP/1.0 407 Proxy Authentication Required").category(),
            ErrorCategory::Proxy
        );
        assert_eq!(
            refused("HTTP/1.1 403 Forbidden").category(),
            ErrorCategory::Proxy
        );
        let closed = ProxyError::Closed {
            proxy: "http://10.0.0.9:3128".into(),
        };
        assert_eq!(closed.category(), ErrorCategory::Proxy);
    }

    #[test]
    fn credentials_become_a_basic_proxy_authorization_header() {
        let url = ProxyUrl::parse("http://hookd:s3cret@proxy.internal:3128").unwrap();
        let proxy = Proxy::new(url);
        let request = proxy.request("198.51.100.4:443".parse().unwrap());
        // base64("hookd:s3cret")
        assert!(
            request.contains("\r\nProxy-Authorization: Basic aG9va2Q6czNjcmV0\r\n"),
            "{request}"
        );
        assert_eq!(format!("{proxy:?}"), "Proxy(http://proxy.internal:3128)");
    }

    #[test]
    fn without_credentials_no_authorization_is_sent() {
        let proxy = Proxy::new(ProxyUrl::parse("http://10.1.2.3:3128").unwrap());
        let request = proxy.request("198.51.100.4:443".parse().unwrap());
        assert!(!request.contains("Proxy-Authorization"), "{request}");
    }
}
