//! What `/v1/endpoints/{id}/auth` reads and answers: the credentials an
//! endpoint presents to its receiver, as set (with their secrets) and as
//! shown (never a secret: header values and the client secret are
//! `[redacted]`, a client certificate shows its subject and expiry).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::time;
use crate::{domain::receiver_auth::REDACTED, store::receiver_auth::Shown};

/// Static headers sent with every delivery (for example a gateway's
/// `Authorization: Bearer …`). Replaces the endpoint's headers.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetHeaders {
    /// Header name → value. Names hookd or HTTP own (`host`,
    /// `content-length`, `webhook-*`, hop-by-hop headers, …) are refused;
    /// at most 20.
    pub headers: BTreeMap<String, String>,
}

/// OAuth2 client credentials: hookd fetches a token from `token_url` and
/// sends it as `Authorization: Bearer …`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetOAuth2 {
    /// Held to the same rules as a callback URL.
    #[schema(format = "uri", max_length = 2048)]
    pub token_url: String,
    #[schema(max_length = 256)]
    pub client_id: String,
    /// Stored encrypted; never shown again.
    #[schema(max_length = 1024)]
    pub client_secret: String,
    #[schema(max_length = 1024)]
    pub scope: Option<String>,
    #[schema(max_length = 1024)]
    pub audience: Option<String>,
}

/// A client certificate for receivers that require mutual TLS.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetClientCertificate {
    /// PEM: the endpoint's certificate first, then any intermediates.
    #[schema(max_length = 65536)]
    pub certificate: String,
    /// PEM (PKCS#8, PKCS#1 or SEC1). Stored encrypted; never shown again.
    #[schema(max_length = 16384)]
    pub private_key: String,
}

/// One kind of receiver credential.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuthPart {
    Headers,
    Oauth2,
    ClientCertificate,
}

impl AuthPart {
    pub fn parse(s: &str) -> Option<AuthPart> {
        match s {
            "headers" => Some(AuthPart::Headers),
            "oauth2" => Some(AuthPart::Oauth2),
            "client-certificate" => Some(AuthPart::ClientCertificate),
            _ => None,
        }
    }
}

/// What an endpoint presents to its receiver, with every secret redacted.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiverAuthOut {
    /// Header name → `[redacted]`.
    pub headers: BTreeMap<String, String>,
    pub oauth2: Option<OAuth2Out>,
    pub client_certificate: Option<ClientCertificateOut>,
    /// The `v1a` public keys that sign now, newest first.
    pub public_keys: Vec<PublicKeyOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OAuth2Out {
    pub token_url: String,
    pub client_id: String,
    /// Always `[redacted]`.
    pub client_secret: String,
    pub scope: Option<String>,
    pub audience: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClientCertificateOut {
    /// The certificate's subject, as `CN=…, O=…`.
    pub subject: String,
    pub expires_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PublicKeyOut {
    /// `whpk_…`: base64 of the Ed25519 public key.
    pub public_key: String,
    /// When it stops signing; null while it is the current key.
    pub expires_at: Option<String>,
}

impl ReceiverAuthOut {
    pub fn new(shown: Shown, public_keys: Vec<(String, Option<i64>)>) -> ReceiverAuthOut {
        ReceiverAuthOut {
            headers: shown
                .header_names
                .into_iter()
                .map(|n| (n, REDACTED.to_string()))
                .collect(),
            oauth2: shown
                .oauth2
                .map(|(token_url, client_id, scope, audience)| OAuth2Out {
                    token_url,
                    client_id,
                    client_secret: REDACTED.into(),
                    scope,
                    audience,
                }),
            client_certificate: shown
                .client_cert
                .map(|(subject, expires)| ClientCertificateOut {
                    subject,
                    expires_at: time(expires),
                }),
            public_keys: public_keys
                .into_iter()
                .map(|(public_key, until)| PublicKeyOut {
                    public_key,
                    expires_at: until.map(time),
                })
                .collect(),
        }
    }
}
