//! The response excerpt partners see: small, printable, and with anything that
//! looks like a credential replaced.
//!
//! Two rules replace text with `[redacted]`, in one left-to-right pass:
//!
//! - A word (a run of letters, digits and `_-+/.`) that looks like a
//!   credential by itself: it follows `Bearer`/`Basic`, starts with a known
//!   secret prefix (`whsec_`, `sk_`, …), or is a long run mixing letters and
//!   digits.
//! - The value of a field whose key names a secret, whatever the value's
//!   length. A key names a secret when one of its parts, split on
//!   non-alphanumerics and on lower-to-upper case changes (`x-api-key`,
//!   `accessToken`, `"client_secret"`), is one of `SECRET_KEY_PARTS`,
//!   ignoring case. Whole parts only: `monkey` and `keyboard` are ordinary
//!   words, while `key_id` is redacted (erring on the side of hiding). The key
//!   may be quoted and is followed by `=` or `:`; the value is a quoted string
//!   (escapes honoured, up to its closing quote or the end of the text), or a
//!   bare run up to whitespace or one of `,;&)]}<>"'`. A key that opens a
//!   line with `:` is a header (`Cookie: a=b; c=d`): the rest of the line is
//!   its value. The key and the punctuation around the value stay visible.

use crate::domain::secret_names::is_secret_key;

const REDACTED: &str = "[redacted]";
const SECRET_PREFIXES: [&str; 8] = [
    "whsec_", "sk_", "rk_", "hks_", "hkp_", "hko_", "ghp_", "xox",
];

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'.')
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

/// Where an unquoted value stops: whitespace, or punctuation that closes a
/// field in JSON, query strings, cookies and markup.
fn ends_bare_value(c: u8) -> bool {
    c.is_ascii_whitespace() || b",;&)]}{[<>\"'".contains(&c)
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// After a secret key ending at `i`: where its value starts and ends, if a
/// separator and a non-empty value follow. Every end is at an ASCII byte or
/// the end of the text, so it is a char boundary.
fn value_after_key(b: &[u8], i: usize, opens_line: bool) -> Option<(usize, usize)> {
    let mut j = i;
    let quoted_key = j < b.len() && matches!(b[j], b'"' | b'\'');
    if quoted_key {
        j += 1;
    }
    j = skip_blanks(b, j);
    let separator = *b.get(j).filter(|c| matches!(c, b'=' | b':'))?;
    j = skip_blanks(b, j + 1);
    let first = *b.get(j)?;
    let (start, end) = if matches!(first, b'"' | b'\'') {
        let mut k = j + 1;
        while k < b.len() && b[k] != first {
            k += if b[k] == b'\\' { 2 } else { 1 };
        }
        (j + 1, k.min(b.len()))
    } else if separator == b':' && opens_line && !quoted_key {
        let end = b[j..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |n| j + n);
        (j, end)
    } else {
        let end = b[j..]
            .iter()
            .position(|&c| ends_bare_value(c))
            .map_or(b.len(), |n| j + n);
        (j, end)
    };
    (end > start).then_some((start, end))
}

/// Replaces credentials in `text` (the two rules of the module doc).
fn redact(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut after_bearer = false;
    let mut line_start = true;
    let mut i = 0;
    while i < b.len() {
        if !is_token_byte(b[i]) {
            // Non-token bytes are copied as they are, whole characters at a
            // time; tokens are ASCII, so a multi-byte character is never split.
            let next = (i + 1..b.len())
                .find(|&j| is_token_byte(b[j]))
                .unwrap_or(b.len());
            let gap = &text[i..next];
            if let Some(nl) = gap.rfind('\n') {
                line_start = gap[nl + 1..].bytes().all(|c| matches!(c, b' ' | b'\t'));
            } else if !gap.bytes().all(|c| matches!(c, b' ' | b'\t')) {
                line_start = false;
            }
            out.push_str(gap);
            i = next;
            continue;
        }
        let start = i;
        while i < b.len() && is_token_byte(b[i]) {
            i += 1;
        }
        let word = &text[start..i];
        out.push_str(if looks_secret(word, after_bearer) {
            REDACTED
        } else {
            word
        });
        after_bearer = word.eq_ignore_ascii_case("bearer") || word.eq_ignore_ascii_case("basic");
        let opens_line = line_start;
        line_start = false;
        if is_secret_key(word)
            && let Some((value_start, value_end)) = value_after_key(b, i, opens_line)
        {
            out.push_str(&text[i..value_start]);
            out.push_str(REDACTED);
            after_bearer = false;
            i = value_end;
        }
    }
    out
}

/// At most `max` bytes of the body as text, control characters blanked and
/// credentials replaced by `[redacted]` (see the module doc for the rules).
pub fn redacted_excerpt(body: &[u8], max: usize) -> String {
    let mut end = body.len().min(max);
    let text = loop {
        match std::str::from_utf8(&body[..end]) {
            Ok(t) => break t.to_string(),
            Err(e) if e.valid_up_to() > 0 && body.len() > max => end = e.valid_up_to(),
            Err(_) => break String::from_utf8_lossy(&body[..end]).into_owned(),
        }
    };
    let printable: String = text
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut out = redact(&printable);
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
    fn credential_looking_words_are_replaced_wherever_they_stand() {
        let cases: &[(&str, &str)] = &[
            (
                "rejected Bearer abc.def here",
                "rejected Bearer [redacted] here",
            ),
            ("unknown whsec_MfKQ9r8GKYqrTw", "unknown [redacted]"),
            (
                "id 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b seen",
                "id [redacted] seen",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(
                redacted_excerpt(body.as_bytes(), 1024),
                *want,
                "for {body:?}"
            );
        }
    }

    #[test]
    fn values_of_secret_named_fields_are_replaced_whatever_their_length() {
        let cases: &[(&str, &str)] = &[
            (
                "password=hunter2 token=abcdefghijklmnop",
                "password=[redacted] token=[redacted]",
            ),
            (
                r#"{"password": "hunter2", "user": "bob"}"#,
                r#"{"password": "[redacted]", "user": "bob"}"#,
            ),
            (r#"{"api_key":"x"}"#, r#"{"api_key":"[redacted]"}"#),
            (r#"{"secret":"s3"}"#, r#"{"secret":"[redacted]"}"#),
            (r#"{"pin":1,"otp":123456}"#, r#"{"pin":1,"otp":[redacted]}"#),
            (
                r#"{"accessToken":"a\"b c","n":2}"#,
                r#"{"accessToken":"[redacted]","n":2}"#,
            ),
            (r#"{"APIKey":"k"}"#, r#"{"APIKey":"[redacted]"}"#),
            (
                "sent x-api-key: k1, next",
                "sent x-api-key: [redacted], next",
            ),
            (
                "GET /cb?session_id=abc&page=2",
                "GET /cb?session_id=[redacted]&page=2",
            ),
            ("PASSWORD = 'hunter 2' ok", "PASSWORD = '[redacted]' ok"),
            ("Cookie: a=b; c=d\nok", "Cookie: [redacted]\nok"),
            ("  Set-Cookie: sid=1\n", "  Set-Cookie: [redacted]\n"),
            (
                "bad header Cookie: a=b; c=d",
                "bad header Cookie: [redacted]; c=d",
            ),
            ("auth=", "auth="),
            (r#"{"token":"unterminated"#, r#"{"token":"[redacted]"#),
        ];
        for (body, want) in cases {
            assert_eq!(
                redacted_excerpt(body.as_bytes(), 1024),
                *want,
                "for {body:?}"
            );
        }
    }

    #[test]
    fn ordinary_words_and_fields_stay_readable() {
        let cases = [
            "monkey=1 keyboard=2 donkey: 3",
            r#"{"error":"invalid token","detail":"expired"}"#,
            r#"{"kind":"key","value":"v"}"#,
            "session expired, please retry",
            r#"{"session": {"id": 7}}"#,
            "passport=X12 tokenizer=on",
        ];
        for body in cases {
            assert_eq!(
                redacted_excerpt(body.as_bytes(), 1024),
                body,
                "over-redacted"
            );
        }
    }

    #[test]
    fn secret_names_are_found_by_their_parts() {
        for key in [
            "password",
            "Passwd",
            "client_secret",
            "x-api-key",
            "apiKey",
            "refreshToken",
            "Proxy-Authorization",
            "user.credentials",
            "SESSIONID",
        ] {
            assert!(is_secret_key(key), "{key} names a secret");
        }
        for key in [
            "monkey",
            "keyboard",
            "passport",
            "tokenizer",
            "author",
            "keynote",
        ] {
            assert!(!is_secret_key(key), "{key} is an ordinary word");
        }
    }

    #[test]
    fn redaction_takes_time_in_proportion_to_the_body() {
        // Many keys with no separator, and an escape-heavy value: each byte
        // is looked at a bounded number of times.
        let body = format!(
            "{}{{\"token\":\"{}\"}}",
            "key ".repeat(50_000),
            "\\\"".repeat(50_000)
        );
        let started = std::time::Instant::now();
        let e = redacted_excerpt(body.as_bytes(), body.len());
        assert!(
            e.ends_with("{\"token\":\"[redacted]\"}"),
            "the value is replaced"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "linear time"
        );
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
