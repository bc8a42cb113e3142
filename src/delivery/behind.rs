//! The endpoints whose actors claim in the database's order (oldest first,
//! after they handed due work back; see `oldest_first`). Fresh work for
//! them is created as rows, not handed over claimed: handed over, it would
//! only be handed back (a row written twice more, claimed and released,
//! for nothing). The committer reads it; the endpoint actors keep it.
//!
//! It also numbers the group commits as they finish (on SQLite before the
//! write turn is given up): a claim's statement that began after a commit
//! was numbered saw its rows, and a claim reads the count once it holds the
//! turn (see `oldest_first::RowsFirst::claim_ended`). An actor's claim also
//! clears its endpoint here, from inside that turn, when it found nothing
//! more due; the actor sets it again if its own mode stays on.

use std::{
    collections::HashSet,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

#[derive(Debug, Default)]
pub struct Behind {
    endpoints: Mutex<HashSet<String>>,
    commits: AtomicU64,
}

impl Behind {
    /// A group commit finished: its number (the first is 1).
    pub fn committed(&self) -> u64 {
        self.commits.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// How many group commits had finished by now: each of their rows is
    /// visible to a statement that begins after this is read.
    pub fn commits_finished(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }

    /// Records whether `endpoint`'s actor claims in the database's order.
    pub fn set(&self, endpoint: &str, rows_first: bool) {
        let mut set = self.endpoints.lock().unwrap_or_else(|e| e.into_inner());
        if rows_first {
            if !set.contains(endpoint) {
                set.insert(endpoint.to_string());
            }
        } else {
            set.remove(endpoint);
        }
    }

    /// How many endpoints' fresh work waits as rows.
    pub fn count(&self) -> usize {
        self.endpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// Whether fresh work for `endpoint` must wait as rows.
    pub fn contains(&self, endpoint: &str) -> bool {
        self.endpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(endpoint)
    }
}

#[cfg(test)]
mod tests {
    use super::Behind;

    #[test]
    fn an_endpoint_is_behind_from_its_hand_back_until_its_claims_catch_up() {
        let behind = Behind::default();
        assert!(!behind.contains("ep_1"));
        behind.set("ep_1", true);
        behind.set("ep_1", true);
        assert!(behind.contains("ep_1"));
        assert!(!behind.contains("ep_2"));
        assert_eq!(behind.count(), 1);
        behind.set("ep_1", false);
        assert!(!behind.contains("ep_1"));
    }

    #[test]
    fn commits_are_numbered_from_one_as_they_finish() {
        let behind = Behind::default();
        assert_eq!(behind.commits_finished(), 0);
        assert_eq!(behind.committed(), 1);
        assert_eq!(behind.committed(), 2);
        assert_eq!(behind.commits_finished(), 2);
    }
}
