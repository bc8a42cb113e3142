//! When to try again: the retry schedule with jitter, `Retry-After` within a
//! cap, and the delivery window (the maximum age, counted from the event's
//! creation). Pure; the clock and randomness are passed in.

use std::time::Duration;

use rand::Rng;

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Delay before each attempt; `schedule[0]` is the first, usually zero.
    pub schedule: Vec<Duration>,
    /// Each delay is multiplied by a factor in `[1 - jitter, 1 + jitter]`.
    pub jitter: f64,
    /// The delivery window: no scheduled attempt starts later than this
    /// after the event was created.
    pub max_age: Duration,
    pub retry_after_cap: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Try again at this Unix millisecond.
    At(i64),
    /// No attempts left, or the delivery is too old.
    Dead,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl RetryPolicy {
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.schedule.len()).unwrap_or(u32::MAX)
    }

    /// After `attempts_made` attempts (the last one failed), when is the
    /// next? `created_at_ms`: where the window starts (the event's creation).
    pub fn next(
        &self,
        attempts_made: u32,
        created_at_ms: i64,
        now_ms: i64,
        retry_after: Option<Duration>,
        rng: &mut impl Rng,
    ) -> Next {
        let Some(base) = self.schedule.get(attempts_made as usize) else {
            return Next::Dead;
        };
        let factor = if self.jitter > 0.0 {
            rng.random_range(1.0 - self.jitter..=1.0 + self.jitter)
        } else {
            1.0
        };
        let mut delay = base.mul_f64(factor);
        if let Some(asked) = retry_after {
            delay = delay.max(asked.min(self.retry_after_cap));
        }
        let at = now_ms.saturating_add(ms(delay));
        if at > created_at_ms.saturating_add(ms(self.max_age)) {
            Next::Dead
        } else {
            Next::At(at)
        }
    }

    /// Whether a delivery whose window started at `created_at_ms` is past it.
    pub fn expired(&self, created_at_ms: i64, now_ms: i64) -> bool {
        now_ms > created_at_ms.saturating_add(ms(self.max_age))
    }
}

/// When the first retry is due, counted from the event: the first
/// attempt's delay and the first retry's (the first attempt's alone when
/// the schedule has no retries). A window shorter than this retries nothing.
pub fn first_retry(schedule: &[Duration]) -> Duration {
    schedule.iter().take(2).sum()
}

/// The latest the last attempt of `schedule` can be due, counted from the
/// event, when every delay lands at the top of its jitter band and each
/// attempt goes out when due: a window at least this long keeps every
/// attempt inside it.
pub fn latest_last_attempt(schedule: &[Duration], jitter: f64) -> Duration {
    schedule.iter().sum::<Duration>().mul_f64(1.0 + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{SeedableRng, rngs::StdRng};

    fn standard() -> RetryPolicy {
        let s = |secs: u64| Duration::from_secs(secs);
        RetryPolicy {
            schedule: vec![
                s(0),
                s(5),
                s(300),
                s(1800),
                s(7200),
                s(18000),
                s(36000),
                s(43200),
                s(50400),
                s(57600),
            ],
            jitter: 0.2,
            max_age: s(72 * 3600),
            retry_after_cap: s(3600),
        }
    }

    #[test]
    fn the_tenth_failure_is_dead() {
        let p = standard();
        let mut rng = StdRng::seed_from_u64(1);
        assert!(matches!(p.next(9, 0, 0, None, &mut rng), Next::At(_)));
        assert_eq!(p.next(10, 0, 0, None, &mut rng), Next::Dead);
    }

    #[test]
    fn a_retry_beyond_the_maximum_age_is_dead() {
        let p = standard();
        let mut rng = StdRng::seed_from_u64(1);
        let nearly_72_hours = ms(Duration::from_secs(72 * 3600 - 60));
        assert_eq!(p.next(5, 0, nearly_72_hours, None, &mut rng), Next::Dead);
    }

    #[test]
    fn the_first_retry_counts_the_first_attempts_delay_and_the_next() {
        let s = |secs: u64| Duration::from_secs(secs);
        assert_eq!(first_retry(&standard().schedule), s(5));
        assert_eq!(first_retry(&[s(10), s(60), s(600)]), s(70));
        assert_eq!(first_retry(&[s(0)]), s(0));
    }

    #[test]
    fn the_standard_schedule_fits_its_window_at_the_top_of_the_jitter() {
        let p = standard();
        let latest = latest_last_attempt(&p.schedule, p.jitter);
        assert!(latest <= p.max_age, "{latest:?} > {:?}", p.max_age);
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let mut p = standard();
        p.jitter = 0.0;
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(
            p.next(1, 0, 0, Some(Duration::from_secs(60)), &mut rng),
            Next::At(60_000)
        );
        assert_eq!(
            p.next(1, 0, 0, Some(Duration::from_secs(86400)), &mut rng),
            Next::At(3_600_000)
        );
        assert_eq!(
            p.next(2, 0, 0, Some(Duration::from_secs(1)), &mut rng),
            Next::At(300_000),
            "never sooner than the schedule"
        );
    }

    proptest! {
        #[test]
        fn every_delay_stays_within_its_jitter_band(attempt in 0u32..10, seed: u64, now in 0i64..1_000_000) {
            let p = standard();
            let mut rng = StdRng::seed_from_u64(seed);
            let base = ms(p.schedule[attempt as usize]) as f64;
            match p.next(attempt, now, now, None, &mut rng) {
                Next::At(at) => {
                    let delay = (at - now) as f64;
                    prop_assert!(delay >= base * 0.8 - 1.0 && delay <= base * 1.2 + 1.0, "delay {delay} base {base}");
                }
                Next::Dead => prop_assert!(false, "attempt {attempt} of 10 must not be dead"),
            }
        }

        #[test]
        fn every_attempt_made_when_due_lands_inside_the_window(seed: u64, created in 0i64..1_000_000_000) {
            let p = standard();
            let mut rng = StdRng::seed_from_u64(seed);
            let mut now = created;
            for attempt in 1..p.max_attempts() {
                match p.next(attempt, created, now, None, &mut rng) {
                    Next::At(at) => now = at,
                    Next::Dead => prop_assert!(false, "attempt {} fell outside the window", attempt + 1),
                }
            }
            prop_assert!(now - created <= ms(latest_last_attempt(&p.schedule, p.jitter)));
        }

        #[test]
        fn the_next_attempt_is_never_in_the_past(attempt in 0u32..12, seed: u64, age in 0i64..400_000_000, ra in proptest::option::of(0u64..100_000)) {
            let p = standard();
            let mut rng = StdRng::seed_from_u64(seed);
            let now = 1_000_000_000;
            if let Next::At(at) = p.next(attempt, now - age, now, ra.map(Duration::from_secs), &mut rng) {
                prop_assert!(at >= now);
                prop_assert!(at <= now - age + ms(p.max_age));
            }
        }
    }
}
