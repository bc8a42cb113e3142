//! Dashboard sessions: a signed, expiring token naming the operator key that
//! logged in. Stateless (any instance with the same master key accepts it);
//! the key is looked up on every request, so revoking it ends the session.
//!
//! Token: `v1.<key_id>.<expires_ms>.<base64url HMAC-SHA256>`.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The session cookie's name.
pub const COOKIE: &str = "hookd_session";

fn mac(key: &[u8; 32], message: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message.as_bytes());
    mac
}

/// A token for `key_id`, valid until `expires_ms`.
pub fn issue(key: &[u8; 32], key_id: &str, expires_ms: i64) -> String {
    let message = format!("v1.{key_id}.{expires_ms}");
    let tag = mac(key, &message).finalize().into_bytes();
    format!("{message}.{}", URL_SAFE_NO_PAD.encode(tag))
}

/// The key id in a genuine token that has not expired at `now_ms`.
pub fn verify(key: &[u8; 32], token: &str, now_ms: i64) -> Option<String> {
    let (message, tag) = token.rsplit_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    // Constant-time comparison of the tag.
    mac(key, message).verify_slice(&tag).ok()?;
    let mut parts = message.split('.');
    let (Some("v1"), Some(key_id), Some(expires), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let expires: i64 = expires.parse().ok()?;
    (now_ms < expires).then(|| key_id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    #[test]
    fn a_token_names_its_key_until_it_expires() {
        let token = issue(&KEY, "key_01", 1_000);
        assert_eq!(verify(&KEY, &token, 999).as_deref(), Some("key_01"));
        assert_eq!(verify(&KEY, &token, 1_000), None, "expired at its expiry");
    }

    #[test]
    fn a_token_signed_with_another_key_is_refused() {
        let token = issue(&[8; 32], "key_01", 1_000);
        assert_eq!(verify(&KEY, &token, 0), None);
    }

    #[test]
    fn an_edited_token_is_refused() {
        let token = issue(&KEY, "key_01", 1_000);
        let longer = token.replacen(".1000.", ".9999999999999.", 1);
        assert_eq!(verify(&KEY, &longer, 0), None, "a later expiry");
        let other = token.replacen("key_01", "key_02", 1);
        assert_eq!(verify(&KEY, &other, 0), None, "another key id");
        for broken in ["", "v1", "v1.key_01.1000", "v1.key_01.1000.", "v1.a.b.c.d"] {
            assert_eq!(verify(&KEY, broken, 0), None, "{broken:?}");
        }
    }
}
