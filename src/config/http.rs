//! The `[http]` section: where the web API listens and the limits it holds
//! every client to (deadlines, connection caps, sizes, which proxies to trust).

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::{ConfigError, cidrs, duration, invalid, positive};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    listen: String,
    max_body_bytes: usize,
    header_timeout: String,
    body_timeout: String,
    max_connections: usize,
    max_connections_per_ip: usize,
    max_uri_bytes: usize,
    public_url: String,
    trust_proxy: Vec<String>,
    ops_listen: String,
    unix_socket: String,
    unix_socket_mode: String,
}

#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub listen: SocketAddr,
    /// Largest body of `POST /v1/events`; other routes take far less.
    pub max_body_bytes: usize,
    /// The request head (line and headers) must arrive within this.
    pub header_timeout: Duration,
    /// A request body must arrive within this, from the end of its head.
    pub body_timeout: Duration,
    /// Open client connections at once; the start lowers it to half the
    /// process's file limit so delivery and the database keep the other half.
    pub max_connections: usize,
    /// Open connections from one client address.
    pub max_connections_per_ip: usize,
    /// Longest request target (path and query); longer is 414.
    pub max_uri_bytes: usize,
    /// The origin browsers see (`https://hooks.example.com`), for the
    /// dashboard's cross-site check; `None`: the request's `Host` header.
    pub public_url: Option<Origin>,
    /// Proxies whose `Forwarded` / `X-Forwarded-*` headers are believed.
    pub trust_proxy: Vec<IpNet>,
    /// A second listener for `/healthz`, `/readyz` and `/metrics` only.
    pub ops_listen: Option<SocketAddr>,
    /// A Unix domain socket serving the whole API.
    pub unix_socket: Option<PathBuf>,
    /// Permission bits of its file, such as `0o660`: who on the host may
    /// connect.
    pub unix_socket_mode: u32,
}

/// `"0660"` (or `"660"`, `"0o660"`) as permission bits: octal, at most `0o777`.
pub fn file_mode(text: &str) -> Option<u32> {
    let digits = text.trim();
    let digits = digits.strip_prefix("0o").unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    u32::from_str_radix(digits, 8).ok().filter(|m| *m <= 0o777)
}

/// A web origin: scheme, host and port (RFC 6454), compared as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin(String);

impl Origin {
    /// `scheme://host[:port]` with the default port left out, lowercase, as
    /// browsers serialise the `Origin` header.
    pub fn parse(text: &str) -> Option<Origin> {
        let url = url::Url::parse(text.trim()).ok()?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return None;
        }
        match url.origin() {
            origin @ url::Origin::Tuple(..) => Some(Origin(origin.ascii_serialization())),
            url::Origin::Opaque(_) => None,
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl RawHttp {
    pub(super) fn validate(self) -> Result<HttpConfig, ConfigError> {
        let listen = self.listen.parse().map_err(|_| {
            invalid(
                "http.listen",
                format!("`{}` is not an ip:port", self.listen),
            )
        })?;
        positive("http.max_body_bytes", self.max_body_bytes as u64)?;
        positive("http.max_connections", self.max_connections as u64)?;
        positive(
            "http.max_connections_per_ip",
            self.max_connections_per_ip as u64,
        )?;
        if self.max_uri_bytes < 1024 {
            return Err(invalid(
                "http.max_uri_bytes",
                format!("must be at least 1024 (got {})", self.max_uri_bytes),
            ));
        }
        let header_timeout = duration("http.header_timeout", &self.header_timeout)?;
        let body_timeout = duration("http.body_timeout", &self.body_timeout)?;
        for (key, d) in [
            ("http.header_timeout", header_timeout),
            ("http.body_timeout", body_timeout),
        ] {
            if d < Duration::from_millis(100) {
                return Err(invalid(key, "must be at least 100ms"));
            }
        }
        let public_url = match self.public_url.trim() {
            "" => None,
            text => Some(Origin::parse(text).ok_or_else(|| {
                invalid(
                    "http.public_url",
                    format!("`{text}` is not an http(s) origin like \"https://hooks.example.com\""),
                )
            })?),
        };
        let ops_listen =
            match self.ops_listen.trim() {
                "" => None,
                text => Some(text.parse::<SocketAddr>().map_err(|_| {
                    invalid("http.ops_listen", format!("`{text}` is not an ip:port"))
                })?),
            };
        if ops_listen == Some(listen) {
            return Err(invalid(
                "http.ops_listen",
                "must differ from http.listen (the operations listener is a second socket)",
            ));
        }
        let unix_socket_mode = file_mode(&self.unix_socket_mode).ok_or_else(|| {
            invalid(
                "http.unix_socket_mode",
                format!(
                    "`{}` is not an octal file mode like \"0660\"",
                    self.unix_socket_mode
                ),
            )
        })?;
        let unix_socket = match self.unix_socket.trim() {
            "" => None,
            text => Some(PathBuf::from(text)),
        };
        Ok(HttpConfig {
            listen,
            max_body_bytes: self.max_body_bytes,
            header_timeout,
            body_timeout,
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            max_uri_bytes: self.max_uri_bytes,
            public_url,
            trust_proxy: cidrs("http.trust_proxy", &self.trust_proxy)?,
            ops_listen,
            unix_socket,
            unix_socket_mode,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Origin, file_mode};

    #[test]
    fn a_socket_mode_is_octal_permission_bits() {
        assert_eq!(file_mode("0660"), Some(0o660));
        assert_eq!(file_mode("600"), Some(0o600));
        assert_eq!(file_mode("0o777"), Some(0o777));
        assert_eq!(file_mode("0800"), None, "8 is not an octal digit");
        assert_eq!(file_mode("1777"), None, "only permission bits");
        assert_eq!(file_mode("rw-rw----"), None);
        assert_eq!(file_mode(""), None);
    }

    #[test]
    fn an_origin_is_scheme_host_and_port_as_a_browser_writes_it() {
        let o = |t: &str| Origin::parse(t).map(|o| o.as_str().to_string());
        assert_eq!(
            o("https://Hooks.Example.com/dashboard").as_deref(),
            Some("https://hooks.example.com")
        );
        assert_eq!(
            o("https://hooks.example.com:443").as_deref(),
            Some("https://hooks.example.com"),
            "the default port is left out"
        );
        assert_eq!(
            o("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(o("ftp://x"), None);
        assert_eq!(o("not a url"), None);
    }
}
