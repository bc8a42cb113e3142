//! How one case's result is judged: what was expected, what happened, and
//! for a failure (or a slow pass) the hint that says what to fix. Pure.

use std::time::Duration;

use super::suite::{Case, DEADLINE, Expect, SLOW, STALE_BY_SECS};
use crate::domain::outcome::ErrorCategory;

/// What one request of the suite observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    /// The receiver answered with a status code.
    Answered { status: u16, latency: Duration },
    /// No usable answer: not sent (the address was refused or did not
    /// resolve), no connection, no answer before the deadline, or a
    /// malformed one.
    Failed {
        category: ErrorCategory,
        detail: String,
    },
}

/// The judgement of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub passed: bool,
    pub got: String,
    /// What to fix when it failed, or the warning when it passed slowly.
    pub hint: Option<String>,
}

/// What `case` expects, as the scorecard says it.
pub fn expected(case: Case) -> String {
    let deadline = DEADLINE.as_secs();
    match case {
        Case::Valid => format!(
            "2xx within {deadline} s (a warning above {} s)",
            SLOW.as_secs()
        ),
        Case::Duplicate => {
            "2xx again: an id already stored is acknowledged, not applied twice".into()
        }
        Case::WrongSignature => "4xx: the signature does not match".into(),
        Case::MissingSignature => "4xx: there is no webhook-signature header".into(),
        Case::StaleTimestamp => format!(
            "4xx: webhook-timestamp is {} minutes old",
            STALE_BY_SECS / 60
        ),
        Case::TamperedBody => "4xx: the body was changed after it was signed".into(),
        Case::UnknownType => "2xx: an unknown event type is acknowledged and ignored".into(),
        Case::LargeBody => "2xx for a body with 256 KiB of data".into(),
    }
}

fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// Judges `case` by what it got.
pub fn judge(case: Case, got: &Got) -> Verdict {
    let (status, latency) = match got {
        Got::Failed { category, detail } => {
            return Verdict {
                passed: false,
                got: format!("{}: {detail}", category.as_str()),
                hint: Some(unanswered(*category)),
            };
        }
        Got::Answered { status, latency } => (*status, *latency),
    };
    let said = format!("{status} in {}", seconds(latency));
    let passed = match case.expect() {
        Expect::Accept => (200..300).contains(&status) && latency <= DEADLINE,
        Expect::Reject => (400..500).contains(&status),
    };
    let hint = if passed {
        (case.expect() == Expect::Accept && latency > SLOW).then(|| {
            format!(
                "slow: answered in {}; hookd waits {} s at most. Store the event and answer at once; do the work after answering",
                seconds(latency),
                DEADLINE.as_secs()
            )
        })
    } else {
        Some(failed(case, status, latency))
    };
    Verdict {
        passed,
        got: said,
        hint,
    }
}

/// The hint for a request that got no usable answer.
fn unanswered(category: ErrorCategory) -> String {
    match category {
        ErrorCategory::Timeout => format!(
            "no answer within {} s: answer as soon as the event is stored durably and do the work after answering",
            DEADLINE.as_secs()
        ),
        ErrorCategory::Blocked => "the URL's address is one hookd may not contact (loopback, private, link-local, metadata): deliveries are refused the same way. A receiver on your own network needs the operator to allow it (egress.allow_cidrs)".into(),
        ErrorCategory::Dns => "the URL's host name does not resolve: check its DNS records".into(),
        ErrorCategory::Tls => "the TLS handshake failed: serve a certificate for this host name from a CA hookd trusts, with its whole chain".into(),
        ErrorCategory::Connect => "hookd could not connect, or the connection was closed before an answer: is the receiver running and reachable at this URL and port?".into(),
        ErrorCategory::Proxy => "hookd's egress proxy could not be reached or would not open a tunnel to this address and port: nothing is wrong with the receiver; tell the operator (egress.proxy)".into(),
        ErrorCategory::HttpStatus => "the answer was not valid HTTP: answer with a plain HTTP status line and headers".into(),
        _ => "the request could not be sent; try again, and tell the operator if it persists".into(),
    }
}

/// The hint for an answer with the wrong status.
fn failed(case: Case, status: u16, latency: Duration) -> String {
    if (300..400).contains(&status) {
        return "hookd does not follow redirects: register the URL that answers".into();
    }
    match case.expect() {
        Expect::Accept if (200..300).contains(&status) => format!(
            "answered after {}: hookd waits {} s at most. Store the event and answer at once; do the work after answering",
            seconds(latency),
            DEADLINE.as_secs()
        ),
        Expect::Accept => accept_failed(case, status),
        Expect::Reject if (200..300).contains(&status) => accepted_forgery(case),
        Expect::Reject => format!(
            "answer 4xx (400 or 401), not {status}: a refused request is the sender's fault, and a 5xx tells a sender to retry it"
        ),
    }
}

fn accept_failed(case: Case, status: u16) -> String {
    match (case, status) {
        (_, 410) => "410 Gone tells hookd to disable the endpoint: answer 2xx".into(),
        (Case::LargeBody, 413) => "raise the body size limit of your server or framework: hookd delivers events with up to 256 KiB of data (allow 1 MiB)".into(),
        (Case::Duplicate, _) => "an id you already stored must be acknowledged again (2xx) without applying it twice: retries and replays carry the same webhook-id. Insert it under a unique constraint and answer 2xx when it is already there".into(),
        (Case::UnknownType, _) => "acknowledge (2xx) and ignore event types you do not handle: anything else is retried and can get the endpoint disabled".into(),
        (_, 401 | 403) => "a correctly signed request was refused: verify with this endpoint's current secret (the base64 key after whsec_), over the raw body bytes, signing `{webhook-id}.{webhook-timestamp}.{body}`; accept any matching `v1,` entry".into(),
        (_, 400..=499) => "a valid event was refused: verify the signature, store the event and answer 2xx; do not refuse types (webhook.check) or fields you do not know".into(),
        _ => "a valid event got an error: store it and answer 2xx, then process it after answering; a failure in your processing should not fail the delivery".into(),
    }
}

fn accepted_forgery(case: Case) -> String {
    match case {
        Case::WrongSignature => "a request whose signature does not match was accepted: verify webhook-signature (HMAC-SHA256, compared in constant time) before anything else, and answer 401 when no `v1,` entry matches",
        Case::MissingSignature => "a request without a signature was accepted: a missing webhook-signature (or webhook-id, webhook-timestamp) header must be refused with a 4xx, never skipped",
        Case::StaleTimestamp => "a timestamp 10 minutes old was accepted: refuse a webhook-timestamp more than 5 minutes from your clock, so a captured request cannot be replayed later",
        _ => "a body changed after signing was accepted: verify over the exact raw bytes you received, before parsing or re-serializing them",
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(status: u16, ms: u64) -> Got {
        Got::Answered {
            status,
            latency: Duration::from_millis(ms),
        }
    }

    #[test]
    fn a_quick_2xx_passes_the_cases_to_accept_and_fails_the_cases_to_refuse() {
        for case in Case::ALL {
            let v = judge(case, &answered(204, 12));
            assert_eq!(v.passed, case.expect() == Expect::Accept, "{}", case.name());
            assert_eq!(v.got, "204 in 12 ms");
            assert_eq!(
                v.hint.is_some(),
                !v.passed,
                "{}: a hint exactly when failed",
                case.name()
            );
        }
    }

    #[test]
    fn a_4xx_passes_the_cases_to_refuse_and_a_5xx_passes_none() {
        for case in Case::ALL {
            let refused = judge(case, &answered(401, 5));
            assert_eq!(
                refused.passed,
                case.expect() == Expect::Reject,
                "{}",
                case.name()
            );
            let error = judge(case, &answered(500, 5));
            assert!(!error.passed, "{}: a 5xx never passes", case.name());
            assert!(error.hint.is_some());
        }
    }

    #[test]
    fn a_slow_acknowledgement_passes_with_a_warning_and_one_past_the_deadline_fails() {
        let slow = judge(Case::Valid, &answered(200, 3_000));
        assert!(slow.passed);
        assert!(
            slow.hint.as_deref().is_some_and(|h| h.starts_with("slow")),
            "{slow:?}"
        );
        assert_eq!(slow.got, "200 in 3.0 s");
        let late = judge(Case::Valid, &answered(200, 5_200));
        assert!(!late.passed, "over 5 s is too late");
        let timeout = judge(
            Case::Valid,
            &Got::Failed {
                category: ErrorCategory::Timeout,
                detail: "no response before the request timeout".into(),
            },
        );
        assert!(!timeout.passed);
        assert!(
            timeout
                .hint
                .as_deref()
                .is_some_and(|h| h.contains("within 5 s"))
        );
        let quick_refusal = judge(Case::WrongSignature, &answered(401, 2_500));
        assert_eq!(quick_refusal.hint, None, "only acknowledgements are timed");
    }

    #[test]
    fn each_accepted_forgery_gets_a_hint_about_its_own_check() {
        let hint = |case| judge(case, &answered(200, 1)).hint.expect("a hint");
        assert!(hint(Case::WrongSignature).contains("constant time"));
        assert!(hint(Case::MissingSignature).contains("without a signature"));
        assert!(hint(Case::StaleTimestamp).contains("5 minutes"));
        assert!(hint(Case::TamperedBody).contains("raw bytes"));
    }

    #[test]
    fn refusals_of_events_to_accept_say_what_to_change() {
        let hint = |case, status| judge(case, &answered(status, 1)).hint.expect("a hint");
        assert!(hint(Case::Valid, 401).contains("current secret"));
        assert!(hint(Case::Duplicate, 409).contains("unique constraint"));
        assert!(hint(Case::UnknownType, 400).contains("ignore"));
        assert!(hint(Case::LargeBody, 413).contains("body size limit"));
        assert!(hint(Case::Valid, 302).contains("redirects"));
        assert!(hint(Case::Valid, 410).contains("disable"));
    }

    #[test]
    fn a_refused_address_says_which_setting_allows_it() {
        let v = judge(
            Case::Valid,
            &Got::Failed {
                category: ErrorCategory::Blocked,
                detail: "127.0.0.1 is loopback".into(),
            },
        );
        assert_eq!(v.got, "blocked: 127.0.0.1 is loopback");
        assert!(
            v.hint
                .as_deref()
                .is_some_and(|h| h.contains("egress.allow_cidrs"))
        );
    }
}
