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
        self.seal_bytes(endpoint_id, secret.key())
    }

    /// Encrypts any bytes bound to `context` (an endpoint id, or an endpoint
    /// id and the field they belong to: `ep_…/headers`), so a sealed value
    /// opens only where it was sealed.
    pub fn seal_bytes(&self, context: &str, plaintext: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rng().fill_bytes(&mut nonce);
        let payload = Payload {
            msg: plaintext,
            aad: context.as_bytes(),
        };
        // ChaCha20-Poly1305 only refuses plaintexts of around 256 GiB; what
        // is sealed here is at most a few kilobytes.
        let ciphertext = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), payload)
            .expect("a plaintext of a few kilobytes is always encryptable");
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
        Secret::from_key(self.open_bytes(endpoint_id, sealed)?)
    }

    /// Decrypts a value made by `seal_bytes` for the same context.
    pub fn open_bytes(&self, context: &str, sealed: &str) -> Result<Vec<u8>, SecretError> {
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
            aad: context.as_bytes(),
        };
        self.cipher
            .decrypt(Nonce::from_slice(nonce), payload)
            .map_err(|_| SecretError::SealedAuthenticationFailed)
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
mod tests;
