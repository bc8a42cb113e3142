//! A token bucket: at most `burst` at once, refilled at `per_second`. Pure;
//! the caller passes the time in milliseconds.

#[derive(Debug, Clone)]
pub struct TokenBucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    at_ms: i64,
}

impl TokenBucket {
    /// A full bucket at `now_ms`.
    pub fn new(per_second: u32, burst: u32, now_ms: i64) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            per_second: f64::from(per_second.max(1)),
            burst,
            tokens: burst,
            at_ms: now_ms,
        }
    }

    /// Takes a token, or says in how many milliseconds one will be there.
    pub fn take(&mut self, now_ms: i64) -> Result<(), i64> {
        let elapsed = (now_ms - self.at_ms).max(0) as f64 / 1000.0;
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.at_ms = now_ms.max(self.at_ms);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err((((1.0 - self.tokens) / self.per_second) * 1000.0).ceil() as i64)
        }
    }

    /// Whether the bucket has been idle long enough to be full again.
    pub fn is_full_at(&self, now_ms: i64) -> bool {
        self.tokens + (now_ms - self.at_ms).max(0) as f64 / 1000.0 * self.per_second >= self.burst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_burst_goes_at_once_then_the_rate_applies() {
        let mut b = TokenBucket::new(10, 3, 0);
        assert!((0..3).all(|_| b.take(0).is_ok()));
        assert_eq!(b.take(0), Err(100), "the next token in 100 ms");
        assert_eq!(b.take(100), Ok(()));
        assert!(b.take(150).is_err());
    }

    #[test]
    fn an_idle_bucket_refills_only_to_its_burst() {
        let mut b = TokenBucket::new(1, 2, 0);
        assert!(b.take(0).is_ok() && b.take(0).is_ok());
        assert!(b.is_full_at(10_000));
        assert!(b.take(10_000).is_ok() && b.take(10_000).is_ok());
        assert!(
            b.take(10_000).is_err(),
            "ten idle seconds do not make ten tokens"
        );
    }

    #[test]
    fn time_going_backwards_gives_nothing_extra() {
        let mut b = TokenBucket::new(1, 1, 1000);
        assert!(b.take(1000).is_ok());
        assert!(b.take(0).is_err());
    }
}
