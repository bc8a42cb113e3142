//! A URL as an attempt record keeps it (the endpoint it was sent to, the
//! `Location` a receiver answered with): credentials removed and the length
//! capped, so that what is shown to partners and operators cannot leak a
//! secret a URL carried.
//!
//! - The userinfo (`user:password@`) of an absolute URL is dropped.
//! - The value of each query (and fragment) parameter whose name names a
//!   secret (`domain::secret_names`, and the URL-specific `sig`,
//!   `signature`, `code`, `hmac`) becomes `redacted`; the name stays.
//! - Control characters become spaces, and the result is at most
//!   `URL_MAX_BYTES` long, cut on a character boundary and marked with `…`.
//!
//! Relative references (`/login?token=…`) and malformed text are handled
//! the same way: nothing here needs the URL to parse.

use super::secret_names::is_secret_key;

/// The longest URL an attempt keeps, in bytes (as its response excerpt).
pub const URL_MAX_BYTES: usize = 1024;

/// What a secret value becomes.
pub const REDACTED: &str = "redacted";

/// Parameter names that carry secrets in URLs, beyond the names that do
/// everywhere: signed links (`sig`, `signature`, `hmac`) and OAuth2
/// authorization codes (`code`).
const URL_SECRET_NAMES: [&str; 4] = ["sig", "signature", "code", "hmac"];

fn is_secret_param(name: &str) -> bool {
    let decoded = name.replace('+', " ");
    let decoded = percent_decoded(&decoded);
    is_secret_key(&decoded)
        || URL_SECRET_NAMES
            .iter()
            .any(|n| n.eq_ignore_ascii_case(decoded.trim()))
}

/// `%XX` escapes decoded where they form ASCII; anything else kept as is.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
            && h * 16 + l < 0x80
        {
            out.push(char::from((h * 16 + l) as u8));
            i += 3;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// `a=1&token=x` with secret values replaced.
fn redact_params(params: &str) -> String {
    params
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_secret_param(name) => format!("{name}={REDACTED}"),
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Drops `user:password@` from the authority of an absolute URL.
fn without_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_len].rfind('@') {
        Some(at) => format!("{}{}", &url[..authority_start], &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Caps `text` at `max` bytes, marking a cut with `…` (within the cap).
fn capped(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mark = "…";
    let mut cut = max.saturating_sub(mark.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(mark);
    text
}

/// The URL with its credentials removed and its length capped (see the
/// module doc).
pub fn redact_url(url: &str) -> String {
    let printable: String = url
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let url = without_userinfo(printable.trim());
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url.as_str(), None),
    };
    let mut out = match before_fragment.split_once('?') {
        Some((path, query)) => format!("{path}?{}", redact_params(query)),
        None => before_fragment.to_string(),
    };
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&redact_params(f));
    }
    capped(out, URL_MAX_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_url_is_kept_as_it_is() {
        for url in [
            "https://hooks.example.com/hookd",
            "https://hooks.example.com:8443/in?tenant=7&page=2",
            "/relative/path?x=1",
        ] {
            assert_eq!(redact_url(url), url);
        }
    }

    #[test]
    fn credentials_in_the_userinfo_are_dropped() {
        assert_eq!(
            redact_url("https://alice:hunter2@hooks.example.com/in?x=1"),
            "https://hooks.example.com/in?x=1"
        );
        assert_eq!(
            redact_url("https://token@hooks.example.com"),
            "https://hooks.example.com"
        );
        assert_eq!(
            redact_url("https://hooks.example.com/a@b"),
            "https://hooks.example.com/a@b",
            "an @ in the path is no userinfo"
        );
    }

    #[test]
    fn secret_query_values_are_redacted_and_their_names_kept() {
        assert_eq!(
            redact_url("https://x.example/login?token=sk_live_abc&password=hunter2&next=%2Fhome"),
            "https://x.example/login?token=redacted&password=redacted&next=%2Fhome"
        );
        assert_eq!(
            redact_url(
                "/cb?api_key=1&apiKey=2&client_secret=3&sig=4&signature=5&code=6&auth=7&x-access-token=8"
            ),
            "/cb?api_key=redacted&apiKey=redacted&client_secret=redacted&sig=redacted\
             &signature=redacted&code=redacted&auth=redacted&x-access-token=redacted"
        );
    }

    #[test]
    fn encoded_names_and_fragments_are_redacted_too() {
        assert_eq!(
            redact_url("https://x.example/?%74oken=abc#access_token=xyz&state=1"),
            "https://x.example/?%74oken=redacted#access_token=redacted&state=1"
        );
    }

    #[test]
    fn ordinary_names_that_contain_a_secret_word_are_kept() {
        assert_eq!(
            redact_url("https://x.example/?monkey=1&keyboard=2&zipcode=3"),
            "https://x.example/?monkey=1&keyboard=2&zipcode=3"
        );
    }

    #[test]
    fn a_long_url_is_capped_with_a_mark_on_a_character_boundary() {
        let long = format!("https://x.example/{}?token=secret", "é".repeat(3000));
        let out = redact_url(&long);
        assert!(out.len() <= URL_MAX_BYTES, "{} bytes", out.len());
        assert!(out.ends_with('…'));
        assert!(!out.contains("secret"));
    }

    #[test]
    fn control_characters_become_spaces() {
        assert_eq!(
            redact_url("https://x.example/a\nb"),
            "https://x.example/a b"
        );
    }
}
