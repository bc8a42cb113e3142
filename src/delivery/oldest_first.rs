//! Oldest first within an endpoint: once deliveries have been handed back
//! to the database while due (a receiver slower than the work handed to
//! its actor), everything handed over afterwards is younger than them, so it
//! goes back as rows too and the actor claims in the database's order. A
//! claim that takes as many as it asked for turns the mode on too: what it
//! left due (rows written while the lease was unconfirmed, a backlog) is
//! older than anything handed over after it. Rows a group commit wrote for
//! the actor to claim (more than it hands over in memory, or fresh work
//! while the mode is on) count as a hand-back: they too are older than what
//! is handed over after them. The mode ends when a claim finds nothing more
//! due and no hand-back could have slipped past it. No claim runs while a
//! hand-back is being written: until its write ends those rows are still
//! claimed, and a claim would take younger rows first. Pure bookkeeping;
//! the endpoint actor acts on it.

/// What one claim saw of the hand-backs, to decide whether it may end the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimStart {
    handbacks: u64,
    pending: usize,
}

#[derive(Debug, Default)]
pub struct RowsFirst {
    on: bool,
    /// Hand-backs of due work started so far.
    handbacks: u64,
    /// Hand-backs whose writes have not finished.
    pending: usize,
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

    /// A commit wrote due rows for the actor to claim (it announces them
    /// after the commit). `seen`: the claim running now began after that
    /// commit finished, so it sees them and may end the mode; otherwise
    /// it may have missed them and may not.
    pub fn rows_added(&mut self, seen: bool) {
        self.on = true;
        if !seen {
            self.handbacks += 1;
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
    /// asked for, so more may be due, and the mode is on. Only a claim that
    /// took everything due, with no hand-back written during it or still
    /// unwritten when it started, shows no older row is left.
    pub fn claim_ended(&mut self, start: ClaimStart, full: bool) {
        if full {
            // What it left due is older than anything handed over now (rows
            // written while the lease was unconfirmed, a backlog).
            self.on = true;
        } else if start.pending == 0 && start.handbacks == self.handbacks {
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
        rows.claim_ended(start, false);
        assert!(!rows.on());
    }

    #[test]
    fn a_full_claim_turns_it_on() {
        let mut rows = RowsFirst::default();
        let start = rows.claim_starts();
        rows.claim_ended(start, true);
        assert!(
            rows.on(),
            "rows it left due are older than work handed over after it"
        );
        let start = rows.claim_starts();
        rows.claim_ended(start, false);
        assert!(!rows.on(), "the next claim took the rest");
    }

    #[test]
    fn a_full_claim_leaves_it_on() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        let start = rows.claim_starts();
        rows.claim_ended(start, true);
        assert!(rows.on(), "more rows may be due");
    }

    #[test]
    fn a_claim_started_before_a_hand_back_was_written_does_not_end_it() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        let start = rows.claim_starts();
        rows.handed_back();
        rows.claim_ended(start, false);
        assert!(rows.on(), "the claim may not have seen those rows");
    }

    #[test]
    fn rows_committed_for_the_actor_put_handovers_behind_them() {
        let mut rows = RowsFirst::default();
        rows.rows_added(false);
        assert!(rows.on());
        let start = rows.claim_starts();
        rows.claim_ended(start, false);
        assert!(!rows.on(), "a claim that began after them took them");
    }

    #[test]
    fn rows_committed_during_a_claim_that_could_not_see_them_keep_it_on() {
        let mut rows = RowsFirst::default();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        let start = rows.claim_starts();
        rows.rows_added(false);
        rows.claim_ended(start, false);
        assert!(rows.on(), "the claim began before their commit finished");
    }

    #[test]
    fn rows_committed_before_the_running_claim_began_let_it_end_it() {
        let mut rows = RowsFirst::default();
        let start = rows.claim_starts();
        rows.rows_added(true);
        assert!(rows.on());
        rows.claim_ended(start, false);
        assert!(!rows.on());
    }

    #[test]
    fn a_hand_back_during_the_claim_does_not_end_it() {
        let mut rows = RowsFirst::default();
        let start = rows.claim_starts();
        rows.handing_back(NOW, NOW);
        rows.handed_back();
        rows.claim_ended(start, false);
        assert!(rows.on());
    }
}
