//! Per-key rate limits: a token bucket per API key, in memory (each instance
//! limits what it serves).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Debug)]
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    pub fn new(per_second: u32, burst: u32) -> RateLimiter {
        RateLimiter {
            per_second: f64::from(per_second),
            burst: f64::from(burst),
            buckets: Mutex::default(),
        }
    }

    /// Takes a token for `key`, or says how long until one is there.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > 100_000 {
            // Forget idle keys rather than grow without bound.
            buckets.retain(|_, b| now.duration_since(b.at) < Duration::from_secs(60));
        }
        let b = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        b.tokens =
            (b.tokens + now.duration_since(b.at).as_secs_f64() * self.per_second).min(self.burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / self.per_second))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gets_its_burst_then_its_rate() {
        let limiter = RateLimiter::new(10, 20);
        let t0 = Instant::now();
        for _ in 0..20 {
            assert!(limiter.take("k", t0).is_ok());
        }
        let wait = limiter.take("k", t0).expect_err("over the burst");
        assert!(wait <= Duration::from_millis(100), "{wait:?}");
        assert!(
            limiter.take("k", t0 + Duration::from_millis(100)).is_ok(),
            "a token per 100 ms"
        );
        assert!(limiter.take("other", t0).is_ok(), "keys are limited apart");
    }
}
