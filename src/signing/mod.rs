//! Owns Standard Webhooks signing: building the `webhook-signature` header and verifying it as a receiver would.
//!
//! Signed content is `{webhook-id}.{webhook-timestamp}.{body}` over the exact body bytes;
//! each signature is `v1,` + base64(HMAC-SHA256(secret key, signed content)).
//! See <https://www.standardwebhooks.com>. This file signs; `verify.rs` checks.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac as _};
use sha2::Sha256;

use crate::secret::Secret;

mod keys;
mod verify;
pub use keys::{PUBLIC_KEY_PREFIX, Scheme, SigningKey, public_key_text, signature_header};
pub use verify::{VerifyError, verify};

type HmacSha256 = Hmac<Sha256>;

/// How far a receiver lets `webhook-timestamp` drift from its clock, in either direction.
pub const DEFAULT_TOLERANCE_SECS: i64 = 300;

/// The only signature scheme this module produces or accepts (symmetric HMAC-SHA256).
const VERSION: &str = "v1";

/// One `v1,<base64>` signature entry for `secret`.
pub fn sign(secret: &Secret, msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    let tag = signature_bytes(secret, msg_id, timestamp, body);
    format!("{VERSION},{}", STANDARD.encode(tag))
}

/// The signed content, `{id}.{timestamp}.{body}`, as one buffer (Ed25519
/// signs a message whole).
fn signed_content(msg_id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let timestamp = timestamp.to_string();
    let mut content = Vec::with_capacity(msg_id.len() + timestamp.len() + body.len() + 2);
    content.extend_from_slice(msg_id.as_bytes());
    content.push(b'.');
    content.extend_from_slice(timestamp.as_bytes());
    content.push(b'.');
    content.extend_from_slice(body);
    content
}

fn signature_bytes(secret: &Secret, msg_id: &str, timestamp: i64, body: &[u8]) -> [u8; 32] {
    // HMAC takes keys of any length, so this constructor cannot fail.
    let mut mac =
        HmacSha256::new_from_slice(secret.key()).expect("HMAC accepts keys of any length");
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests;
