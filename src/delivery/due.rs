//! What an endpoint actor knows about its next claim: the deliveries and
//! replays it holds (queued or in flight), which are never "due" to it since
//! it records their outcome and knows any retry time itself, and when work
//! it does not hold next becomes due. Pure bookkeeping; the actor acts on it.

use std::collections::HashSet;

use crate::store::claims::Claimed;

/// Nothing outside the actor is known to become due: only a wake (new
/// deliveries, due rows seen by the supervisor's poll) or the actor's own
/// retries change that.
pub const NEVER: i64 = i64::MAX;

#[derive(Debug, Default)]
pub struct Due {
    /// `None`: unknown, so claim now; `Some(NEVER)`: nothing known.
    next: Option<i64>,
    deliveries: HashSet<String>,
    replays: HashSet<String>,
}

/// What the actor should do between claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// Claim now.
    Claim,
    /// Set a timer for then.
    Until(i64),
    /// Nothing is known to become due.
    Nothing,
}

impl Due {
    pub fn hold(&mut self, c: &Claimed) {
        match &c.replay_id {
            Some(r) => self.replays.insert(r.clone()),
            None => self.deliveries.insert(c.id.clone()),
        };
    }

    pub fn unhold(&mut self, c: &Claimed) {
        match &c.replay_id {
            Some(r) => self.replays.remove(r),
            None => self.deliveries.remove(&c.id),
        };
    }

    /// The ids held: (deliveries, replays), for the next-due query.
    pub fn held(&self) -> (Vec<String>, Vec<String>) {
        (
            self.deliveries.iter().cloned().collect(),
            self.replays.iter().cloned().collect(),
        )
    }

    /// Forget what was known: claim at the next chance.
    pub fn unknown(&mut self) {
        self.next = None;
    }

    /// What a claim that was not full found: the earliest due time of work
    /// not held, if any.
    pub fn found(&mut self, earliest: Option<i64>) {
        self.next = Some(earliest.unwrap_or(NEVER));
    }

    /// Work becomes due at `at_ms` (a retry the actor scheduled, rows it
    /// handed back): the earlier of it and what was known.
    pub fn by(&mut self, at_ms: i64) {
        if let Some(t) = self.next {
            self.next = Some(t.min(at_ms));
        }
    }

    /// Like `by`, and known even when nothing was.
    pub fn at(&mut self, at_ms: i64) {
        self.next = Some(self.next.map_or(at_ms, |t| t.min(at_ms)));
    }

    pub fn rest(&self, now_ms: i64) -> Rest {
        match self.next {
            None => Rest::Claim,
            Some(NEVER) => Rest::Nothing,
            Some(t) if t <= now_ms => Rest::Claim,
            Some(t) => Rest::Until(t),
        }
    }

    /// The known next due time, for reports (`None` when unknown or nothing).
    pub fn next(&self) -> Option<i64> {
        self.next.filter(|t| *t != NEVER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(id: &str, replay: Option<&str>) -> Claimed {
        Claimed {
            id: id.into(),
            event_id: "evt".into(),
            attempt_count: 0,
            scheduled_attempts: 0,
            created_at: 0,
            window_from: 0,
            replay_id: replay.map(str::to_string),
            claim_seq: 1,
            lease_until: 0,
            schema_version: None,
            ordered: false,
        }
    }

    #[test]
    fn an_unknown_next_due_means_claim_now() {
        assert_eq!(Due::default().rest(0), Rest::Claim);
    }

    #[test]
    fn a_claim_that_found_nothing_rests_until_a_retry_of_its_own() {
        let mut due = Due::default();
        due.found(None);
        assert_eq!(due.rest(0), Rest::Nothing);
        due.by(5_000);
        assert_eq!(due.rest(0), Rest::Until(5_000));
        assert_eq!(due.rest(5_000), Rest::Claim);
    }

    #[test]
    fn an_own_retry_comes_before_a_later_due_delivery() {
        let mut due = Due::default();
        due.found(Some(300_000));
        due.by(5_000);
        assert_eq!(due.rest(1_000), Rest::Until(5_000));
        due.by(600_000);
        assert_eq!(
            due.rest(1_000),
            Rest::Until(5_000),
            "a later time changes nothing"
        );
    }

    #[test]
    fn a_retry_while_unknown_keeps_the_claim_now() {
        let mut due = Due::default();
        due.by(5_000);
        assert_eq!(due.rest(0), Rest::Claim);
        due.at(5_000);
        assert_eq!(
            due.rest(0),
            Rest::Until(5_000),
            "handed-back rows are known"
        );
    }

    #[test]
    fn held_deliveries_and_replays_are_kept_apart_until_let_go() {
        let mut due = Due::default();
        let scheduled = claimed("dlv_1", None);
        let manual = claimed("dlv_1", Some("rpl_1"));
        due.hold(&scheduled);
        due.hold(&manual);
        assert_eq!(due.held(), (vec!["dlv_1".into()], vec!["rpl_1".into()]));
        due.unhold(&manual);
        assert_eq!(due.held(), (vec!["dlv_1".into()], vec![]));
        due.unhold(&scheduled);
        assert_eq!(due.held(), (vec![], vec![]));
    }
}
