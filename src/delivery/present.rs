//! What an endpoint presents to its receiver besides the signature: its
//! static headers, an OAuth2 bearer token, and a client certificate. Built
//! from the stored credentials when the endpoint's settings load.

use std::sync::Arc;

use rustls::ClientConfig;
use sha2::{Digest as _, Sha256};

use super::client::Trust;
use crate::{
    domain::client_cert,
    store::receiver_auth::{Credentials, OAuth2Client},
};

#[derive(Default)]
pub struct Presented {
    pub headers: Vec<(String, String)>,
    pub oauth2: Option<OAuth2Client>,
    /// TLS presenting the endpoint's client certificate; `Err` says why the
    /// stored certificate cannot be used (every attempt then fails as `tls`).
    pub tls: Option<Result<ClientTls, String>>,
}

/// TLS with a client certificate, and which certificate and key it holds.
#[derive(Clone)]
pub struct ClientTls {
    fingerprint: [u8; 32],
    pub config: Arc<ClientConfig>,
}

impl Presented {
    /// `before` is what the endpoint presented until now: a client
    /// certificate that did not change keeps its TLS configuration, and so
    /// the connections made with it.
    pub fn new(
        creds: Credentials,
        trust: &Trust,
        now_ms: i64,
        before: Option<&Presented>,
    ) -> Presented {
        let tls = creds.client_cert.map(|(pem, key)| {
            let fingerprint: [u8; 32] = Sha256::new()
                .chain_update(pem.as_bytes())
                .chain_update(&key)
                .finalize()
                .into();
            if let Some(Some(Ok(same))) = before.map(|b| &b.tls)
                && same.fingerprint == fingerprint
            {
                return Ok(same.clone());
            }
            let key =
                String::from_utf8(key).map_err(|_| "the client key is not PEM".to_string())?;
            let cert = client_cert::read(&pem, &key, now_ms)
                .map_err(|e| format!("the endpoint's client certificate: {e}"))?;
            let config = trust
                .with_client_cert(cert.chain, cert.key)
                .map_err(|e| format!("the endpoint's client certificate: {e}"))?;
            Ok(ClientTls {
                fingerprint,
                config,
            })
        });
        Presented {
            headers: creds.headers,
            oauth2: creds.oauth2,
            tls,
        }
    }
}
