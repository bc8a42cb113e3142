//! Time, injected: production reads the system clock, tests move a manual one,
//! so multi-day retry schedules run in seconds.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeZone, Utc};

pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    fn now(&self) -> DateTime<Utc>;
    /// Unix milliseconds, the unit every `*_at` column uses.
    fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
    }
}

pub type SharedClock = Arc<dyn Clock>;

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(
        clippy::disallowed_methods,
        reason = "the system clock is the one reader of wall time"
    )]
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    pub fn starting_at(t: DateTime<Utc>) -> ManualClock {
        ManualClock(Arc::new(Mutex::new(t)))
    }
    pub fn advance(&self, by: std::time::Duration) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *t += chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Unix milliseconds to a UTC time (out-of-range values clamp to the epoch).
pub fn from_ms(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}
