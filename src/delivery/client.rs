//! The only way out: signed webhook requests to a checked, pinned address,
//! directly or through the egress proxy's CONNECT tunnel (`super::proxy`).
//! Redirects are off, the whole request (connect, headers, body) has one
//! deadline, and the response is read up to a cap.

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::{Duration, Instant},
};

use actix_tls::connect::{Connector as TcpConnector, Resolve, Resolver};
use futures_util::{StreamExt, future::LocalBoxFuture};
use rustls::ClientConfig;

use super::{
    fenced_io::{Fence, Fenced},
    proxy::{Route, Tunnel},
    send_failure::send_category,
};
use crate::domain::{
    outcome::{ErrorCategory, Outcome, classify_status},
    redact_url::redact_url,
};

/// The connector's resolver: it refuses every name, because every request
/// carries the address it may dial; nothing can fall back to system DNS.
struct RefuseAll;

impl Resolve for RefuseAll {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
        _port: u16,
    ) -> LocalBoxFuture<'a, Result<Vec<SocketAddr>, Box<dyn std::error::Error>>> {
        Box::pin(
            async move { Err(format!("{host} was not resolved by the egress resolver").into()) },
        )
    }
}

/// The certificates hookd trusts on callbacks: the web PKI roots plus any
/// extra CA the operator trusts.
#[derive(Clone)]
pub struct Trust {
    roots: Arc<rustls::RootCertStore>,
}

/// Reads the roots once, at start.
pub fn trust(extra_ca_file: Option<&std::path::Path>) -> anyhow::Result<Trust> {
    use anyhow::Context as _;
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = extra_ca_file {
        for cert in CertificateDer::pem_file_iter(path)
            .with_context(|| format!("reading {}", path.display()))?
        {
            roots
                .add(cert.with_context(|| format!("parsing {}", path.display()))?)
                .with_context(|| format!("adding a CA from {}", path.display()))?;
        }
    }
    Ok(Trust {
        roots: Arc::new(roots),
    })
}

impl Trust {
    fn builder(&self) -> rustls::ConfigBuilder<ClientConfig, rustls::client::WantsClientCert> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .with_root_certificates(self.roots.clone())
    }

    /// TLS for callbacks that present no client certificate.
    pub fn config(&self) -> Arc<ClientConfig> {
        http1(self.builder().with_no_client_auth())
    }

    /// TLS presenting `chain` (the endpoint's certificate first) with its
    /// private key; fails when the key does not match the certificate or is
    /// of a kind rustls cannot sign with.
    pub fn with_client_cert(
        &self,
        chain: Vec<rustls::pki_types::CertificateDer<'static>>,
        key: rustls::pki_types::PrivateKeyDer<'static>,
    ) -> Result<Arc<ClientConfig>, rustls::Error> {
        Ok(http1(self.builder().with_client_auth_cert(chain, key)?))
    }
}

fn http1(mut config: ClientConfig) -> Arc<ClientConfig> {
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// TLS for callbacks: the web PKI roots plus any extra CA the operator trusts.
pub fn tls_config(extra_ca_file: Option<&std::path::Path>) -> anyhow::Result<Arc<ClientConfig>> {
    Ok(trust(extra_ca_file)?.config())
}

#[derive(Debug, Clone)]
pub struct Limits {
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub max_response_bytes: usize,
    /// A kept-alive connection unused this long is closed.
    pub idle_timeout: Duration,
}

impl Limits {
    pub fn from_config(d: &crate::config::DeliveryConfig) -> Limits {
        Limits {
            connect_timeout: d.connect_timeout,
            request_timeout: d.request_timeout,
            max_response_bytes: d.max_response_bytes,
            idle_timeout: d.idle_connection_timeout,
        }
    }
}

/// An HTTP client for one endpoint and one checked address set. Its pool only
/// ever holds connections to those addresses: when the set changes, the
/// endpoint builds a new client.
pub struct PinnedClient {
    pub addrs: Vec<IpAddr>,
    /// The TLS configuration its connections are made with.
    pub tls: Arc<ClientConfig>,
    client: awc::Client,
    next: std::cell::Cell<usize>,
}

impl PinnedClient {
    /// A client that sends under no lease (a token request, a check).
    pub fn new(
        addrs: Vec<IpAddr>,
        tls: Arc<ClientConfig>,
        limits: &Limits,
        route: &Route,
        max_connections: usize,
    ) -> PinnedClient {
        PinnedClient::fenced(addrs, tls, limits, route, max_connections, Fence::open())
    }

    /// A client whose connections write only while `fence` holds (an
    /// endpoint's lease; see `fenced_io`).
    pub fn fenced(
        addrs: Vec<IpAddr>,
        tls: Arc<ClientConfig>,
        limits: &Limits,
        route: &Route,
        max_connections: usize,
        fence: Fence,
    ) -> PinnedClient {
        let client = match route {
            // The TCP connect has its own bound (a `connect` failure), so
            // awc's timeout, a backstop here, ends only a TLS handshake.
            Route::Direct => finish(
                awc::Connector::new()
                    .connector(Fenced::new(
                        super::tcp_connect::Bounded::new(
                            TcpConnector::new(Resolver::custom(RefuseAll)).service(),
                            limits.connect_timeout,
                        ),
                        fence,
                    ))
                    .timeout(limits.connect_timeout + PROXY_BACKSTOP),
                tls.clone(),
                limits,
                max_connections,
            ),
            // The tunnel keeps the connect timeout itself, so that a proxy
            // that does not answer fails as `proxy`; awc's is a backstop.
            Route::Proxy(proxy) => finish(
                awc::Connector::new()
                    .connector(Fenced::new(
                        Tunnel::new(proxy.clone(), limits.connect_timeout),
                        fence,
                    ))
                    .timeout(limits.connect_timeout + PROXY_BACKSTOP),
                tls.clone(),
                limits,
                max_connections,
            ),
        };
        PinnedClient {
            addrs,
            tls,
            client,
            next: std::cell::Cell::new(0),
        }
    }

    /// The address for the next request: the checked set, in turn (through
    /// a proxy, the address it is asked to CONNECT to).
    fn pick(&self, port: u16) -> SocketAddr {
        let i = self.next.get();
        self.next.set(i.wrapping_add(1));
        SocketAddr::new(self.addrs[i % self.addrs.len()], port)
    }
}

/// How much longer awc waits for a connect than the connect's own bound
/// (the direct TCP connect's, or the tunnel's for the proxy).
const PROXY_BACKSTOP: Duration = Duration::from_secs(1);

/// The client over `connector` (direct or tunnelled): TLS, limits, no
/// redirects, no timeout of awc's own.
fn finish<S, Io>(
    connector: awc::Connector<S>,
    tls: Arc<ClientConfig>,
    limits: &Limits,
    max_connections: usize,
) -> awc::Client
where
    Io: actix_rt::net::ActixStream + std::fmt::Debug + 'static,
    S: actix_service::Service<
            actix_tls::connect::ConnectInfo<actix_http::Uri>,
            Response = actix_tls::connect::Connection<actix_http::Uri, Io>,
            Error = actix_tls::connect::ConnectError,
        > + Clone
        + 'static,
{
    let connector = connector
        .rustls_0_23(tls)
        .handshake_timeout(limits.connect_timeout)
        .limit(max_connections.max(1))
        .conn_keep_alive(limits.idle_timeout)
        .conn_lifetime(Duration::from_secs(300));
    #[allow(
        clippy::disallowed_methods,
        reason = "this is the one outbound client: pinned addresses, no resolver, no redirects"
    )]
    awc::Client::builder()
        .connector(connector)
        .disable_redirects()
        .no_default_headers()
        // The deadline is `send`'s own (see `deadline`): awc's would win
        // over an answer already received when a paused process wakes.
        .disable_timeout()
        .finish()
}

/// One signed request.
pub struct Request<'a> {
    pub url: &'a url::Url,
    pub port: u16,
    pub headers: &'a [(&'static str, String)],
    /// Headers the endpoint's owner configured (checked when they were set).
    pub extra_headers: &'a [(String, String)],
    pub body: bytes::Bytes,
}

/// What one attempt observed.
#[derive(Debug, Clone)]
pub struct Observed {
    pub outcome: Outcome,
    pub status: Option<u16>,
    pub latency: Duration,
    pub body: Vec<u8>,
    pub remote: Option<SocketAddr>,
    pub detail: Option<String>,
    /// A 3xx answer's `Location`, redacted and capped (`domain::redact_url`).
    pub location: Option<String>,
}

impl Observed {
    pub fn failed(
        category: ErrorCategory,
        detail: String,
        latency: Duration,
        remote: Option<SocketAddr>,
    ) -> Observed {
        Observed {
            outcome: Outcome::Failed {
                category,
                retry_after: None,
            },
            status: None,
            latency,
            body: Vec::new(),
            remote,
            detail: Some(detail),
            location: None,
        }
    }
}

/// Sends the request to the next pinned address and reads the answer.
pub async fn send(
    client: &PinnedClient,
    req: Request<'_>,
    limits: &Limits,
    now: chrono::DateTime<chrono::Utc>,
) -> Observed {
    let remote = client.pick(req.port);
    let started = Instant::now();
    let deadline = started + limits.request_timeout;
    let mut builder = client.client.post(req.url.as_str()).address(remote);
    for (name, value) in req.extra_headers {
        builder = builder.insert_header((name.as_str(), value.as_str()));
    }
    for (name, value) in req.headers {
        builder = builder.insert_header((*name, value.as_str()));
    }
    let response = super::deadline::within(deadline, builder.send_body(req.body)).await;
    let response = match response {
        Err(_) => {
            return Observed::failed(
                ErrorCategory::Timeout,
                "no response before the request timeout".into(),
                started.elapsed(),
                Some(remote),
            );
        }
        Ok(Err(e)) => {
            let (category, detail) = send_category(&e);
            return Observed::failed(category, detail, started.elapsed(), Some(remote));
        }
        Ok(Ok(r)) => r,
    };
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // Kept (and shown) only redacted: a redirect may carry a token.
    let location = response
        .headers()
        .get("location")
        .filter(|_| (300..400).contains(&status))
        .map(|v| redact_url(&String::from_utf8_lossy(v.as_bytes())));
    let mut outcome = classify_status(status, retry_after.as_deref(), now);
    let mut body = Vec::new();
    let mut detail = location
        .as_ref()
        .map(|l| format!("redirect to {l} (not followed)"));
    // The body is read under the same deadline, and only up to the cap; the
    // rest is left unread and the connection dropped with the response.
    let mut payload = response;
    loop {
        match super::deadline::within(deadline, payload.next()).await {
            Err(_) => {
                outcome = Outcome::Failed {
                    category: ErrorCategory::Timeout,
                    retry_after: None,
                };
                detail = Some("the response body did not finish before the request timeout".into());
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                if !matches!(outcome, Outcome::Delivered | Outcome::Gone) {
                    detail.get_or_insert_with(|| format!("reading the response body: {e}"));
                }
                break;
            }
            Ok(Some(Ok(chunk))) => {
                let room = limits.max_response_bytes.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if chunk.len() > room {
                    break;
                }
            }
        }
    }
    if let (
        Outcome::Failed {
            category: ErrorCategory::HttpStatus,
            ..
        },
        None,
    ) = (&outcome, &detail)
    {
        detail = Some(format!("the receiver answered {status}"));
    }
    Observed {
        outcome,
        status: Some(status),
        latency: started.elapsed(),
        body,
        remote: Some(remote),
        detail,
        location,
    }
}
