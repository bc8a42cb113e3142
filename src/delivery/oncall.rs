//! The lines an on-call engineer reads about deliveries, each once per
//! endpoint and kind a minute at most (`log_limit`), the next one counting
//! what was held back (`suppressed=N`):
//!
//! - `info`: an endpoint's first failed attempt after a success, and its
//!   first success after failures;
//! - `warn`: a circuit opening, an attempt `blocked` by the egress policy
//!   (with the settings that would allow it), a delivery going dead, an
//!   endpoint marked failing or disabled.
//!
//! Each names the endpoint, its partner and, for an attempt, the delivery,
//! with the category, the status and the reason. Never a secret, a header
//! or a body: the callback URL shows as its host and port only (its path or
//! query may carry a token).

use std::{net::IpAddr, sync::Mutex, time::Duration};

use super::{Shared, log_limit::LogLimit};
use crate::{
    domain::{
        circuit::CircuitState,
        event::{NewEvent, format_time},
        outcome::{ErrorCategory, Outcome},
    },
    egress::remedy,
    store::deliveries::NextState,
};

/// How often one endpoint may say one kind of line.
pub const PERIOD: Duration = Duration::from_secs(60);

/// A reason is cut to this many characters in a line.
const REASON_CHARS: usize = 300;

/// The kinds of line, each limited apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Line {
    FirstFailure,
    Recovered,
    CircuitOpened,
    Blocked,
    Dead,
    Failing,
    Disabled,
}

/// The process's limiter for these lines.
#[derive(Debug)]
pub struct OnCall {
    limit: Mutex<LogLimit<(String, Line)>>,
}

impl Default for OnCall {
    fn default() -> Self {
        OnCall {
            limit: Mutex::new(LogLimit::new(PERIOD)),
        }
    }
}

impl OnCall {
    /// `Some(suppressed)` if the line may be said now.
    fn admit(&self, endpoint: &str, line: Line, now_ms: i64) -> Option<u64> {
        let mut limit = self.limit.lock().unwrap_or_else(|p| p.into_inner());
        limit.admit((endpoint.to_string(), line), now_ms)
    }
}

/// Says a line at `$level`, with `suppressed = n` when lines were held back.
macro_rules! say {
    ($level:ident, $suppressed:expr, $($rest:tt)+) => {
        match $suppressed {
            0 => tracing::$level!($($rest)+),
            n => tracing::$level!(suppressed = n, $($rest)+),
        }
    };
}

/// One finished attempt, as the endpoint actor saw it.
pub struct Finished<'a> {
    pub endpoint_id: &'a str,
    pub partner_id: &'a str,
    /// The endpoint's callback URL (only its host and port are said).
    pub url: &'a str,
    pub delivery_id: &'a str,
    pub event_type: &'a str,
    pub attempt_no: u32,
    pub outcome: &'a Outcome,
    pub status: Option<u16>,
    pub reason: Option<&'a str>,
    pub next: &'a NextState,
    /// Consecutive failures before this attempt.
    pub failures_before: u32,
    pub circuit_before: CircuitState,
    pub circuit_after: CircuitState,
    pub failures_after: u32,
}

/// Which lines a finished attempt calls for, in the order they are said.
pub fn lines(f: &Finished) -> Vec<Line> {
    let mut lines = Vec::new();
    let delivered = *f.outcome == Outcome::Delivered;
    if delivered && f.failures_before > 0 {
        lines.push(Line::Recovered);
    }
    if !delivered && f.failures_before == 0 {
        lines.push(Line::FirstFailure);
    }
    let open = |s: CircuitState| matches!(s, CircuitState::Open { .. });
    if open(f.circuit_after) && !open(f.circuit_before) {
        lines.push(Line::CircuitOpened);
    }
    if *f.next == NextState::Dead {
        lines.push(Line::Dead);
    }
    lines
}

/// Says what a finished attempt calls for.
pub fn attempt_finished(shared: &Shared, f: &Finished) {
    let now = shared.clock.now_ms();
    let category = match f.outcome {
        Outcome::Delivered => None,
        Outcome::Gone => Some(ErrorCategory::HttpStatus),
        Outcome::Failed { category, .. } => Some(*category),
    }
    .map_or("", ErrorCategory::as_str);
    let status = f.status;
    let reason = cut(f.reason.unwrap_or_default());
    let host = host_of(f.url);
    let (endpoint, partner, delivery) = (f.endpoint_id, f.partner_id, f.delivery_id);
    for line in lines(f) {
        let Some(n) = shared.oncall.admit(f.endpoint_id, line, now) else {
            continue;
        };
        match line {
            Line::FirstFailure => say!(info, n, %endpoint, %partner, %host, %delivery,
                event_type = %f.event_type, attempt = f.attempt_no, %category, status, %reason,
                "endpoint failing: first failed attempt in a row; the next failures are not logged one by one"),
            Line::Recovered => say!(info, n, %endpoint, %partner, %host, %delivery,
                failures = f.failures_before, "endpoint delivering again after failed attempts"),
            Line::CircuitOpened => {
                let until_ms = match f.circuit_after {
                    CircuitState::Open { until_ms } => until_ms,
                    _ => now,
                };
                say!(warn, n, %endpoint, %partner, %host, failures = f.failures_after,
                    probe_at = %format_time(until_ms), probe_in_s = (until_ms - now).max(0) / 1000,
                    %category, status, %reason,
                    "circuit opened: nothing more is sent to the endpoint until a probe at probe_at")
            }
            Line::Dead => say!(warn, n, %endpoint, %partner, %host, %delivery,
                event_type = %f.event_type, attempts = f.attempt_no, %category, status, %reason,
                "delivery dead: its retries ran out; it is sent again only if replayed"),
            _ => {}
        }
    }
}

/// An attempt refused by the egress policy (the URL, or an address its name
/// resolved to, in `resolved`); the line gives the settings that would allow
/// it, in the configuration `shared` runs with.
pub fn blocked(shared: &Shared, at: &Attempted, refusal: &str, resolved: &[IpAddr]) {
    let now = shared.clock.now_ms();
    let Some(n) = shared.oncall.admit(at.endpoint_id, Line::Blocked, now) else {
        return;
    };
    let remedy = remedy::for_url(&shared.config.egress, at.url, resolved).map_or_else(
        || "no egress setting allows it".to_string(),
        |r| r.to_string(),
    );
    let (endpoint, partner, delivery) = (at.endpoint_id, at.partner_id, at.delivery_id);
    say!(warn, n, %endpoint, %partner, host = %host_of(at.url), %delivery,
        reason = %cut(refusal), %remedy,
        "attempt blocked by the egress policy; every attempt to this endpoint fails as `blocked` until it allows the URL");
}

/// The attempt an egress refusal stopped.
pub struct Attempted<'a> {
    pub endpoint_id: &'a str,
    pub partner_id: &'a str,
    pub url: &'a str,
    pub delivery_id: &'a str,
}

/// Deliveries of `endpoint_id` that waited past `delivery.max_age` (an
/// endpoint disabled or paused that long) and went dead without an attempt.
pub fn expired(shared: &Shared, endpoint_id: &str, delivery_ids: &[String]) {
    let now = shared.clock.now_ms();
    let Some(n) = shared.oncall.admit(endpoint_id, Line::Dead, now) else {
        return;
    };
    let first = delivery_ids.first().map(String::as_str).unwrap_or_default();
    say!(
        warn,
        n,
        endpoint = %endpoint_id,
        deliveries = delivery_ids.len(),
        delivery = %first,
        "deliveries dead: they waited longer than delivery.max_age for an attempt"
    );
}

/// Endpoint transitions a commit made (the operational events it queued):
/// an endpoint marked failing, or disabled.
pub fn health_changed(shared: &Shared, events: &[NewEvent]) {
    let now = shared.clock.now_ms();
    for e in events {
        let line = match e.event_type.as_str() {
            "endpoint.failing" => Line::Failing,
            "endpoint.disabled" => Line::Disabled,
            _ => continue,
        };
        let Some(endpoint) = e.subject.as_ref().map(|s| s.id.as_str()) else {
            continue;
        };
        let Some(n) = shared.oncall.admit(endpoint, line, now) else {
            continue;
        };
        let data: serde_json::Value = serde_json::from_str(&e.payload).unwrap_or_default();
        let text = |key: &str| data[key].as_str().unwrap_or_default().to_string();
        let partner = e.partner_id.as_str();
        let host = host_of(&text("url"));
        match line {
            Line::Failing => say!(warn, n, %endpoint, %partner, %host,
                failing_since = %text("failing_since"),
                "endpoint marked failing (no success for endpoints.warn_after); its partner is told with endpoint.failing"),
            _ => say!(warn, n, %endpoint, %partner, %host, reason = %text("reason"),
                "endpoint disabled: nothing is sent until it is enabled; its partner is told with endpoint.disabled"),
        }
    }
}

/// `host:port` of a callback URL: what an on-call engineer needs to find
/// the receiver, without the path or query that may carry a token.
pub fn host_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            _ => "(no host)".into(),
        },
        Err(_) => "(not a URL)".into(),
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(REASON_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished<'a>(outcome: &'a Outcome, next: &'a NextState) -> Finished<'a> {
        Finished {
            endpoint_id: "ep_1",
            partner_id: "ptn_1",
            url: "https://hooks.example.com/in?token=secret",
            delivery_id: "dlv_1",
            event_type: "a.b",
            attempt_no: 1,
            outcome,
            status: Some(500),
            reason: Some("the receiver answered 500"),
            next,
            failures_before: 0,
            circuit_before: CircuitState::Closed,
            circuit_after: CircuitState::Closed,
            failures_after: 1,
        }
    }

    const FAILED: Outcome = Outcome::Failed {
        category: ErrorCategory::HttpStatus,
        retry_after: None,
    };

    #[test]
    fn the_first_failure_after_a_success_is_said_and_the_next_ones_are_not() {
        let retry = NextState::RetryAt(5_000);
        assert_eq!(lines(&finished(&FAILED, &retry)), vec![Line::FirstFailure]);
        let second = Finished {
            failures_before: 1,
            ..finished(&FAILED, &retry)
        };
        assert_eq!(lines(&second), vec![]);
    }

    #[test]
    fn a_success_after_failures_is_said_and_an_ordinary_success_is_not() {
        let ok = Outcome::Delivered;
        let done = NextState::Delivered;
        assert_eq!(lines(&finished(&ok, &done)), vec![]);
        let back = Finished {
            failures_before: 7,
            ..finished(&ok, &done)
        };
        assert_eq!(lines(&back), vec![Line::Recovered]);
    }

    #[test]
    fn a_circuit_that_opens_or_reopens_is_said_and_one_already_open_is_not() {
        let retry = NextState::RetryAt(5_000);
        let open = CircuitState::Open { until_ms: 5_000 };
        for before in [
            CircuitState::Closed,
            CircuitState::HalfOpen { probing: true },
        ] {
            let f = Finished {
                failures_before: 4,
                circuit_before: before,
                circuit_after: open,
                ..finished(&FAILED, &retry)
            };
            assert_eq!(lines(&f), vec![Line::CircuitOpened], "from {before:?}");
        }
        let still = Finished {
            failures_before: 6,
            circuit_before: open,
            circuit_after: CircuitState::Open { until_ms: 9_000 },
            ..finished(&FAILED, &retry)
        };
        assert_eq!(lines(&still), vec![]);
    }

    #[test]
    fn a_last_attempt_that_fails_says_the_delivery_is_dead_after_the_rest() {
        let dead = NextState::Dead;
        let f = Finished {
            circuit_after: CircuitState::Open { until_ms: 5_000 },
            ..finished(&FAILED, &dead)
        };
        assert_eq!(
            lines(&f),
            vec![Line::FirstFailure, Line::CircuitOpened, Line::Dead]
        );
    }

    #[test]
    fn a_url_shows_as_its_host_and_port_only() {
        assert_eq!(
            host_of("https://user:pw@hooks.example.com/in?token=secret"),
            "hooks.example.com:443"
        );
        assert_eq!(host_of("http://10.0.0.1:9000/x"), "10.0.0.1:9000");
        assert_eq!(host_of("http://[::1]/x"), "[::1]:80");
        assert_eq!(host_of("nonsense"), "(not a URL)");
    }

    #[test]
    fn a_long_reason_is_cut() {
        let long = "x".repeat(1000);
        assert_eq!(cut(&long).chars().count(), REASON_CHARS + 1);
        assert_eq!(cut("short"), "short");
    }
}
