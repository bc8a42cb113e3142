//! An endpoint's circuit breaker: closed until `threshold` consecutive
//! failures, then open for a cool-down that doubles each time a half-open
//! probe fails. While open nothing is sent and no attempt is spent.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    Closed,
    Open {
        until_ms: i64,
    },
    /// One probe may go; others wait for its answer.
    HalfOpen {
        probing: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permit {
    /// Send.
    Send,
    /// Send this one request as the half-open probe.
    Probe,
    /// Send nothing until this Unix millisecond (or the probe's answer).
    Wait { until_ms: Option<i64> },
}

#[derive(Debug, Clone)]
pub struct Circuit {
    state: CircuitState,
    consecutive_failures: u32,
    threshold: u32,
    cooldown: Duration,
    initial: Duration,
    max: Duration,
}

impl Circuit {
    pub fn new(threshold: u32, initial: Duration, max: Duration) -> Circuit {
        Circuit {
            state: CircuitState::Closed,
            consecutive_failures: 0,
            threshold,
            cooldown: initial,
            initial,
            max,
        }
    }

    pub fn state(&self) -> CircuitState {
        self.state
    }

    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive_failures
    }

    /// May a request go now?
    pub fn permit(&mut self, now_ms: i64) -> Permit {
        match self.state {
            CircuitState::Closed => Permit::Send,
            CircuitState::Open { until_ms } if now_ms < until_ms => Permit::Wait {
                until_ms: Some(until_ms),
            },
            CircuitState::Open { .. } | CircuitState::HalfOpen { probing: false } => {
                self.state = CircuitState::HalfOpen { probing: true };
                Permit::Probe
            }
            CircuitState::HalfOpen { probing: true } => Permit::Wait { until_ms: None },
        }
    }

    /// May a manual replay go now? A partner who replays has usually just
    /// fixed their receiver: the replay goes at once, whatever the cool-down,
    /// as the circuit's probe (its answer closes the circuit or reopens it
    /// with a doubled cool-down). Only a probe already on the wire makes it
    /// wait, for that probe's answer.
    pub fn permit_manual(&mut self, now_ms: i64) -> Permit {
        if let CircuitState::Open { .. } = self.state {
            self.state = CircuitState::HalfOpen { probing: false };
        }
        self.permit(now_ms)
    }

    pub fn on_success(&mut self) {
        self.state = CircuitState::Closed;
        self.consecutive_failures = 0;
        self.cooldown = self.initial;
    }

    pub fn on_failure(&mut self, now_ms: i64) {
        self.consecutive_failures = self.consecutive_failures.saturating_add(1);
        let open_for = match self.state {
            CircuitState::HalfOpen { .. } => {
                self.cooldown = (self.cooldown * 2).min(self.max);
                Some(self.cooldown)
            }
            CircuitState::Closed if self.consecutive_failures >= self.threshold => {
                Some(self.cooldown)
            }
            _ => None,
        };
        if let Some(d) = open_for {
            let until_ms = now_ms.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            self.state = CircuitState::Open { until_ms };
        }
    }
}

/// What of a circuit is kept on the endpoint row, so that it outlives the
/// actor: an actor that restarts, or an endpoint that moves to another
/// instance, resumes where it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Saved {
    pub consecutive_failures: u32,
    /// Open until then; a half-open circuit is saved as open until the
    /// moment it was saved, so its successor sends one probe first.
    pub open_until_ms: Option<i64>,
    /// The current cool-down, when it has grown past the initial one.
    pub cooldown_ms: Option<i64>,
}

impl Circuit {
    pub fn save(&self, now_ms: i64) -> Saved {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        Saved {
            consecutive_failures: self.consecutive_failures,
            open_until_ms: match self.state {
                CircuitState::Closed => None,
                CircuitState::Open { until_ms } => Some(until_ms),
                CircuitState::HalfOpen { .. } => Some(now_ms),
            },
            cooldown_ms: (self.cooldown != self.initial).then(|| ms(self.cooldown)),
        }
    }

    /// Takes up a saved state (the thresholds are this configuration's).
    pub fn resume(&mut self, saved: Saved) {
        self.consecutive_failures = saved.consecutive_failures;
        self.state = match saved.open_until_ms {
            Some(until_ms) => CircuitState::Open { until_ms },
            None => CircuitState::Closed,
        };
        self.cooldown = saved
            .cooldown_ms
            .and_then(|ms| u64::try_from(ms).ok())
            .map_or(self.initial, Duration::from_millis)
            .clamp(self.initial, self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_circuit_stays_open_until_its_saved_time_and_keeps_its_cooldown() {
        let mut first = circuit();
        for _ in 0..3 {
            first.on_failure(0);
        }
        assert_eq!(first.permit(5_000), Permit::Probe);
        first.on_failure(5_000);
        let saved = first.save(5_000);
        assert_eq!(saved.open_until_ms, Some(15_000));
        let mut second = circuit();
        second.resume(saved);
        assert_eq!(
            second.permit(14_999),
            Permit::Wait {
                until_ms: Some(15_000)
            }
        );
        assert_eq!(second.permit(15_000), Permit::Probe);
        second.on_failure(15_000);
        assert_eq!(
            second.state(),
            CircuitState::Open { until_ms: 35_000 },
            "the doubled cool-down (10 s) doubled again, capped at 20 s"
        );
    }

    #[test]
    fn a_half_open_circuit_resumes_with_a_probe_and_a_closed_one_with_its_failures() {
        let mut c = circuit();
        for _ in 0..3 {
            c.on_failure(0);
        }
        assert_eq!(c.permit(5_000), Permit::Probe);
        let mut resumed = circuit();
        resumed.resume(c.save(6_000));
        assert_eq!(resumed.permit(6_000), Permit::Probe);

        let mut closed = circuit();
        closed.on_failure(0);
        closed.on_failure(0);
        let mut resumed = circuit();
        resumed.resume(closed.save(0));
        resumed.on_failure(0);
        assert!(
            matches!(resumed.state(), CircuitState::Open { .. }),
            "the third failure opens it"
        );
    }

    fn circuit() -> Circuit {
        Circuit::new(3, Duration::from_secs(5), Duration::from_secs(20))
    }

    #[test]
    fn the_circuit_opens_after_the_threshold_of_consecutive_failures() {
        let mut c = circuit();
        c.on_failure(0);
        c.on_failure(0);
        assert_eq!(
            c.permit(0),
            Permit::Send,
            "two failures are under the threshold"
        );
        c.on_failure(0);
        assert_eq!(
            c.permit(1000),
            Permit::Wait {
                until_ms: Some(5000)
            }
        );
    }

    #[test]
    fn a_success_in_between_resets_the_count() {
        let mut c = circuit();
        c.on_failure(0);
        c.on_failure(0);
        c.on_success();
        c.on_failure(0);
        assert_eq!(c.permit(0), Permit::Send);
    }

    #[test]
    fn after_the_cool_down_exactly_one_probe_goes() {
        let mut c = circuit();
        (0..3).for_each(|_| c.on_failure(0));
        assert_eq!(c.permit(5000), Permit::Probe);
        assert_eq!(
            c.permit(5000),
            Permit::Wait { until_ms: None },
            "a second request waits for the probe"
        );
        c.on_success();
        assert_eq!(c.permit(5001), Permit::Send);
    }

    #[test]
    fn a_manual_replay_goes_at_once_through_an_open_circuit_as_its_probe() {
        let mut c = circuit();
        (0..3).for_each(|_| c.on_failure(0));
        assert_eq!(
            c.permit(1000),
            Permit::Wait {
                until_ms: Some(5000)
            }
        );
        assert_eq!(
            c.permit_manual(1000),
            Permit::Probe,
            "4 s before the cool-down ends"
        );
        assert_eq!(
            c.permit(1000),
            Permit::Wait { until_ms: None },
            "scheduled work waits for the replay's answer"
        );
        assert_eq!(
            c.permit_manual(1000),
            Permit::Wait { until_ms: None },
            "so does a second replay"
        );
        c.on_failure(1200);
        assert_eq!(
            c.state(),
            CircuitState::Open { until_ms: 11_200 },
            "a failed replay counts as a failed probe: the cool-down doubles"
        );
        assert_eq!(c.permit_manual(1300), Permit::Probe);
        c.on_success();
        assert_eq!(c.permit(1400), Permit::Send, "a good replay closes it");
    }

    #[test]
    fn a_manual_replay_through_a_closed_circuit_is_an_ordinary_send() {
        let mut c = circuit();
        assert_eq!(c.permit_manual(0), Permit::Send);
        assert_eq!(c.state(), CircuitState::Closed);
    }

    #[test]
    fn a_failed_probe_doubles_the_cool_down_up_to_the_maximum() {
        let mut c = circuit();
        (0..3).for_each(|_| c.on_failure(0));
        let mut now = 5000;
        for expected in [10_000, 20_000, 20_000] {
            assert_eq!(c.permit(now), Permit::Probe);
            c.on_failure(now);
            assert_eq!(
                c.state(),
                CircuitState::Open {
                    until_ms: now + expected
                }
            );
            now += expected;
        }
    }
}
