//! Lease arithmetic for claimed deliveries. A claim is leased until a point in
//! time; after that, any claim (this actor's next one, or another instance's)
//! may take the delivery again. So a claimed delivery is sent only while its
//! attempt can finish, and its record be made durable, before the lease ends:
//! one started later could go out twice. Pure: the actor and the recorder ask,
//! and act at their edges.

use std::time::Duration;

/// The lease and the longest attempt, as the delivery settings give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseWindow {
    lease_ms: i64,
    request_timeout_ms: i64,
}

impl LeaseWindow {
    pub fn new(lease: Duration, request_timeout: Duration) -> Self {
        LeaseWindow {
            lease_ms: lease.as_millis() as i64,
            request_timeout_ms: request_timeout.as_millis() as i64,
        }
    }

    /// What an answered attempt's record needs of its lease: time for the
    /// recorder's next look, which extends it (`needs_extension`).
    fn record_margin_ms(&self) -> i64 {
        self.lease_ms / 4
    }

    /// Whether an attempt of a claim leased until `lease_until` may start at
    /// `now`: it must be answered (or time out) and reach the recorder with
    /// the record margin still left.
    pub fn may_start(&self, lease_until: i64, now: i64) -> bool {
        now + self.request_timeout_ms + self.record_margin_ms() <= lease_until
    }

    /// How long after a claim its deliveries may still start: how much work
    /// one claim should hold. At least a second, for settings that leave
    /// less (the claim is then small, not wrong).
    pub fn sendable_ms(&self) -> i64 {
        (self.lease_ms - self.request_timeout_ms - self.record_margin_ms()).max(1_000)
    }

    /// How often the recorder looks at the leases of records still waiting.
    pub fn check_every(&self) -> Duration {
        Duration::from_millis((self.lease_ms / 8).max(1) as u64)
    }

    /// Whether a waiting record's claim, leased until `lease_until`, must be
    /// extended now: it would end before two more looks.
    pub fn needs_extension(&self, lease_until: i64, now: i64) -> bool {
        lease_until - now <= self.lease_ms / 2
    }

    /// The new end of an extended lease.
    pub fn extended_until(&self, now: i64) -> i64 {
        now + self.lease_ms
    }
}

#[cfg(test)]
mod tests {
    use super::LeaseWindow;
    use std::time::Duration;

    fn window() -> LeaseWindow {
        // The defaults: a 60 s lease, a 10 s request timeout.
        LeaseWindow::new(Duration::from_secs(60), Duration::from_secs(10))
    }

    #[test]
    fn a_fresh_claim_may_be_sent() {
        assert!(window().may_start(60_000, 0));
    }

    #[test]
    fn a_claim_is_not_sent_when_its_attempt_could_outlive_the_lease() {
        // 10 s for the attempt and 15 s for the record leave 35 s to start.
        assert!(window().may_start(60_000, 35_000));
        assert!(!window().may_start(60_000, 35_001));
        assert!(!window().may_start(60_000, 60_000));
    }

    #[test]
    fn a_claim_holds_what_can_start_within_its_window() {
        assert_eq!(window().sendable_ms(), 35_000);
        let tight = LeaseWindow::new(Duration::from_secs(3), Duration::from_secs(2));
        assert_eq!(tight.sendable_ms(), 1_000, "never less than a second");
    }

    #[test]
    fn a_waiting_record_is_extended_before_its_lease_can_end() {
        let w = window();
        // Checked every 7.5 s; extended once half the lease or less is left,
        // so a record that arrives with the margin (15 s) left is extended
        // by the next check, with at least 7.5 s to spare.
        assert_eq!(w.check_every(), Duration::from_millis(7_500));
        assert!(!w.needs_extension(60_000, 29_999));
        assert!(w.needs_extension(60_000, 30_000));
        assert!(w.needs_extension(60_000, 45_000));
        assert_eq!(w.extended_until(45_000), 105_000);
    }
}
