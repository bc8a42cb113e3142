//! Per-key rate limits: a token bucket per API key, in memory (each instance
//! limits what it serves), on the injected clock.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use crate::domain::{clock::SharedClock, token_bucket::TokenBucket};

#[derive(Debug)]
pub struct RateLimiter {
    per_second: u32,
    burst: u32,
    clock: SharedClock,
    buckets: Mutex<HashMap<String, TokenBucket>>,
}

impl RateLimiter {
    /// A limiter of `per_second` with bursts of `burst`, reading the time
    /// from `clock` (so tests move it as they move every other timer).
    pub fn new(per_second: u32, burst: u32, clock: SharedClock) -> RateLimiter {
        RateLimiter {
            per_second,
            burst,
            clock,
            buckets: Mutex::default(),
        }
    }

    /// How long until `key` has a token again, if it has none now; takes
    /// nothing (a check that costs no more than a map look-up).
    pub fn empty_for(&self, key: &str) -> Option<Duration> {
        let now_ms = self.clock.now_ms();
        let buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let wait = buckets.get(key)?.clone().take(now_ms).err()?;
        Some(Duration::from_millis(wait.max(0) as u64))
    }

    /// Takes a token for `key`, or says how long until one is there.
    pub fn take(&self, key: &str) -> Result<(), Duration> {
        let now_ms = self.clock.now_ms();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > 100_000 {
            // Forget keys whose buckets are full again rather than grow without bound.
            buckets.retain(|_, b| !b.is_full_at(now_ms));
        }
        buckets
            .entry(key.to_string())
            .or_insert_with(|| TokenBucket::new(self.per_second, self.burst, now_ms))
            .take(now_ms)
            .map_err(|wait_ms| Duration::from_millis(wait_ms.max(0) as u64))
    }
}

/// A wait as `Retry-After` says it: whole seconds, rounded up (a client
/// that waits that long finds a token), and at least one.
pub fn retry_after(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis().div_ceil(1000))
        .unwrap_or(u64::MAX)
        .max(1)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::domain::clock::ManualClock;

    fn limiter(per_second: u32, burst: u32) -> (RateLimiter, ManualClock) {
        let clock = ManualClock::starting_at(chrono::DateTime::UNIX_EPOCH);
        let limiter = RateLimiter::new(per_second, burst, Arc::new(clock.clone()));
        (limiter, clock)
    }

    #[test]
    fn keys_are_limited_apart() {
        let (limiter, _) = limiter(10, 2);
        assert!(limiter.take("k").is_ok() && limiter.take("k").is_ok());
        let wait = limiter.take("k").expect_err("over the burst");
        assert_eq!(wait, Duration::from_millis(100), "one token in 1/10 s");
        assert!(limiter.take("other").is_ok());
    }

    #[test]
    fn looking_at_an_empty_bucket_takes_nothing() {
        let (limiter, clock) = limiter(10, 1);
        assert_eq!(limiter.empty_for("k"), None, "an unseen key is not empty");
        limiter.take("k").expect("the burst");
        assert_eq!(limiter.empty_for("k"), Some(Duration::from_millis(100)));
        clock.advance(Duration::from_millis(100));
        assert_eq!(limiter.empty_for("k"), None, "refilled after 100 ms");
        limiter.take("k").expect("refilled, not taken by looking");
    }

    #[test]
    fn the_clock_it_was_given_refills_it() {
        let (limiter, clock) = limiter(1, 1);
        limiter.take("k").expect("the burst");
        clock.advance(Duration::from_millis(999));
        assert!(limiter.take("k").is_err(), "a token takes a whole second");
        clock.advance(Duration::from_millis(1));
        assert_eq!(limiter.take("k"), Ok(()), "one token a second later");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_after(Duration::ZERO), 1);
        assert_eq!(retry_after(Duration::from_millis(100)), 1);
        assert_eq!(retry_after(Duration::from_millis(1000)), 1);
        assert_eq!(retry_after(Duration::from_millis(1001)), 2);
    }
}
