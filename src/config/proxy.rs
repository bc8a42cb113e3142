//! `egress.proxy`: the HTTP proxy every outbound request tunnels through with
//! CONNECT, parsed from `http://[user:password@]host:port`. The password
//! never leaves this type in words: `Debug` and `Display` leave it out.

use std::{fmt, net::IpAddr};

use percent_encoding::percent_decode_str;

/// `egress.proxy` as written: empty, or a URL that may hold a password,
/// so its `Debug` shows neither.
#[derive(Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(transparent)]
pub(super) struct RawProxy(String);

impl fmt::Debug for RawProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() {
            "\"\""
        } else {
            "\"<redacted>\""
        })
    }
}

impl RawProxy {
    /// `None` when empty (no proxy).
    pub(super) fn validate(&self) -> Result<Option<ProxyUrl>, ProxyUrlError> {
        (!self.0.trim().is_empty())
            .then(|| ProxyUrl::parse(self.0.trim()))
            .transpose()
    }
}

/// Where the proxy listens: an address as written, or a name resolved when
/// a connection opens (without the egress policy: the operator chose it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyHost {
    Ip(IpAddr),
    Name(String),
}

impl fmt::Display for ProxyHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyHost::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            ProxyHost::Ip(ip) => write!(f, "{ip}"),
            ProxyHost::Name(name) => f.write_str(name),
        }
    }
}

/// The user name and password for `Proxy-Authorization: Basic`.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyCredentials {
    pub user: String,
    pub password: String,
}

impl fmt::Debug for ProxyCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyCredentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// A validated `egress.proxy`. Shown (`Display`) as `http://host:port`,
/// without credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyUrl {
    pub host: ProxyHost,
    pub port: u16,
    pub credentials: Option<ProxyCredentials>,
}

impl fmt::Display for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http://{}:{}", self.host, self.port)
    }
}

/// Why a proxy URL was refused. No variant carries the URL itself, which
/// may hold a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyUrlError {
    #[error("not a URL ({0}); write it as http://host:port or http://user:password@host:port")]
    NotAUrl(String),
    #[error(
        "the proxy is spoken to in plain HTTP (CONNECT): write http://, not {0}:// (the tunnel \
         inside is still TLS for https callbacks)"
    )]
    Scheme(String),
    #[error("names no host; write it as http://host:port")]
    NoHost,
    #[error(
        "names no port; proxies have no standard one: write it, e.g. http://proxy.internal:3128"
    )]
    NoPort,
    #[error("has a path, query or fragment; a proxy is only http://host:port")]
    Path,
    #[error("has a password but no user name")]
    PasswordWithoutUser,
    #[error("its user name or password is not valid UTF-8 once percent-decoded")]
    Encoding,
}

impl ProxyUrl {
    pub fn parse(raw: &str) -> Result<ProxyUrl, ProxyUrlError> {
        // The parser's own message never includes the input.
        let url = url::Url::parse(raw).map_err(|e| ProxyUrlError::NotAUrl(e.to_string()))?;
        if url.scheme() != "http" {
            return Err(ProxyUrlError::Scheme(url.scheme().to_string()));
        }
        let host = match url.host() {
            Some(url::Host::Ipv4(ip)) => ProxyHost::Ip(ip.into()),
            Some(url::Host::Ipv6(ip)) => ProxyHost::Ip(ip.into()),
            Some(url::Host::Domain(name)) if !name.is_empty() => {
                ProxyHost::Name(name.trim_end_matches('.').to_string())
            }
            _ => return Err(ProxyUrlError::NoHost),
        };
        // `Url` drops a port equal to the scheme's default (80): look at
        // what was written.
        let port = match url.port() {
            Some(p) => p,
            None if authority(raw).ends_with(":80") => 80,
            None => return Err(ProxyUrlError::NoPort),
        };
        if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
            return Err(ProxyUrlError::Path);
        }
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            ("", Some(_)) => return Err(ProxyUrlError::PasswordWithoutUser),
            (user, password) => Some(ProxyCredentials {
                user: decoded(user)?,
                password: decoded(password.unwrap_or(""))?,
            }),
        };
        Ok(ProxyUrl {
            host,
            port,
            credentials,
        })
    }
}

/// The `host:port` part of `scheme://userinfo@host:port/…`.
fn authority(raw: &str) -> &str {
    let rest = raw.split_once("://").map_or(raw, |(_, r)| r);
    let rest = rest.split(['/', '?', '#']).next().unwrap_or("");
    rest.rsplit('@').next().unwrap_or(rest)
}

fn decoded(s: &str) -> Result<String, ProxyUrlError> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| ProxyUrlError::Encoding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_url_gives_host_port_and_decoded_credentials() {
        let p = ProxyUrl::parse("http://hookd:p%40ss%3Aword@proxy.internal:3128").unwrap();
        assert_eq!(p.host, ProxyHost::Name("proxy.internal".into()));
        assert_eq!(p.port, 3128);
        let c = p.credentials.expect("credentials");
        assert_eq!(
            (c.user.as_str(), c.password.as_str()),
            ("hookd", "p@ss:word")
        );

        let p = ProxyUrl::parse("http://10.0.0.5:8080/").unwrap();
        assert_eq!(p.host, ProxyHost::Ip("10.0.0.5".parse().unwrap()));
        assert_eq!(p.credentials, None);
        let p = ProxyUrl::parse("http://[fd00::5]:80").unwrap();
        assert_eq!((p.to_string(), p.port), ("http://[fd00::5]:80".into(), 80));
    }

    #[test]
    fn a_proxy_url_must_be_plain_http_with_a_host_and_port_and_nothing_more() {
        for (raw, want) in [
            ("https://proxy:3128", ProxyUrlError::Scheme("https".into())),
            (
                "socks5://proxy:1080",
                ProxyUrlError::Scheme("socks5".into()),
            ),
            ("http://proxy.internal", ProxyUrlError::NoPort),
            ("http://proxy:3128/path", ProxyUrlError::Path),
            ("http://proxy:3128?x=1", ProxyUrlError::Path),
            (
                "http://:secret@proxy:3128",
                ProxyUrlError::PasswordWithoutUser,
            ),
        ] {
            assert_eq!(ProxyUrl::parse(raw), Err(want), "{raw}");
        }
        assert!(matches!(
            ProxyUrl::parse("proxy:3128"),
            Err(ProxyUrlError::Scheme(_) | ProxyUrlError::NotAUrl(_))
        ));
        assert!(matches!(
            ProxyUrl::parse("http://"),
            Err(ProxyUrlError::NotAUrl(_) | ProxyUrlError::NoHost)
        ));
    }

    #[test]
    fn neither_debug_nor_display_shows_the_password() {
        let p = ProxyUrl::parse("http://hookd:hunter2@proxy.internal:3128").unwrap();
        for shown in [format!("{p:?}"), p.to_string()] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        assert_eq!(p.to_string(), "http://proxy.internal:3128");
    }

    #[test]
    fn a_refusal_never_repeats_the_url() {
        for raw in [
            "ftp://u:hunter2@proxy:21",
            "http://u:hunter2@proxy/x",
            "http://u:hunter2@",
        ] {
            let e = ProxyUrl::parse(raw).expect_err(raw).to_string();
            assert!(!e.contains("hunter2"), "{e}");
        }
    }
}
