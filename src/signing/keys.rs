//! The keys an endpoint signs with: `v1` (HMAC-SHA256 over a shared
//! `whsec_` secret) and `v1a` (Ed25519: hookd keeps the private key, the
//! receiver verifies with the published `whpk_` public key and holds no
//! secret). Both sign the same content, `{id}.{timestamp}.{body}`.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::signature::{Ed25519KeyPair, KeyPair as _};

use crate::secret::Secret;

/// Prefix of a published Ed25519 public key (Standard Webhooks).
pub const PUBLIC_KEY_PREFIX: &str = "whpk_";

/// Which signature scheme a key makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scheme {
    /// HMAC-SHA256 with a shared secret.
    V1,
    /// Ed25519 with a published public key.
    V1a,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::V1 => "v1",
            Scheme::V1a => "v1a",
        }
    }

    pub fn parse(s: &str) -> Option<Scheme> {
        [Scheme::V1, Scheme::V1a]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

/// One key that signs now, ready to sign (an Ed25519 key pair is expanded
/// once, when the endpoint's keys are loaded, not per attempt).
#[derive(Clone)]
pub enum SigningKey {
    Hmac(Secret),
    Ed25519(Arc<Ed25519KeyPair>),
}

/// A stored `v1a` seed that is not an Ed25519 private key.
#[derive(Debug, thiserror::Error)]
#[error("the stored v1a key is not a 32-byte Ed25519 seed")]
pub struct BadSeed;

impl SigningKey {
    /// The key a stored secret of `scheme` stands for: for `v1a` the secret's
    /// bytes are the Ed25519 seed.
    pub fn from_stored(scheme: Scheme, secret: Secret) -> Result<SigningKey, BadSeed> {
        match scheme {
            Scheme::V1 => Ok(SigningKey::Hmac(secret)),
            Scheme::V1a => Ed25519KeyPair::from_seed_unchecked(secret.key())
                .map(|pair| SigningKey::Ed25519(Arc::new(pair)))
                .map_err(|_| BadSeed),
        }
    }

    pub fn scheme(&self) -> Scheme {
        match self {
            SigningKey::Hmac(_) => Scheme::V1,
            SigningKey::Ed25519(_) => Scheme::V1a,
        }
    }

    /// The `whpk_…` public key of a `v1a` key; `None` for `v1`.
    pub fn public_key(&self) -> Option<String> {
        match self {
            SigningKey::Hmac(_) => None,
            SigningKey::Ed25519(pair) => Some(public_key_text(pair.public_key().as_ref())),
        }
    }

    /// What its owner is shown once it is made: the `whsec_` secret of a
    /// `v1` key, the `whpk_` public key of a `v1a` one.
    pub fn shown(&self) -> String {
        match self {
            SigningKey::Hmac(secret) => secret.expose(),
            SigningKey::Ed25519(pair) => public_key_text(pair.public_key().as_ref()),
        }
    }

    /// One `v1,<base64>` or `v1a,<base64>` entry.
    pub fn sign(&self, msg_id: &str, timestamp: i64, body: &[u8]) -> String {
        match self {
            SigningKey::Hmac(secret) => super::sign(secret, msg_id, timestamp, body),
            SigningKey::Ed25519(pair) => {
                let content = super::signed_content(msg_id, timestamp, body);
                let signature = pair.sign(&content);
                format!("{},{}", Scheme::V1a.as_str(), STANDARD.encode(signature))
            }
        }
    }
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SigningKey::Hmac(s) => write!(f, "SigningKey::Hmac({s:?})"),
            SigningKey::Ed25519(_) => f.write_str("SigningKey::Ed25519(…)"),
        }
    }
}

/// `whpk_` + base64 of the 32-byte Ed25519 public key.
pub fn public_key_text(public_key: &[u8]) -> String {
    format!("{PUBLIC_KEY_PREFIX}{}", STANDARD.encode(public_key))
}

/// The `webhook-signature` header value: one entry per key, in the given
/// order, separated by single spaces. During a rotation several keys sign,
/// of one scheme or of both, so receivers holding either accept.
pub fn signature_header(keys: &[SigningKey], msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    keys.iter()
        .map(|k| k.sign(msg_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ED25519, UnparsedPublicKey};

    fn v1a() -> SigningKey {
        SigningKey::from_stored(Scheme::V1a, Secret::generate()).unwrap()
    }

    #[test]
    fn a_v1a_signature_verifies_with_the_published_public_key_over_the_standard_content() {
        let key = v1a();
        let entry = key.sign("msg_1", 1_700_000_000, br#"{"a":1}"#);
        let encoded = entry.strip_prefix("v1a,").expect("a v1a entry");
        let signature = STANDARD.decode(encoded).unwrap();
        let public = key.public_key().unwrap();
        let public = STANDARD
            .decode(public.strip_prefix(PUBLIC_KEY_PREFIX).unwrap())
            .unwrap();
        let verifier = UnparsedPublicKey::new(&ED25519, public);
        verifier
            .verify(br#"msg_1.1700000000.{"a":1}"#, &signature)
            .expect("verifies over id.timestamp.body");
        assert!(
            verifier
                .verify(br#"msg_1.1700000000.{"a":2}"#, &signature)
                .is_err(),
            "another body does not verify"
        );
    }

    #[test]
    fn during_a_rotation_from_v1_to_v1a_both_schemes_sign() {
        let keys = [v1a(), SigningKey::Hmac(Secret::generate())];
        let header = signature_header(&keys, "msg_1", 1, b"{}");
        let schemes: Vec<&str> = header
            .split(' ')
            .map(|e| e.split_once(',').unwrap().0)
            .collect();
        assert_eq!(schemes, ["v1a", "v1"]);
    }

    #[test]
    fn a_v1_key_has_no_public_key_and_a_seed_of_the_wrong_length_is_refused() {
        assert_eq!(SigningKey::Hmac(Secret::generate()).public_key(), None);
        let long = Secret::parse(&format!("whsec_{}", STANDARD.encode([7u8; 40]))).unwrap();
        assert!(SigningKey::from_stored(Scheme::V1a, long).is_err());
    }
}
