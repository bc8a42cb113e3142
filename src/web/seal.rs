//! Short notes sealed for one session: encrypted and authenticated under a
//! key derived from the session key (ChaCha20-Poly1305), bound to the
//! session id, so a note carried in a cookie can be read and made only by
//! this server, for that session. What a page says after a redirect (and a
//! new secret it shows once) travels this way, never as plain text.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use chacha20poly1305::{
    ChaCha20Poly1305, Key, Nonce,
    aead::{Aead as _, KeyInit as _, Payload},
};
use hmac::{Hmac, Mac};
use rand::RngCore as _;
use sha2::Sha256;

const NONCE_BYTES: usize = 12;

/// The cipher for notes of `purpose`: its key is HMAC-SHA256 of the
/// purpose under the session key, so no other use of that key shares it.
fn cipher(key: &[u8; 32], purpose: &str) -> ChaCha20Poly1305 {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(b"seal.");
    mac.update(purpose.as_bytes());
    let derived = mac.finalize().into_bytes();
    ChaCha20Poly1305::new(Key::from_slice(&derived))
}

/// `plain` sealed for session `session_id`, as base64url text.
pub fn seal(key: &[u8; 32], purpose: &str, session_id: &str, plain: &[u8]) -> String {
    let mut nonce = [0u8; NONCE_BYTES];
    rand::rng().fill_bytes(&mut nonce);
    let payload = Payload {
        msg: plain,
        aad: session_id.as_bytes(),
    };
    let sealed = cipher(key, purpose)
        .encrypt(Nonce::from_slice(&nonce), payload)
        .expect("ChaCha20-Poly1305 seals any message");
    let mut out = nonce.to_vec();
    out.extend_from_slice(&sealed);
    URL_SAFE_NO_PAD.encode(out)
}

/// What `sealed` holds, if this server sealed it for `purpose` and
/// session `session_id`; `None` for anything else.
pub fn open(key: &[u8; 32], purpose: &str, session_id: &str, sealed: &str) -> Option<Vec<u8>> {
    let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
    if bytes.len() < NONCE_BYTES {
        return None;
    }
    let (nonce, msg) = bytes.split_at(NONCE_BYTES);
    let payload = Payload {
        msg,
        aad: session_id.as_bytes(),
    };
    cipher(key, purpose)
        .decrypt(Nonce::from_slice(nonce), payload)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [5; 32];

    #[test]
    fn a_sealed_note_opens_for_its_session_and_purpose_only() {
        let sealed = seal(&KEY, "flash", "s1", b"Saved.");
        assert_eq!(
            open(&KEY, "flash", "s1", &sealed).as_deref(),
            Some(&b"Saved."[..])
        );
        assert_eq!(open(&KEY, "flash", "s2", &sealed), None, "another session");
        assert_eq!(open(&KEY, "other", "s1", &sealed), None, "another purpose");
        assert_eq!(open(&[6; 32], "flash", "s1", &sealed), None, "another key");
    }

    #[test]
    fn a_note_cannot_be_read_or_edited() {
        let sealed = seal(&KEY, "flash", "s1", b"whsec_abc");
        let raw = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        assert!(
            !raw.windows(9).any(|w| w == b"whsec_abc"),
            "the note is not readable in the cookie"
        );
        let mut edited = raw.clone();
        let last = edited.len() - 1;
        edited[last] ^= 1;
        let edited = URL_SAFE_NO_PAD.encode(edited);
        assert_eq!(open(&KEY, "flash", "s1", &edited), None);
        for broken in ["", "x", "AAAA", &sealed[..10]] {
            assert_eq!(open(&KEY, "flash", "s1", broken), None, "{broken:?}");
        }
    }

    #[test]
    fn sealing_twice_gives_different_text() {
        assert_ne!(seal(&KEY, "f", "s", b"x"), seal(&KEY, "f", "s", b"x"));
    }
}
