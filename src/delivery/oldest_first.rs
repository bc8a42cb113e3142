//! Oldest first within an endpoint: once deliveries have been handed back
//! to the database while due (a receiver slower than the work handed to
//! its actor), everything handed over afterwards is younger than them, so it
//! goes back as rows too and the actor claims in the database's order. A
//! claim that takes as many as it asked for turns the mode on too: what it
//! left due (rows written while the lease was unconfirmed, a backlog) is
//! older than anything handed over after it. Rows a group commit wrote for
//! the actor to claim (more than it hands over in memory, or fresh work
//! while the mode is on) turn it on too, unless a claim that took everything
//! due has already seen them: group commits are numbered, and a claim knows
//! the last number visible to it. The mode ends when a claim finds nothing
//! more due, no hand-back could have slipped past it, and no rows were
//! announced from a commit it did not see. No claim runs while a hand-back
//! is being written: until its write ends those rows are still claimed, and
//! a claim would take younger rows first. Pure bookkeeping; the endpoint
//! actor acts on it.

/// What one claim saw of the hand-backs, to decide whether it may end the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimStart {
    handbacks: u64,
    pending: usize,
}

impl ClaimStart {
    /// No hand-back was being written when the claim started.
    pub fn nothing_unwritten(&self) -> bool {
        self.pending == 0
    }
}

#[derive(Debug, Default)]
pub struct RowsFirst {
    on: bool,
    /// Hand-backs of due work started so far.
    handbacks: u64,
    /// Hand-backs whose writes have not finished.
    pending: usize,
    /// The latest group commit announced to have written rows to claim.
    announced: u64,
    /// The latest group commit visible to a claim that took everything due:
    /// rows of commits up to it were taken.
    seen_through: u64,
}

impl RowsFirst {
    /// Whether work handed over now must go back as rows behind older ones.
    pub fn on(&self) -> bool {
        self.on
    }

    /// Deliveries are being handed back, due at `due_at` (now is `now`):
    /// due ones wait as rows from now on.
    pub fn handing_back(&mut self, due_at: i64, now: i64) {
        self.pending += 1;
        if due_at <= now {
            self.on = true;
            self.handbacks += 1;
        }
    }

    /// Group commit `commit` wrote due rows for the actor to claim (it
    /// announces them after the commit): unless a claim that took
    /// everything due saw that commit, they wait.
    pub fn rows_added(&mut self, commit: u64) {
        self.announced = self.announced.max(commit);
        if commit > self.seen_through {
            self.on = true;
        }
    }

    /// Whether a hand-back's write has not finished. A claim must wait for
    /// it: those rows are still claimed, so it would miss them and take
    /// younger rows first.
    pub fn writing(&self) -> bool {
        self.pending > 0
    }

    /// A hand-back's write finished.
    pub fn handed_back(&mut self) {
        self.pending = self.pending.saturating_sub(1);
    }

    /// A claim starts: what it must know when it ends.
    pub fn claim_starts(&self) -> ClaimStart {
        ClaimStart {
            handbacks: self.handbacks,
            pending: self.pending,
        }
    }

    /// A claim that started at `start` ended; `full`: it took as many as it
    /// asked for, so more may be due, and the mode is on; `seen`: the last
    /// group commit visible to it. Only a claim that took everything due,
    /// with no hand-back written during it or still unwritten when it
    /// started, and no rows announced from a commit after `seen`, shows no
    /// older row is left.
    pub fn claim_ended(&mut self, start: ClaimStart, full: bool, seen: u64) {
        if full {
            // What it left due is older than anything handed over now (rows
            // written while the lease was unconfirmed, a backlog).
            self.on = true;
            return;
        }
        self.seen_through = self.seen_through.max(seen);
        if start.pending == 0 && start.handbacks == self.handbacks && self.announced <= seen {
            self.on = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000;

    #[test]
    fn handing_back_due_work_puts_handovers_behind_it() {
        let mut rows = RowsFirst::default();
        assert!(!rows.on(), "nothing was handed back yet");
        rows.handing_back(NOW, NOW);
        assert!(rows.on());
    }

    #[test]
    fn work_handed_back_for_later_does_not() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW + 5_000, NOW);
        assert!(!rows.on(), "behind an open circuit, nothing older is due");
    }

    #[test]
    fn claims_wait_while_a_hand_back_is_written() {
        let mut rows = RowsFirst::default();
        assert!(!rows.writing());
        rows.handing_back(NOW, NOW);
        rows.handing_back(NOW + 5_000, NOW);
        assert!(rows.writing());
        rows.handed_back();
        assert!(rows.writing(), "one of the two is still being written");
        rows.handed_back();
        assert!(!rows.writing());
    }

    #[test]
    fn a_claim_that_took_everything_due_ends_it() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        let start = rows.claim_starts();
        rows.claim_ended(start, false, 0);
        assert!(!rows.on());
    }

    #[test]
    fn a_full_claim_turns_it_on() {
        let mut rows = RowsFirst::default();
        let start = rows.claim_starts();
        rows.claim_ended(start, true, 0);
        assert!(
            rows.on(),
            "rows it left due are older than work handed over after it"
        );
        let start = rows.claim_starts();
        rows.claim_ended(start, false, 0);
        assert!(!rows.on(), "the next claim took the rest");
    }

    #[test]
    fn a_full_claim_leaves_it_on() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        let start = rows.claim_starts();
        rows.claim_ended(start, true, 0);
        assert!(rows.on(), "more rows may be due");
    }

    #[test]
    fn a_claim_started_before_a_hand_back_was_written_does_not_end_it() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        let start = rows.claim_starts();
        rows.handed_back();
        rows.claim_ended(start, false, 0);
        assert!(rows.on(), "the claim may not have seen those rows");
    }

    #[test]
    fn rows_committed_for_the_actor_put_handovers_behind_them() {
        let mut rows = RowsFirst::default();
        rows.rows_added(1);
        assert!(rows.on());
        let start = rows.claim_starts();
        rows.claim_ended(start, false, 1);
        assert!(!rows.on(), "a claim that saw their commit took them");
    }

    #[test]
    fn rows_of_a_commit_the_claim_did_not_see_keep_it_on() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        let start = rows.claim_starts();
        rows.rows_added(2);
        rows.claim_ended(start, false, 1);
        assert!(rows.on(), "commit 2 finished after the claim looked");
        let start = rows.claim_starts();
        rows.claim_ended(start, false, 2);
        assert!(!rows.on(), "the next claim saw it");
    }

    #[test]
    fn rows_announced_late_from_a_commit_a_claim_saw_do_not_turn_it_on() {
        let mut rows = RowsFirst::default();
        rows.rows_added(3);
        let start = rows.claim_starts();
        rows.claim_ended(start, false, 4);
        assert!(!rows.on());
        rows.rows_added(4);
        assert!(!rows.on(), "the claim took them");
        rows.rows_added(5);
        assert!(rows.on(), "a commit after the claim looked");
    }

    #[test]
    fn a_hand_back_during_the_claim_does_not_end_it() {
        let mut rows = RowsFirst::default();
        let start = rows.claim_starts();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        rows.claim_ended(start, false, 0);
        assert!(rows.on());
    }
}
