//! Endpoint health over time: given when an endpoint started failing, whether
//! its owner was warned, and now, which transition is due. Pure; the store
//! makes the transition with a guarded update, so deciding twice is harmless.

/// How long an endpoint may fail with no success, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// Its owner is warned (`endpoint.failing`) after this long.
    pub warn_after_ms: i64,
    /// It is disabled (`endpoint.disabled`) after this long.
    pub disable_after_ms: i64,
}

impl Thresholds {
    /// From configured durations (a duration beyond `i64` milliseconds is never reached).
    pub fn new(warn_after: std::time::Duration, disable_after: std::time::Duration) -> Thresholds {
        let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        Thresholds {
            warn_after_ms: ms(warn_after),
            disable_after_ms: ms(disable_after),
        }
    }

    /// The failing-since before which an endpoint may have something due now:
    /// endpoints that started failing later need not be looked at.
    pub fn looked_at_before(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.warn_after_ms.min(self.disable_after_ms))
    }
}

/// An active endpoint's health as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// When its current run of failures began; `None` while it is not failing.
    pub failing_since_ms: Option<i64>,
    /// Its owner was told it is failing.
    pub warned: bool,
}

/// A transition that is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Failing for `warn_after` and not yet warned: announce `endpoint.failing`.
    Warn,
    /// Failing for `disable_after`: disable it and announce `endpoint.disabled`.
    Disable,
    /// Warned, but no longer failing: announce `endpoint.recovered`.
    Recover,
}

/// What is due for an active endpoint at `now_ms`, if anything. Disabling
/// wins over warning: an endpoint nobody looked at for days is disabled
/// without first being warned.
pub fn due(s: Standing, now_ms: i64, t: Thresholds) -> Option<Due> {
    let Some(since) = s.failing_since_ms else {
        return s.warned.then_some(Due::Recover);
    };
    let failing_for = now_ms.saturating_sub(since);
    if failing_for >= t.disable_after_ms {
        Some(Due::Disable)
    } else if failing_for >= t.warn_after_ms && !s.warned {
        Some(Due::Warn)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;
    const DAY: i64 = 24 * HOUR;
    const T: Thresholds = Thresholds {
        warn_after_ms: HOUR,
        disable_after_ms: 5 * DAY,
    };

    fn failing(since: i64, warned: bool) -> Standing {
        Standing {
            failing_since_ms: Some(since),
            warned,
        }
    }

    #[test]
    fn a_healthy_endpoint_has_nothing_due() {
        let healthy = Standing {
            failing_since_ms: None,
            warned: false,
        };
        assert_eq!(due(healthy, 10 * DAY, T), None);
    }

    #[test]
    fn an_endpoint_failing_for_less_than_warn_after_is_left_alone() {
        assert_eq!(due(failing(0, false), HOUR - 1, T), None);
    }

    #[test]
    fn an_endpoint_failing_for_warn_after_is_warned_once() {
        assert_eq!(due(failing(0, false), HOUR, T), Some(Due::Warn));
        assert_eq!(
            due(failing(0, true), HOUR, T),
            None,
            "a warned endpoint is not warned again"
        );
        assert_eq!(due(failing(0, true), 5 * DAY - 1, T), None);
    }

    #[test]
    fn an_endpoint_failing_for_disable_after_is_disabled_warned_or_not() {
        assert_eq!(due(failing(0, true), 5 * DAY, T), Some(Due::Disable));
        assert_eq!(
            due(failing(0, false), 6 * DAY, T),
            Some(Due::Disable),
            "disabling wins over a warning never given"
        );
    }

    #[test]
    fn a_warned_endpoint_that_stopped_failing_has_recovered() {
        let recovered = Standing {
            failing_since_ms: None,
            warned: true,
        };
        assert_eq!(due(recovered, 0, T), Some(Due::Recover));
    }

    #[test]
    fn a_failing_since_in_the_future_is_not_failing_yet() {
        // Another instance's clock may run ahead of this one.
        assert_eq!(due(failing(HOUR, false), 0, T), None);
    }

    #[test]
    fn only_endpoints_failing_since_the_shorter_threshold_are_looked_at() {
        assert_eq!(T.looked_at_before(2 * HOUR), HOUR);
        let odd = Thresholds {
            warn_after_ms: DAY,
            disable_after_ms: HOUR,
        };
        assert_eq!(odd.looked_at_before(2 * HOUR), HOUR);
    }

    #[test]
    fn durations_become_thresholds_without_overflow() {
        let t = Thresholds::new(
            std::time::Duration::from_secs(3600),
            std::time::Duration::MAX,
        );
        assert_eq!(t.warn_after_ms, HOUR);
        assert_eq!(t.disable_after_ms, i64::MAX);
        assert_eq!(due(failing(0, true), i64::MAX - 1, t), None);
    }
}
