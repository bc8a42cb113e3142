//! The response policy of DESIGN §5: what an HTTP answer or a network failure
//! means for a delivery. One pure function decides; others act on it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Why an attempt failed, as shown to partners (and read back, by the
/// same names, as a search filter; the OpenAPI document lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    Dns,
    Connect,
    /// The egress proxy could not be reached, or refused to open the tunnel.
    Proxy,
    Tls,
    Timeout,
    HttpStatus,
    /// A 4xx that says the receiver refuses this request as it stands (a
    /// 400, 401, 403, 404, 422…): a persistent receiver error, unlike the
    /// 408, 425 and 429 that ask to come back later (`http_status`).
    ClientError,
    Redirect,
    Blocked,
    BodyTooLarge,
    /// The receiver's credentials could not be had: its OAuth2 token
    /// endpoint failed or refused the client.
    Auth,
    Internal,
}

impl ErrorCategory {
    /// Every category, for whatever lists them all (the metrics' series).
    pub const ALL: [ErrorCategory; 12] = [
        ErrorCategory::Dns,
        ErrorCategory::Connect,
        ErrorCategory::Proxy,
        ErrorCategory::Tls,
        ErrorCategory::Timeout,
        ErrorCategory::HttpStatus,
        ErrorCategory::ClientError,
        ErrorCategory::Redirect,
        ErrorCategory::Blocked,
        ErrorCategory::BodyTooLarge,
        ErrorCategory::Auth,
        ErrorCategory::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCategory::Dns => "dns",
            ErrorCategory::Connect => "connect",
            ErrorCategory::Proxy => "proxy",
            ErrorCategory::Tls => "tls",
            ErrorCategory::Timeout => "timeout",
            ErrorCategory::HttpStatus => "http_status",
            ErrorCategory::ClientError => "client_error",
            ErrorCategory::Redirect => "redirect",
            ErrorCategory::Blocked => "blocked",
            ErrorCategory::BodyTooLarge => "body_too_large",
            ErrorCategory::Auth => "auth",
            ErrorCategory::Internal => "internal",
        }
    }
}

/// The decision for one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx: the receiver durably accepted the event.
    Delivered,
    /// Not accepted; retry on the schedule (no sooner than `retry_after`).
    Failed {
        category: ErrorCategory,
        retry_after: Option<Duration>,
    },
    /// 410 Gone: stop and disable the endpoint.
    Gone,
}

/// The 4xx statuses that ask to be tried again later: `http_status`,
/// honouring `Retry-After`. Every other 4xx but 410 is a `client_error`.
pub const RETRYABLE_CLIENT_STATUSES: [u16; 3] = [408, 425, 429];

/// Classifies an HTTP status, with the `Retry-After` header if there was one.
pub fn classify_status(status: u16, retry_after: Option<&str>, now: DateTime<Utc>) -> Outcome {
    match status {
        200..=299 => Outcome::Delivered,
        410 => Outcome::Gone,
        300..=399 => Outcome::Failed {
            category: ErrorCategory::Redirect,
            retry_after: None,
        },
        s if (500..=599).contains(&s) || RETRYABLE_CLIENT_STATUSES.contains(&s) => {
            Outcome::Failed {
                category: ErrorCategory::HttpStatus,
                retry_after: retry_after.and_then(|v| parse_retry_after(v, now)),
            }
        }
        400..=499 => Outcome::Failed {
            category: ErrorCategory::ClientError,
            retry_after: None,
        },
        _ => Outcome::Failed {
            category: ErrorCategory::HttpStatus,
            retry_after: None,
        },
    }
}

/// `Retry-After` as delay-seconds or an HTTP date; anything else is ignored.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let at: DateTime<Utc> = at.into();
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 10, 15, 14, 0, 0).unwrap()
    }

    #[test]
    fn every_2xx_is_delivered() {
        for s in [200, 201, 202, 204, 299] {
            assert_eq!(classify_status(s, None, now()), Outcome::Delivered, "{s}");
        }
    }

    #[test]
    fn gone_stops_and_redirects_are_failures_of_their_own() {
        assert_eq!(classify_status(410, None, now()), Outcome::Gone);
        for s in [301, 302, 307, 308] {
            assert_eq!(
                classify_status(s, Some("5"), now()),
                Outcome::Failed {
                    category: ErrorCategory::Redirect,
                    retry_after: None
                },
                "{s} must not be followed nor honour Retry-After"
            );
        }
    }

    #[test]
    fn retryable_statuses_honour_retry_after_in_seconds_or_as_a_date() {
        let in_seconds = classify_status(429, Some("120"), now());
        assert_eq!(
            in_seconds,
            Outcome::Failed {
                category: ErrorCategory::HttpStatus,
                retry_after: Some(Duration::from_secs(120))
            }
        );
        let as_date = classify_status(503, Some("Thu, 15 Oct 2026 14:01:00 GMT"), now());
        assert_eq!(
            as_date,
            Outcome::Failed {
                category: ErrorCategory::HttpStatus,
                retry_after: Some(Duration::from_secs(60))
            }
        );
        for s in [408, 425, 500, 502, 599] {
            assert!(
                matches!(
                    classify_status(s, Some("1"), now()),
                    Outcome::Failed {
                        retry_after: Some(_),
                        ..
                    }
                ),
                "{s}"
            );
        }
    }

    #[test]
    fn other_client_errors_are_persistent_receiver_errors_without_retry_after() {
        for s in [400, 401, 403, 404, 409, 413, 422, 499] {
            assert_eq!(
                classify_status(s, Some("5"), now()),
                Outcome::Failed {
                    category: ErrorCategory::ClientError,
                    retry_after: None
                },
                "{s}"
            );
        }
    }

    #[test]
    fn statuses_outside_the_classes_stay_http_status() {
        for s in [100, 199, 600, 999] {
            assert_eq!(
                classify_status(s, None, now()),
                Outcome::Failed {
                    category: ErrorCategory::HttpStatus,
                    retry_after: None
                },
                "{s}"
            );
        }
    }

    #[test]
    fn a_malformed_retry_after_is_ignored_and_a_past_date_means_now() {
        assert_eq!(parse_retry_after("soon", now()), None);
        assert_eq!(parse_retry_after("-5", now()), None);
        assert_eq!(
            parse_retry_after("Thu, 15 Oct 2026 13:00:00 GMT", now()),
            Some(Duration::ZERO)
        );
    }
}
