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

#[cfg(test)]
mod tests {
    use super::*;

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
