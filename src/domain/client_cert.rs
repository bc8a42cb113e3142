//! A client certificate an endpoint presents to its receiver (mutual TLS):
//! reading the PEM a partner uploads, and what is shown of it (the subject
//! and when it expires). Whether the key matches the certificate is checked
//! when the TLS configuration is built (`delivery::client`).

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};

/// A certificate chain and its private key, read from PEM.
pub struct ClientCert {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    pub summary: CertSummary,
}

/// What is shown of a client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSummary {
    /// The subject's distinguished name, as `CN=…, O=…`.
    pub subject: String,
    /// When it expires, in ms since the epoch.
    pub not_after_ms: i64,
}

/// Why an uploaded certificate or key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertError {
    #[error("no PEM certificate (-----BEGIN CERTIFICATE-----) found")]
    NoCertificate,
    #[error("a certificate is not valid PEM or X.509: {0}")]
    BadCertificate(String),
    #[error("no PEM private key (PKCS#8, PKCS#1 or SEC1) found")]
    NoKey,
    #[error("the certificate expired")]
    Expired,
}

/// Reads a chain (the endpoint's certificate first) and its key; refuses a
/// certificate that has already expired at `now_ms`.
pub fn read(chain_pem: &str, key_pem: &str, now_ms: i64) -> Result<ClientCert, CertError> {
    let chain = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CertError::BadCertificate(e.to_string()))?;
    let first = chain.first().ok_or(CertError::NoCertificate)?;
    let summary = summary(first)?;
    if summary.not_after_ms <= now_ms {
        return Err(CertError::Expired);
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|_| CertError::NoKey)?;
    Ok(ClientCert {
        chain,
        key,
        summary,
    })
}

/// The subject and expiry of one DER certificate.
pub fn summary(der: &CertificateDer<'_>) -> Result<CertSummary, CertError> {
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref())
        .map_err(|e| CertError::BadCertificate(e.to_string()))?;
    Ok(CertSummary {
        subject: cert.subject().to_string(),
        not_after_ms: cert.validity().not_after.timestamp().saturating_mul(1000),
    })
}

/// Whether the owner should be warned now: the certificate expires within
/// `ahead_ms` and no warning went out since it came within that window.
pub fn due_warning(
    not_after_ms: i64,
    warned_at_ms: Option<i64>,
    now_ms: i64,
    ahead_ms: i64,
) -> bool {
    let window_opens = not_after_ms - ahead_ms;
    now_ms >= window_opens && warned_at_ms.is_none_or(|w| w < window_opens)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn a_warning_goes_out_once_when_the_certificate_comes_within_the_window() {
        let expires = 100 * DAY;
        assert!(!due_warning(expires, None, 85 * DAY, 14 * DAY), "too early");
        assert!(due_warning(expires, None, 86 * DAY, 14 * DAY));
        assert!(
            !due_warning(expires, Some(86 * DAY), 90 * DAY, 14 * DAY),
            "already warned"
        );
        assert!(
            due_warning(expires, Some(10 * DAY), 90 * DAY, 14 * DAY),
            "a warning for an earlier certificate does not count"
        );
    }

    #[test]
    fn text_that_is_not_pem_is_refused_with_what_was_missing() {
        assert!(matches!(
            read("hello", "", 0),
            Err(CertError::NoCertificate)
        ));
    }
}
