//! CSRF tokens for form posts: each form carries a token derived from the
//! session it was rendered for (HMAC-SHA256 under the session key), so a
//! post made by another site, which cannot read the page, cannot carry it.
//! It stands beside `SameSite=Strict` cookies and the `Origin` check.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The form field that carries the token.
pub const FIELD: &str = "csrf";

fn mac(key: &[u8; 32], session_id: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(b"csrf.");
    mac.update(session_id.as_bytes());
    mac
}

/// The token for forms of session `session_id`.
pub fn token(key: &[u8; 32], session_id: &str) -> String {
    URL_SAFE_NO_PAD.encode(mac(key, session_id).finalize().into_bytes())
}

/// Whether `given` is the token of session `session_id` (constant time).
pub fn verify(key: &[u8; 32], session_id: &str, given: &str) -> bool {
    URL_SAFE_NO_PAD
        .decode(given)
        .is_ok_and(|tag| mac(key, session_id).verify_slice(&tag).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [3; 32];

    #[test]
    fn a_sessions_token_verifies_for_that_session_only() {
        let t = token(&KEY, "s1");
        assert!(verify(&KEY, "s1", &t));
        assert!(!verify(&KEY, "s2", &t), "another session");
        assert!(!verify(&[4; 32], "s1", &t), "another key");
        for bad in ["", "x", &t[1..]] {
            assert!(!verify(&KEY, "s1", bad), "{bad:?}");
        }
    }
}
