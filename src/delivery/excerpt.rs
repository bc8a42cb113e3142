//! The response excerpt partners see: small, printable, and with anything that
//! looks like a credential replaced.

const REDACTED: &str = "[redacted]";
const SECRET_PREFIXES: [&str; 8] = [
    "whsec_", "sk_", "rk_", "hks_", "hkp_", "hko_", "ghp_", "xox",
];

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '.')
}

fn looks_secret(word: &str, after_bearer: bool) -> bool {
    let long_mixed = word.len() >= 32
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic());
    after_bearer
        || long_mixed
        || SECRET_PREFIXES
            .iter()
            .any(|p| word.starts_with(p) && word.len() > p.len() + 4)
}

/// At most `max` bytes of the body as text, control characters blanked and
/// credential-like tokens (secret prefixes, bearer tokens, long mixed
/// alphanumeric runs) replaced by `[redacted]`.
pub fn redacted_excerpt(body: &[u8], max: usize) -> String {
    let mut end = body.len().min(max);
    let text = loop {
        match std::str::from_utf8(&body[..end]) {
            Ok(t) => break t.to_string(),
            Err(e) if e.valid_up_to() > 0 && body.len() > max => end = e.valid_up_to(),
            Err(_) => break String::from_utf8_lossy(&body[..end]).into_owned(),
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let mut previous_word_was_bearer = false;
    let flush = |word: &mut String, out: &mut String, bearer: &mut bool| {
        if !word.is_empty() {
            if looks_secret(word, *bearer) {
                out.push_str(REDACTED);
            } else {
                out.push_str(word);
            }
            *bearer = word.eq_ignore_ascii_case("bearer") || word.eq_ignore_ascii_case("basic");
            word.clear();
        }
    };
    for c in text.chars() {
        if is_token_char(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out, &mut previous_word_was_bearer);
            out.push(if c.is_control() && c != '\n' && c != '\t' {
                ' '
            } else {
                c
            });
        }
    }
    flush(&mut word, &mut out, &mut previous_word_was_bearer);
    if out.len() > max {
        let mut cut = max;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_error_message_passes_through() {
        assert_eq!(
            redacted_excerpt(b"{\"error\":\"bad signature\"}", 1024),
            "{\"error\":\"bad signature\"}"
        );
    }

    #[test]
    fn credentials_are_replaced() {
        let body = b"Authorization: Bearer abc.def secret=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw key=sk_live_12345678 token=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b";
        let e = redacted_excerpt(body, 1024);
        assert!(!e.contains("abc.def"), "bearer token leaked: {e}");
        assert!(!e.contains("whsec_MfKQ"), "webhook secret leaked: {e}");
        assert!(!e.contains("sk_live"), "api key leaked: {e}");
        assert!(!e.contains("9f86d081"), "long token leaked: {e}");
        assert!(e.contains("Authorization"), "{e}");
    }

    #[test]
    fn the_excerpt_is_capped_and_printable() {
        let body = "é".repeat(1000);
        let e = redacted_excerpt(body.as_bytes(), 1024);
        assert!(e.len() <= 1024);
        assert_eq!(redacted_excerpt(b"a\x00b\x1bc", 100), "a b c");
        assert_eq!(
            redacted_excerpt(&[0xff, 0xfe, b'o', b'k'], 100),
            "\u{fffd}\u{fffd}ok"
        );
    }
}
