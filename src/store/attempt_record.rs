//! One attempt's outcome as the recorder writes it: the attempt, what
//! triggered it, and where its delivery goes next.

use crate::domain::outcome::ErrorCategory;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Scheduled,
    Manual,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Scheduled => "scheduled",
            Trigger::Manual => "manual",
        }
    }
}

/// Where a delivery goes after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextState {
    Delivered,
    RetryAt(i64),
    Dead,
    /// A failed manual attempt: the delivery keeps its state and schedule.
    Unchanged,
}

impl NextState {
    /// The retry this transition schedules, if any.
    pub fn retry_at(self) -> Option<i64> {
        match self {
            NextState::RetryAt(at) => Some(at),
            _ => None,
        }
    }

    /// The delivery's state after this transition, as the statements write
    /// it (`unchanged` leaves the row's own), and its next time: the retry's,
    /// or `now_ms`.
    pub fn written(self, now_ms: i64) -> (&'static str, i64) {
        match self {
            NextState::Delivered => ("delivered", now_ms),
            NextState::RetryAt(at) => ("failed", at),
            NextState::Dead => ("dead", now_ms),
            NextState::Unchanged => ("unchanged", now_ms),
        }
    }
}

/// One attempt and the delivery's transition, written together.
#[derive(Debug, Clone)]
pub struct AttemptRecord {
    /// Chosen once, before the record is first written: writing the same
    /// record again (a retried commit whose first try did land) adds nothing.
    pub id: String,
    pub delivery_id: String,
    pub endpoint_id: String,
    pub attempt_no: u32,
    pub trigger: Trigger,
    pub started_at: i64,
    pub latency_ms: u32,
    pub status_code: Option<u16>,
    pub error: Option<(ErrorCategory, String)>,
    pub excerpt: Option<String>,
    pub remote_addr: Option<String>,
    /// The endpoint's URL it was sent to, redacted (`domain::redact_url`).
    pub url: Option<String>,
    /// A 3xx answer's `Location`, redacted.
    pub location: Option<String>,
    pub next: NextState,
    /// The replay this attempt carried out, removed with the record.
    pub replay_id: Option<String>,
    /// The claim this attempt was made under (see `claims::Claimed`).
    pub claim_seq: i64,
    /// The delivery is one of an ordered endpoint's subjects.
    pub ordered: bool,
}
