//! The rules for the credentials an endpoint presents to its receiver:
//! which static header names a partner may set, what a value may hold, and
//! how long a fetched OAuth2 token is used. Pure: the store seals them, the
//! delivery path sends them.

/// At most this many static headers per endpoint.
pub const MAX_HEADERS: usize = 20;
/// A header value's longest length, in bytes.
pub const MAX_VALUE_BYTES: usize = 4096;

/// Names hookd owns or HTTP reserves: framing and hop-by-hop headers, the
/// Standard Webhooks headers, the trace context, and the ones hookd sets.
const DENIED: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "user-agent",
    "traceparent",
    "tracestate",
];

/// Why a static header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("`{0}` is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)")]
    BadName(String),
    #[error("`{0}` is set by hookd or by HTTP itself and cannot be configured")]
    Reserved(String),
    #[error("the value of `{0}` must be visible ASCII or spaces, at most {MAX_VALUE_BYTES} bytes")]
    BadValue(String),
    #[error("`{0}` is named twice (header names are case-insensitive)")]
    Twice(String),
    #[error("at most {MAX_HEADERS} headers")]
    TooMany,
}

/// Checks a set of static headers; names come back lower-cased, in the
/// given order.
pub fn check_headers(headers: &[(String, String)]) -> Result<Vec<(String, String)>, HeaderError> {
    if headers.len() > MAX_HEADERS {
        return Err(HeaderError::TooMany);
    }
    let mut seen: Vec<String> = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if lower.is_empty() || !lower.bytes().all(is_token_char) {
            return Err(HeaderError::BadName(name.clone()));
        }
        if DENIED.contains(&lower.as_str()) || lower.starts_with("webhook-") {
            return Err(HeaderError::Reserved(name.clone()));
        }
        let visible = value
            .bytes()
            .all(|b| b == b' ' || b == b'\t' || (0x21..0x7f).contains(&b));
        if value.trim().is_empty() || value.len() > MAX_VALUE_BYTES || !visible {
            return Err(HeaderError::BadValue(name.clone()));
        }
        if seen.contains(&lower) {
            return Err(HeaderError::Twice(name.clone()));
        }
        seen.push(lower);
    }
    Ok(seen
        .into_iter()
        .zip(headers)
        .map(|(name, (_, value))| (name, value.trim().to_string()))
        .collect())
}

/// RFC 9110 `tchar`.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// How a stored header value is shown: never the value, only that one is set.
pub const REDACTED: &str = "[redacted]";

/// A fetched token is used until this long before it expires, so an attempt
/// never carries a token that runs out on the way.
const EARLY_MS: i64 = 60_000;
/// A token answer without `expires_in` is used this long.
const LIFETIME_UNKNOWN_MS: i64 = 5 * 60_000;

/// Until when a token fetched at `fetched_at_ms` that lives `expires_in`
/// seconds (`None`: not said) may be sent: a minute early, or a tenth of
/// its life early when it lives less than ten minutes.
pub fn token_usable_until(fetched_at_ms: i64, expires_in_secs: Option<u64>) -> i64 {
    let life = expires_in_secs
        .map(|s| i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX))
        .unwrap_or(LIFETIME_UNKNOWN_MS);
    let early = EARLY_MS.min(life / 10);
    fetched_at_ms.saturating_add(life - early)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, value: &str) -> (String, String) {
        (name.into(), value.into())
    }

    #[test]
    fn an_authorization_header_is_accepted_and_its_name_lower_cased() {
        let checked = check_headers(&[h("Authorization", "Bearer abc"), h("X-Tenant", " 42 ")]);
        assert_eq!(
            checked,
            Ok(vec![h("authorization", "Bearer abc"), h("x-tenant", "42")])
        );
    }

    #[test]
    fn framing_hop_by_hop_signature_and_trace_headers_are_refused() {
        for name in [
            "Host",
            "Content-Length",
            "Transfer-Encoding",
            "Connection",
            "webhook-signature",
            "Webhook-Id",
            "traceparent",
        ] {
            assert_eq!(
                check_headers(&[h(name, "x")]),
                Err(HeaderError::Reserved(name.into())),
                "{name}"
            );
        }
    }

    #[test]
    fn a_value_that_could_split_the_request_is_refused() {
        for value in ["a\r\nX-Evil: 1", "a\nb", "caf\u{e9}", "", "   "] {
            assert!(
                matches!(
                    check_headers(&[h("x-a", value)]),
                    Err(HeaderError::BadValue(_))
                ),
                "{value:?}"
            );
        }
        assert!(matches!(
            check_headers(&[h("bad name", "x")]),
            Err(HeaderError::BadName(_))
        ));
    }

    #[test]
    fn the_same_name_twice_in_another_case_is_refused() {
        assert_eq!(
            check_headers(&[h("X-A", "1"), h("x-a", "2")]),
            Err(HeaderError::Twice("x-a".into()))
        );
    }

    #[test]
    fn a_token_is_used_until_a_minute_before_it_expires_or_a_tenth_of_a_short_life() {
        assert_eq!(token_usable_until(1_000, Some(3600)), 1_000 + 3_540_000);
        assert_eq!(token_usable_until(0, Some(100)), 90_000);
        assert_eq!(token_usable_until(0, None), 270_000);
        assert_eq!(token_usable_until(0, Some(0)), 0);
    }
}
