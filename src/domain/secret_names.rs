//! The names that mark a value as secret: a field, header or query parameter
//! whose key has one of these parts keeps its value out of what is shown.
//! Shared by the response excerpts and the redaction of URLs.

/// Key parts (compared ignoring ASCII case) that make a field's value secret.
/// Run-together forms (`apikey`, `sessionid`) are listed since nothing splits
/// them.
pub const SECRET_KEY_PARTS: [&str; 28] = [
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "pass",
    "pwd",
    "secret",
    "secrets",
    "token",
    "tokens",
    "key",
    "keys",
    "apikey",
    "privatekey",
    "accesstoken",
    "refreshtoken",
    "clientsecret",
    "authorization",
    "auth",
    "cookie",
    "cookies",
    "session",
    "sessionid",
    "sid",
    "credential",
    "credentials",
    "jwt",
    "otp",
];

/// Whether a word used as a key names a secret (see the module doc of `delivery::excerpt`).
pub fn is_secret_key(word: &str) -> bool {
    let b = word.as_bytes();
    let mut start = 0;
    for i in 0..=b.len() {
        let boundary = i == b.len()
            || !b[i].is_ascii_alphanumeric()
            || (i > start && b[i].is_ascii_uppercase() && !b[i - 1].is_ascii_uppercase());
        if boundary {
            let part = &word[start..i];
            if SECRET_KEY_PARTS
                .iter()
                .any(|k| k.eq_ignore_ascii_case(part))
            {
                return true;
            }
            start = if i < b.len() && b[i].is_ascii_alphanumeric() {
                i
            } else {
                i + 1
            };
        }
    }
    false
}
