//! Session cookies of the dashboard and the portal: a signed, expiring token that names a session
//! row and the operator key that signed in. The signature turns forgeries
//! away without a database look-up; the row (`store::sessions`) decides
//! whether the session still lives, so signing out ends it everywhere.
//!
//! Token: `<realm>.<session_id>.<key_id>.<expires_ms>.<base64url HMAC-SHA256>`,
//! realm `v2` for the dashboard and `p1` for the portal.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use rand::RngCore as _;
use sha2::Sha256;

/// The session cookie's name.
pub const COOKIE: &str = "hookd_session";

/// What a genuine, unexpired token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub session_id: String,
    pub key_id: String,
}

fn mac(key: &[u8; 32], message: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message.as_bytes());
    mac
}

/// A fresh session id: 128 random bits, base64url.
pub fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Which pages a session is for: a dashboard token never opens the
/// portal, nor a portal token the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Realm {
    Dashboard,
    Portal,
}

impl Realm {
    fn prefix(self) -> &'static str {
        match self {
            Realm::Dashboard => "v2",
            Realm::Portal => "p1",
        }
    }
}

/// A dashboard token for session `session_id` of `key_id`, valid until `expires_ms`.
pub fn issue(key: &[u8; 32], session_id: &str, key_id: &str, expires_ms: i64) -> String {
    issue_in(Realm::Dashboard, key, session_id, key_id, expires_ms)
}

/// The claim of a genuine dashboard token that has not expired at `now_ms`.
pub fn verify(key: &[u8; 32], token: &str, now_ms: i64) -> Option<Claim> {
    verify_in(Realm::Dashboard, key, token, now_ms)
}

/// A token of `realm` for session `session_id` of `key_id`, valid until `expires_ms`.
pub fn issue_in(
    realm: Realm,
    key: &[u8; 32],
    session_id: &str,
    key_id: &str,
    expires_ms: i64,
) -> String {
    let message = format!("{}.{session_id}.{key_id}.{expires_ms}", realm.prefix());
    let tag = mac(key, &message).finalize().into_bytes();
    format!("{message}.{}", URL_SAFE_NO_PAD.encode(tag))
}

/// The claim of a genuine token of `realm` that has not expired at `now_ms`.
pub fn verify_in(realm: Realm, key: &[u8; 32], token: &str, now_ms: i64) -> Option<Claim> {
    let (message, tag) = token.rsplit_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    // Constant-time comparison of the tag.
    mac(key, message).verify_slice(&tag).ok()?;
    let mut parts = message.split('.');
    let (Some(prefix), Some(session_id), Some(key_id), Some(expires), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    if prefix != realm.prefix() {
        return None;
    }
    let expires: i64 = expires.parse().ok()?;
    (now_ms < expires).then(|| Claim {
        session_id: session_id.to_string(),
        key_id: key_id.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    fn claim(session: &str, key: &str) -> Option<Claim> {
        Some(Claim {
            session_id: session.into(),
            key_id: key.into(),
        })
    }

    #[test]
    fn a_token_names_its_session_and_key_until_it_expires() {
        let token = issue(&KEY, "s1", "key_01", 1_000);
        assert_eq!(verify(&KEY, &token, 999), claim("s1", "key_01"));
        assert_eq!(verify(&KEY, &token, 1_000), None, "expired at its expiry");
    }

    #[test]
    fn a_token_signed_with_another_key_is_refused() {
        let token = issue(&[8; 32], "s1", "key_01", 1_000);
        assert_eq!(verify(&KEY, &token, 0), None);
    }

    #[test]
    fn an_edited_token_is_refused() {
        let token = issue(&KEY, "s1", "key_01", 1_000);
        let longer = token.replacen(".1000.", ".9999999999999.", 1);
        assert_eq!(verify(&KEY, &longer, 0), None, "a later expiry");
        let other = token.replacen("key_01", "key_02", 1);
        assert_eq!(verify(&KEY, &other, 0), None, "another key id");
        let session = token.replacen("s1", "s2", 1);
        assert_eq!(verify(&KEY, &session, 0), None, "another session");
        for broken in ["", "v2", "v2.s.k.1000", "v2.s.k.1000.", "v2.a.b.c.d.e"] {
            assert_eq!(verify(&KEY, broken, 0), None, "{broken:?}");
        }
    }

    #[test]
    fn a_token_opens_only_the_pages_of_its_realm() {
        let portal = issue_in(Realm::Portal, &KEY, "s1", "pl_1", 1_000);
        assert_eq!(
            verify_in(Realm::Portal, &KEY, &portal, 0),
            claim("s1", "pl_1")
        );
        assert_eq!(
            verify(&KEY, &portal, 0),
            None,
            "a portal token is no dashboard token"
        );
        let dashboard = issue(&KEY, "s1", "key_01", 1_000);
        assert_eq!(verify_in(Realm::Portal, &KEY, &dashboard, 0), None);
    }

    #[test]
    fn session_ids_are_fresh_and_hold_no_dot() {
        let (a, b) = (new_session_id(), new_session_id());
        assert_ne!(a, b);
        assert!(!a.contains('.') && a.len() >= 22, "{a}");
    }
}
