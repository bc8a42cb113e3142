//! Owns endpoint signing secrets (`whsec_…`) and their encryption at rest (`SecretBox`).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead as _, KeyInit as _, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hkdf::Hkdf;
use rand::RngCore as _;
use sha2::Sha256;

/// Prefix that marks a string as a Standard Webhooks signing secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// Shortest key accepted by `Secret::parse`; 24 bytes is what the Standard Webhooks
/// reference secret uses, and anything shorter is too weak to sign with.
pub const MIN_SECRET_BYTES: usize = 24;
/// Longest key accepted by `Secret::parse`; beyond the HMAC-SHA256 block size (64)
/// the key would be pre-hashed, so longer keys add nothing but storage.
pub const MAX_SECRET_BYTES: usize = 64;
/// Size of keys made by `Secret::generate`: the full HMAC-SHA256 output size.
pub const GENERATED_SECRET_BYTES: usize = 32;
/// Shortest operator passphrase `SecretBox::from_passphrase` accepts. HKDF does not
/// stretch, so the passphrase itself has to carry the entropy.
pub const MIN_PASSPHRASE_CHARS: usize = 32;

/// Version tag on sealed secrets, so the format can change without guessing.
const SEALED_PREFIX: &str = "v1.";
const HKDF_SALT: &[u8] = b"hookd/secrets/v1";
const HKDF_INFO: &[u8] = b"endpoint-secret";
const HKDF_INFO_SESSIONS: &[u8] = b"dashboard-session";
const NONCE_BYTES: usize = 12;
const TAG_BYTES: usize = 16;

/// An endpoint signing secret: `whsec_` + base64 (standard, padded) of the key bytes.
///
/// `Debug` deliberately prints `Secret(whsec_…)` so secrets can sit inside structs
/// that get logged without leaking the key.
#[derive(Clone)]
pub struct Secret {
    key: Vec<u8>,
}

impl Secret {
    /// A fresh secret of `GENERATED_SECRET_BYTES` random bytes.
    pub fn generate() -> Secret {
        let mut key = vec![0u8; GENERATED_SECRET_BYTES];
        rand::rng().fill_bytes(&mut key);
        Secret { key }
    }

    /// Parses a `whsec_…` string as shown to users by `expose`.
    pub fn parse(s: &str) -> Result<Secret, SecretError> {
        let encoded = s
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        // The decode error is dropped on purpose: it quotes the offending character,
        // which is part of what the user meant as a secret.
        let key = STANDARD
            .decode(encoded)
            .map_err(|_| SecretError::InvalidBase64)?;
        Secret::from_key(key)
    }

    /// The `whsec_` string; meant to be shown to the endpoint owner once.
    pub fn expose(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// The raw key bytes, as used for HMAC.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    fn from_key(key: Vec<u8>) -> Result<Secret, SecretError> {
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&key.len()) {
            return Err(SecretError::InvalidLength { len: key.len() });
        }
        Ok(Secret { key })
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(whsec_…)")
    }
}

/// Encrypts endpoint secrets at rest with a key derived from an operator passphrase.
///
/// `Debug` prints `SecretBox(…)`: the derived key must never reach a log.
#[derive(Clone)]
pub struct SecretBox {
    cipher: ChaCha20Poly1305,
    /// Signs dashboard sessions: derived from the same passphrase with another
    /// HKDF info, so sessions hold across restarts and instances.
    session_key: [u8; 32],
}

impl SecretBox {
    /// Derives the sealing key with HKDF-SHA256. The passphrase is used byte for byte,
    /// so a caller reading it from a key file should strip the trailing newline first.
    pub fn from_passphrase(passphrase: &str) -> Result<SecretBox, SecretError> {
        let chars = passphrase.chars().count();
        if chars < MIN_PASSPHRASE_CHARS {
            return Err(SecretError::PassphraseTooShort { chars });
        }
        let hkdf = Hkdf::<Sha256>::new(Some(HKDF_SALT), passphrase.as_bytes());
        let mut key = Key::default();
        // HKDF-SHA256 can emit up to 255 * 32 bytes; a 32-byte key cannot hit that limit.
        hkdf.expand(HKDF_INFO, &mut key)
            .expect("a 32-byte HKDF-SHA256 output is always within the length limit");
        let mut session_key = [0u8; 32];
        hkdf.expand(HKDF_INFO_SESSIONS, &mut session_key)
            .expect("a 32-byte HKDF-SHA256 output is always within the length limit");
        Ok(SecretBox {
            cipher: ChaCha20Poly1305::new(&key),
            session_key,
        })
    }

    /// The key that signs dashboard session tokens.
    pub fn session_key(&self) -> &[u8; 32] {
        &self.session_key
    }

    /// Encrypts `secret` for the endpoint `endpoint_id`: `"v1." + base64url-no-pad(nonce || ciphertext)`.
    ///
    /// The endpoint id is bound in as associated data, so a sealed value copied into
    /// another endpoint's row will not open there. Nonces are random: 96 bits is ample
    /// for the number of secrets one deployment will ever seal under one key.
    pub fn seal(&self, endpoint_id: &str, secret: &Secret) -> String {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rng().fill_bytes(&mut nonce);
        let payload = Payload {
            msg: secret.key(),
            aad: endpoint_id.as_bytes(),
        };
        // ChaCha20-Poly1305 only refuses plaintexts of around 256 GiB; a secret is at most 64 bytes.
        let ciphertext = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), payload)
            .expect("a secret of at most 64 bytes is always encryptable");
        let mut sealed = Vec::with_capacity(NONCE_BYTES + ciphertext.len());
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        format!("{SEALED_PREFIX}{}", URL_SAFE_NO_PAD.encode(sealed))
    }

    /// Decrypts a value made by `seal` for the same endpoint id.
    ///
    /// Format problems (`SealedVersionUnknown`, `SealedMalformed`) are reported apart from
    /// `SealedAuthenticationFailed`, because the first points at corrupted storage and the
    /// second at a wrong passphrase, a wrong endpoint, or tampering — which AEAD cannot tell apart.
    pub fn open(&self, endpoint_id: &str, sealed: &str) -> Result<Secret, SecretError> {
        let encoded = sealed
            .strip_prefix(SEALED_PREFIX)
            .ok_or(SecretError::SealedVersionUnknown)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| SecretError::SealedMalformed("not valid base64url without padding"))?;
        if bytes.len() < NONCE_BYTES + TAG_BYTES {
            return Err(SecretError::SealedMalformed(
                "too short to hold a nonce and an authentication tag",
            ));
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let payload = Payload {
            msg: ciphertext,
            aad: endpoint_id.as_bytes(),
        };
        let key = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), payload)
            .map_err(|_| SecretError::SealedAuthenticationFailed)?;
        Secret::from_key(key)
    }
}

impl std::fmt::Debug for SecretBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretBox(…)")
    }
}

/// A new passphrase for a key file: standard base64 of 32 random bytes (44 characters).
pub fn generate_passphrase() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    STANDARD.encode(bytes)
}

/// Why a secret could not be parsed, a passphrase was refused, or a sealed secret would not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("secret must start with \"{SECRET_PREFIX}\"")]
    MissingPrefix,
    #[error("secret after \"{SECRET_PREFIX}\" is not valid standard (padded) base64")]
    InvalidBase64,
    #[error("secret key must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes, got {len}")]
    InvalidLength { len: usize },
    #[error("passphrase must be at least {MIN_PASSPHRASE_CHARS} characters, got {chars}")]
    PassphraseTooShort { chars: usize },
    #[error("sealed secret does not start with the \"{SEALED_PREFIX}\" version tag")]
    SealedVersionUnknown,
    #[error("sealed secret is malformed: {0}")]
    SealedMalformed(&'static str),
    #[error(
        "sealed secret failed authentication: wrong passphrase, wrong endpoint id, or tampered ciphertext"
    )]
    SealedAuthenticationFailed,
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSPHRASE: &str = "correct horse battery staple, but long enough";
    const OTHER_PASSPHRASE: &str = "an entirely different operator passphrase!";

    fn sealer() -> SecretBox {
        SecretBox::from_passphrase(PASSPHRASE)
            .expect("a 45-character passphrase should be accepted")
    }

    #[test]
    fn a_generated_secret_survives_expose_and_parse() {
        let secret = Secret::generate();
        let shown = secret.expose();
        assert!(
            shown.starts_with("whsec_"),
            "exposed secret {shown:?} lacks the whsec_ prefix"
        );
        let parsed = Secret::parse(&shown).expect("an exposed secret should parse back");
        assert_eq!(
            parsed.key(),
            secret.key(),
            "parsing the exposed secret changed the key"
        );
    }

    #[test]
    fn a_generated_secret_is_32_random_bytes() {
        let a = Secret::generate();
        let b = Secret::generate();
        assert_eq!(a.key().len(), 32, "generated key has the wrong length");
        assert_ne!(a.key(), b.key(), "two generated secrets were identical");
    }

    #[test]
    fn the_standard_webhooks_reference_secret_parses_to_24_bytes() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .expect("the Standard Webhooks reference secret should parse");
        assert_eq!(
            secret.key().len(),
            24,
            "reference secret decoded to the wrong length"
        );
        assert_eq!(
            secret.expose(),
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "exposing did not reproduce the original string"
        );
    }

    #[test]
    fn a_secret_without_the_whsec_prefix_is_rejected() {
        let err = Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_err();
        assert_eq!(
            err,
            SecretError::MissingPrefix,
            "wrong error for a missing prefix"
        );
        assert!(
            err.to_string().contains("whsec_"),
            "error {err} does not name the prefix"
        );
    }

    #[test]
    fn a_secret_with_bad_base64_is_rejected() {
        for bad in [
            "whsec_not*base64!",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw==",
        ] {
            assert_eq!(
                Secret::parse(bad).unwrap_err(),
                SecretError::InvalidBase64,
                "{bad:?} was not reported as bad base64"
            );
        }
    }

    #[test]
    fn an_empty_secret_is_rejected_as_too_short() {
        assert_eq!(
            Secret::parse("whsec_").unwrap_err(),
            SecretError::InvalidLength { len: 0 },
            "an empty key was not rejected"
        );
    }

    #[test]
    fn a_secret_shorter_than_24_bytes_is_rejected() {
        let short = format!("whsec_{}", STANDARD.encode([7u8; 23]));
        assert_eq!(
            Secret::parse(&short).unwrap_err(),
            SecretError::InvalidLength { len: 23 },
            "a 23-byte key was not rejected as too short"
        );
    }

    #[test]
    fn a_secret_longer_than_64_bytes_is_rejected() {
        let long = format!("whsec_{}", STANDARD.encode([7u8; 65]));
        assert_eq!(
            Secret::parse(&long).unwrap_err(),
            SecretError::InvalidLength { len: 65 },
            "a 65-byte key was not rejected as too long"
        );
        let max = format!("whsec_{}", STANDARD.encode([7u8; 64]));
        assert!(
            Secret::parse(&max).is_ok(),
            "a 64-byte key was wrongly rejected"
        );
    }

    #[test]
    fn a_sealed_secret_opens_for_the_same_endpoint() {
        let secret = Secret::generate();
        let sealed = sealer().seal("ep_1", &secret);
        assert!(
            sealed.starts_with("v1."),
            "sealed value {sealed:?} lacks the v1. tag"
        );
        let opened = sealer()
            .open("ep_1", &sealed)
            .expect("sealed secret should open");
        assert_eq!(
            opened.key(),
            secret.key(),
            "opened secret differs from the sealed one"
        );
    }

    #[test]
    fn a_sealed_secret_is_url_safe_text_of_the_expected_length() {
        let sealed = sealer().seal("ep_1", &Secret::generate());
        let body = &sealed["v1.".len()..];
        assert!(
            body.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "sealed body {body:?} is not base64url without padding"
        );
        // 12-byte nonce + 32-byte key + 16-byte tag = 60 bytes = 80 base64 characters.
        assert_eq!(body.len(), 80, "sealed body has an unexpected length");
    }

    #[test]
    fn a_value_sealed_by_an_earlier_build_still_opens() {
        // Pins the HKDF salt/info, cipher and text format: if any of them changes,
        // every secret already stored in a database becomes unreadable.
        let sealed = "v1.Ke2R0NaYa4LkqVStpCxv6xyzGaWdKjgrBSu25ijucZtDMdJd3-H0vi8SjO5Ihyx4g87QZg";
        let opened = sealer()
            .open("ep_1", sealed)
            .expect("a value sealed with the v1 format should still open");
        assert_eq!(
            opened.expose(),
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "the pinned sealed value opened to the wrong secret"
        );
    }

    #[test]
    fn a_sealed_secret_does_not_open_for_another_endpoint() {
        let sealed = sealer().seal("ep_1", &Secret::generate());
        assert_eq!(
            sealer().open("ep_2", &sealed).unwrap_err(),
            SecretError::SealedAuthenticationFailed,
            "a ciphertext moved to another endpoint's row was accepted"
        );
    }

    #[test]
    fn a_sealed_secret_does_not_open_under_another_passphrase() {
        let sealed = sealer().seal("ep_1", &Secret::generate());
        let other =
            SecretBox::from_passphrase(OTHER_PASSPHRASE).expect("passphrase should be accepted");
        assert_eq!(
            other.open("ep_1", &sealed).unwrap_err(),
            SecretError::SealedAuthenticationFailed,
            "a secret opened under the wrong passphrase"
        );
    }

    #[test]
    fn a_tampered_ciphertext_does_not_open() {
        let sealed = sealer().seal("ep_1", &Secret::generate());
        let mut bytes = URL_SAFE_NO_PAD
            .decode(&sealed[3..])
            .expect("sealed body should decode");
        for i in [0, NONCE_BYTES, bytes.len() - 1] {
            bytes[i] ^= 0x01;
            let tampered = format!("v1.{}", URL_SAFE_NO_PAD.encode(&bytes));
            assert_eq!(
                sealer().open("ep_1", &tampered).unwrap_err(),
                SecretError::SealedAuthenticationFailed,
                "flipping a bit at byte {i} went unnoticed"
            );
            bytes[i] ^= 0x01;
        }
    }

    #[test]
    fn two_seals_of_the_same_secret_differ() {
        let secret = Secret::generate();
        let a = sealer().seal("ep_1", &secret);
        let b = sealer().seal("ep_1", &secret);
        assert_ne!(
            a, b,
            "sealing twice gave the same output, so the nonce is not random"
        );
    }

    #[test]
    fn a_sealed_value_with_a_bad_format_is_reported_as_malformed_not_as_tampered() {
        let b = sealer();
        assert_eq!(
            b.open("ep_1", "v2.AAAA").unwrap_err(),
            SecretError::SealedVersionUnknown,
            "an unknown version tag was not reported as such"
        );
        assert_eq!(
            b.open("ep_1", "").unwrap_err(),
            SecretError::SealedVersionUnknown,
            "an empty value was not reported as lacking the version tag"
        );
        assert!(
            matches!(
                b.open("ep_1", "v1.not base64!").unwrap_err(),
                SecretError::SealedMalformed(_)
            ),
            "invalid base64url was not reported as malformed"
        );
        assert!(
            matches!(
                b.open("ep_1", &format!("v1.{}", URL_SAFE_NO_PAD.encode([0u8; 27])))
                    .unwrap_err(),
                SecretError::SealedMalformed(_)
            ),
            "a value too short for nonce and tag was not reported as malformed"
        );
    }

    #[test]
    fn a_passphrase_shorter_than_32_characters_is_rejected() {
        let err = SecretBox::from_passphrase(&"x".repeat(31)).unwrap_err();
        assert_eq!(
            err,
            SecretError::PassphraseTooShort { chars: 31 },
            "31 characters were accepted"
        );
        assert!(
            err.to_string().contains("32"),
            "error {err} does not state the minimum"
        );
        assert!(
            SecretBox::from_passphrase(&"x".repeat(32)).is_ok(),
            "exactly 32 characters were rejected"
        );
    }

    #[test]
    fn a_passphrase_is_measured_in_characters_not_bytes() {
        // 16 two-byte characters: 32 bytes but only 16 characters of passphrase.
        let err = SecretBox::from_passphrase(&"é".repeat(16)).unwrap_err();
        assert_eq!(
            err,
            SecretError::PassphraseTooShort { chars: 16 },
            "multi-byte characters were counted as bytes"
        );
    }

    #[test]
    fn a_generated_passphrase_is_44_characters_and_accepted() {
        let p = generate_passphrase();
        assert_eq!(
            p.len(),
            44,
            "generated passphrase {p:?} is not 44 characters"
        );
        assert_eq!(
            STANDARD.decode(&p).map(|b| b.len()),
            Ok(32),
            "passphrase is not base64 of 32 bytes"
        );
        assert_ne!(
            p,
            generate_passphrase(),
            "two generated passphrases were identical"
        );
        assert!(
            SecretBox::from_passphrase(&p).is_ok(),
            "a generated passphrase was rejected"
        );
    }

    #[test]
    fn debug_output_contains_no_key_material() {
        let secret = Secret::generate();
        let exposed = secret.expose();
        let encoded = &exposed["whsec_".len()..];
        let printed = format!("{secret:?} {:?}", vec![secret.clone()]);
        assert_eq!(
            format!("{secret:?}"),
            "Secret(whsec_…)",
            "Secret's Debug format changed"
        );
        assert!(
            !printed.contains(encoded),
            "Debug output {printed:?} leaks the key"
        );
        assert!(
            !printed.contains(&format!("{:?}", secret.key())),
            "Debug output {printed:?} leaks the raw key bytes"
        );
        let boxed = format!("{:?}", sealer());
        assert_eq!(
            boxed, "SecretBox(…)",
            "SecretBox's Debug output {boxed:?} may leak the key"
        );
    }
}
