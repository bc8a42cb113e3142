//! Owns the test certificate authority: a throwaway CA (rcgen) and rustls server configs presenting leaves it signed.
//!
//! Everything is generated in memory (ECDSA P-256 keys, with `ring`), per `TestCa`. The rustls
//! configs are built with an explicit `ring` provider, never the process default: with more than
//! one provider compiled in, looking the default up panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A certificate authority for tests, and the leaves it signs.
pub struct TestCa {
    /// The CA certificate, DER.
    cert: CertificateDer<'static>,
    /// The CA certificate, PEM.
    pem: String,
    /// Signs leaves.
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A new CA with a fresh key. Its subject, `CN=hookd test CA N`, differs from every other
    /// `TestCa` of the process, so a client trusting one CA never mistakes another for it.
    pub fn new() -> TestCa {
        static SERIAL: AtomicU64 = AtomicU64::new(1);
        let subject = format!("hookd test CA {}", SERIAL.fetch_add(1, Ordering::Relaxed));
        let key = KeyPair::generate().expect("test CA: a key pair");
        let mut params =
            CertificateParams::new(Vec::<String>::new()).expect("test CA: certificate parameters");
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, subject);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("test CA: self-signing");
        TestCa {
            cert: cert.der().clone(),
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA certificate as PEM (to write to a file that hookd trusts via `egress.extra_ca_file`).
    pub fn ca_pem(&self) -> String {
        self.pem.clone()
    }

    /// The CA certificate written to a file in a new temp dir (keep the dir
    /// while hookd runs): the dir and the file's path for `egress.extra_ca_file`.
    pub fn ca_file(&self) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, self.ca_pem()).expect("the CA file is written");
        (dir, path.display().to_string())
    }

    /// A rustls `ServerConfig` presenting a fresh leaf for these names, signed by this CA
    /// (chain: leaf, CA), with ALPN `http/1.1`. Each name becomes a DNS-name SAN, or an IP SAN
    /// if it parses as an IP address; the first is also the subject CN.
    ///
    /// Panics if `names` is empty or a name is not a valid DNS name or IP address.
    pub fn server_config(&self, names: &[&str]) -> Arc<rustls::ServerConfig> {
        self.server_config_verifying(names, None)
    }

    /// Like `server_config`, and the server requires a client certificate
    /// signed by `clients` (mutual TLS).
    pub fn server_config_requiring_clients_of(
        &self,
        names: &[&str],
        clients: &TestCa,
    ) -> Arc<rustls::ServerConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(clients.cert.clone())
            .expect("test CA: a client root");
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .expect("test CA: a client verifier");
        self.server_config_verifying(names, Some(verifier))
    }

    /// A client certificate for `name` signed by this CA: (certificate PEM,
    /// PKCS#8 key PEM), as a partner would upload them.
    pub fn client_cert(&self, name: &str) -> (String, String) {
        self.client_cert_until(name, None)
    }

    /// Like `client_cert`, valid until midnight (UTC) of `until` (year,
    /// month, day) when given.
    pub fn client_cert_until(&self, name: &str, until: Option<(i32, u8, u8)>) -> (String, String) {
        let key = KeyPair::generate().expect("test CA: a client key pair");
        let mut params =
            CertificateParams::new(Vec::<String>::new()).expect("test CA: client parameters");
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        if let Some((y, m, d)) = until {
            params.not_before = rcgen::date_time_ymd(2000, 1, 1);
            params.not_after = rcgen::date_time_ymd(y, m, d);
        }
        params.use_authority_key_identifier_extension = true;
        let leaf = params
            .signed_by(&key, &self.issuer)
            .expect("test CA: signing a client certificate");
        (leaf.pem(), key.serialize_pem())
    }

    fn server_config_verifying(
        &self,
        names: &[&str],
        clients: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
    ) -> Arc<rustls::ServerConfig> {
        assert!(!names.is_empty(), "test CA: a leaf needs at least one name");
        let key = KeyPair::generate().expect("test CA: a leaf key pair");
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap_or_else(|e| panic!("test CA: leaf parameters for {names:?}: {e}"));
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, names[0]);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let leaf = params
            .signed_by(&key, &self.issuer)
            .expect("test CA: signing a leaf");
        let chain = vec![leaf.der().clone(), self.cert.clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("test CA: TLS protocol versions");
        let builder = match clients {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder
            .with_single_cert(chain, key)
            .expect("test CA: a server config for the leaf");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

impl Default for TestCa {
    fn default() -> TestCa {
        TestCa::new()
    }
}
