//! Per-key rate limits: a token bucket per API key, in memory (each instance
//! limits what it serves).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::domain::token_bucket::TokenBucket;

#[derive(Debug)]
pub struct RateLimiter {
    per_second: u32,
    burst: u32,
    started: Instant,
    buckets: Mutex<HashMap<String, TokenBucket>>,
}

impl RateLimiter {
    pub fn new(per_second: u32, burst: u32) -> RateLimiter {
        RateLimiter {
            per_second,
            burst,
            started: Instant::now(),
            buckets: Mutex::default(),
        }
    }

    /// How long until `key` has a token again, if it has none now; takes
    /// nothing (a check that costs no more than a map look-up).
    pub fn empty_for(&self, key: &str, now: Instant) -> Option<Duration> {
        let now_ms = self.ms(now);
        let buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let wait = buckets.get(key)?.clone().take(now_ms).err()?;
        Some(Duration::from_millis(wait.max(0) as u64))
    }

    fn ms(&self, now: Instant) -> i64 {
        i64::try_from(now.saturating_duration_since(self.started).as_millis()).unwrap_or(i64::MAX)
    }

    /// Takes a token for `key`, or says how long until one is there.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let now_ms = self.ms(now);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_limited_apart() {
        let limiter = RateLimiter::new(10, 2);
        let t0 = Instant::now();
        assert!(limiter.take("k", t0).is_ok() && limiter.take("k", t0).is_ok());
        let wait = limiter.take("k", t0).expect_err("over the burst");
        assert!(wait <= Duration::from_millis(100), "{wait:?}");
        assert!(limiter.take("other", t0).is_ok());
    }

    #[test]
    fn looking_at_an_empty_bucket_takes_nothing() {
        let limiter = RateLimiter::new(10, 1);
        let t0 = Instant::now();
        assert_eq!(
            limiter.empty_for("k", t0),
            None,
            "an unseen key is not empty"
        );
        limiter.take("k", t0).expect("the burst");
        assert!(limiter.empty_for("k", t0).is_some());
        assert!(
            limiter
                .empty_for("k", t0 + Duration::from_millis(100))
                .is_none()
        );
        limiter
            .take("k", t0 + Duration::from_millis(100))
            .expect("refilled, not taken by looking");
    }
}
